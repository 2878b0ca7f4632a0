#!/usr/bin/env bash
# What pgbench's per-transaction log (-l, which pgwaitprof adds for latency percentiles) costs:
# pgbench -M prepared (TPC-B, or what the extra arguments say, e.g. -S for the select-only rate)
# with and without -l, alternating (A B A B) on one scratch cluster, prints each pair's tps and
# the ratio, then the median and the spread; then what reading the last pair's log costs
# pgwaitprof (pgwaitprof_txlog_read: the reader a run uses). Not a test: it prints figures. Run
# it on an otherwise idle machine (it builds its reader into BUILD_DIR, as build.sh does).
# Usage: tests/perf/txlog_cost.sh [PAIRS (default 3)] [SECONDS (default 10)] [CLIENTS (default 8)]
#          [PGBENCH ARGS...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pairs=${1:-3} seconds=${2:-10} clients=${3:-8}
shift $(($# < 3 ? $# : 3))
extra=("$@")
reader=${BUILD_DIR:-$root/build}/tests/pgwaitprof_txlog_read
# The reader is not in the default build: build it first.
BUILD_DIR=${BUILD_DIR:-$root/build} BUILD_TARGET=pgwaitprof_txlog_read "$root/deploy/build.sh"
cluster=$(mktemp -d /tmp/pgwaitprof-txlog-XXXXXX)
logs=$(mktemp -d /tmp/pgwaitprof-txlog-logs-XXXXXX)
trap '"$root/deploy/scratch-cluster.sh" stop "$cluster"; rm -rf "$logs"' EXIT
eval "$("$root/deploy/scratch-cluster.sh" start "$cluster")"
pgbench=/usr/lib/postgresql/15/bin/pgbench
tps() { "$pgbench" -n -M prepared -c "$clients" -j 2 -T "$seconds" ${extra[@]+"${extra[@]}"} "$@" 2>/dev/null |
  sed -n 's/^tps = \([0-9.]*\) .*/\1/p'; }
echo "pgbench -M prepared -c $clients -j 2 -T $seconds ${extra[*]:-}, without and with -l, $pairs pairs; $(nproc) cpus"
ratios=()
for pair in $(seq "$pairs"); do
  without=$(tps)
  with=$(cd "$logs" && tps -l --log-prefix="$logs/pgbench_log")
  if [ "$pair" -lt "$pairs" ]; then rm -f "$logs"/pgbench_log*; fi
  ratio=$(awk -v a="$with" -v b="$without" 'BEGIN { printf "%.3f", a / b }')
  ratios+=("$ratio")
  echo "pair $pair: without -l $without tps, with -l $with tps, ratio $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END {
  printf "median ratio (with/without) %.3f, min %.3f, max %.3f\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
if [ -x "$reader" ]; then
  "$reader" "$logs/pgbench_log"
else
  echo "txlog_cost: no $reader (build it with deploy/build.sh): the read cost is not measured" >&2
fi
