#!/usr/bin/env bash
# Calibration of `trend`'s change points on this host (issue 49 item 3): prints figures, not a
# timed test. On one scratch cluster it makes
#   an A/A history: RUNS (40) identical runs of pgbench with ARGS (--pgbench, default
#     "-c 2 -j 1 -T 3": TPC-B; the host's real noise in tps, p99 latency and the waits' AAS), and
#   a real step: 12 runs with synchronous_commit off and commit_delay 2000 (commit_siblings 0),
#     then 8 with synchronous_commit on (each commit waits for its flush and the delay), of the
#     same ARGS; of "-c 2 -j 1 -T 3" when ARGS are read-only (-S, -b select-only), whose runs
#     commit nothing for the setting to slow,
# then pgwaitprof_calibrate_changes prints, per series, the false alarms per 100 runs of the
# change points (--false-positive 0.01, --min-change 2 %: E-Divisive alone, and with the end test
# of model/end_change.h as trend has them, side by side) and of the old MAD rule
# (trend --rule mad) over the A/A history as the daemon would see it (analysed after every run)
# and over block-bootstrap histories resampled from it; the detection rate and delay of steps of
# 5, 10 and 20 % injected after a random run of resampled histories; the real step's; and the
# time to analyse a history of 10,000 runs; per series, the smallest step found within 3 runs
# in 90 % of the resampled histories. About 6 minutes on the shared 2-core machine.
#
#   tests/perf/calibrate_changes.sh [--keep] [--runs=N] [--data=DIR] [--pgbench "ARGS"]
#
# --pgbench "ARGS"  the workload of the histories (pgbench's options after -n; the scale is 2),
#                   e.g. --pgbench "-S -M prepared -c 2 -j 1 -T 5" for a less noisy one.
# --data=DIR  reuse the histories of an earlier --keep (DIR/aa, DIR/step) instead of running.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
BUILD_DIR=$build BUILD_TARGET="pgwaitprof pgwaitprof_calibrate_changes" "$root/deploy/build.sh" >/dev/null
keep=false
runs=40
data=""
default_workload="-c 2 -j 1 -T 3"
workload=$default_workload
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=true ;;
    --runs=*) runs=${1#--runs=} ;;
    --data=*) data=${1#--data=} ;;
    --pgbench=*) workload=${1#--pgbench=} ;;
    --pgbench)
      [ $# -ge 2 ] || { echo "calibrate_changes.sh: --pgbench needs its ARGS" >&2; exit 2; }
      workload=$2
      shift ;;
    *) echo "calibrate_changes.sh: unknown argument \"$1\"" >&2; exit 2 ;;
  esac
  shift
done
read -r -a workload_args <<<"$workload"
step_workload=$workload
case " $workload " in
  *" -S "* | *" --select-only "* | *"select-only"*) step_workload=$default_workload ;;
esac
read -r -a step_args <<<"$step_workload"
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
    local history=$1 label=$2
    shift 2
    "$program" run "$conninfo" --no-daemon --hz 100 --label "$label" --data-dir "$data/$history" \
      -- "$@" >/dev/null 2>&1 || echo "run $label failed" >&2
  }
  started=$(date +%s)
  for i in $(seq 1 "$runs"); do run aa "aa-$i" "${workload_args[@]}"; done
  echo "A/A history: $runs runs of pgbench $workload in $(($(date +%s) - started)) s"
  if [ "$step_workload" != "$workload" ]; then
    echo "real step: pgbench $step_workload (synchronous_commit does not slow a read-only workload)"
  fi
  psql -qc "ALTER SYSTEM SET commit_delay = 2000" -c "ALTER SYSTEM SET commit_siblings = 0" \
    -c "ALTER SYSTEM SET synchronous_commit = off" -c "SELECT pg_reload_conf()" >/dev/null
  for i in $(seq 1 12); do run step "off-$i" "${step_args[@]}"; done
  psql -qc "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
  for i in $(seq 1 8); do run step "on-$i" "${step_args[@]}"; done
fi
"$program" runs --data-dir "$data/aa" --format json >"$data/aa.json"
"$program" runs --data-dir "$data/step" --format json >"$data/step.json"
echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (other builders share it)"
"$build/tests/pgwaitprof_calibrate_changes" "$data/aa.json" "$data/step.json"
$keep && echo "kept: $data"
