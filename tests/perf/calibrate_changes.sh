#!/usr/bin/env bash
# Calibration of `trend`'s change points on this host (issue 49 item 3): prints figures, not a
# timed test. On one scratch cluster it makes
#   an A/A history: RUNS (40) identical runs of `pgbench -c 2 -j 1 -T 3` (the host's real noise
#     in tps, p99 latency and the waits' AAS), and
#   a real step: 12 runs with synchronous_commit off and commit_delay 2000 (commit_siblings 0),
#     then 8 with synchronous_commit on (each commit waits for its flush and the delay),
# then pgwaitprof_calibrate_changes prints, per series, the false alarms per 100 runs of the
# change points (E-Divisive at --false-positive 0.01, --min-change 2 %) and of the old MAD rule
# (trend --rule mad) over the A/A history as the daemon would see it (analysed after every run)
# and over block-bootstrap histories resampled from it; the detection rate and delay of steps of
# 5, 10 and 20 % injected after a random run of resampled histories; the real step's; and the
# time to analyse a history of 10,000 runs. About 5 minutes on the shared 2-core machine.
#
#   tests/perf/calibrate_changes.sh [--keep] [--runs=N] [--data=DIR]
#
# --data=DIR  reuse the histories of an earlier --keep (DIR/aa, DIR/step) instead of running.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
BUILD_DIR=$build BUILD_TARGET="pgwaitprof pgwaitprof_calibrate_changes" "$root/deploy/build.sh" >/dev/null
keep=false
runs=40
data=""
for argument in "$@"; do
  case $argument in
    --keep) keep=true ;;
    --runs=*) runs=${argument#--runs=} ;;
    --data=*) data=${argument#--data=} ;;
    *) echo "calibrate_changes.sh: unknown argument \"$argument\"" >&2; exit 2 ;;
  esac
done
program=$build/daemon/pgwaitprof
if [ -z "$data" ]; then
  data=$(mktemp -d /tmp/pgwaitprof-changes-XXXXXX)
  chmod 755 "$data" # the cluster inside it runs as postgres
  cluster=$data/cluster
  "$root/deploy/scratch-cluster.sh" start "$cluster" >"$data/cluster.env"
  trap '"$root/deploy/scratch-cluster.sh" stop "$cluster"; $keep || rm -rf "$data"' EXIT
  eval "$(cat "$data/cluster.env")"
  conninfo="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
  pgbench -i -q -s 2 >/dev/null 2>&1
  run() {
    "$program" run "$conninfo" --no-daemon --hz 100 --label "$2" --data-dir "$data/$1" -- \
      -c 2 -j 1 -T 3 >/dev/null 2>&1 || echo "run $2 failed" >&2
  }
  started=$(date +%s)
  for i in $(seq 1 "$runs"); do run aa "aa-$i"; done
  echo "A/A history: $runs runs in $(($(date +%s) - started)) s"
  psql -qc "ALTER SYSTEM SET commit_delay = 2000" -c "ALTER SYSTEM SET commit_siblings = 0" \
    -c "ALTER SYSTEM SET synchronous_commit = off" -c "SELECT pg_reload_conf()" >/dev/null
  for i in $(seq 1 12); do run step "off-$i"; done
  psql -qc "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
  for i in $(seq 1 8); do run step "on-$i"; done
fi
"$program" runs --data-dir "$data/aa" --format json >"$data/aa.json"
"$program" runs --data-dir "$data/step" --format json >"$data/step.json"
echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (other builders share it)"
"$build/tests/pgwaitprof_calibrate_changes" "$data/aa.json" "$data/step.json"
$keep && echo "kept: $data"
