#!/usr/bin/env bash
# The tps cost of --cpu-profile (issue 43), on a scratch cluster it starts and stops: pgbench -S
# -M prepared -c 8 -j 2 windows with nothing beside them, with `pgwaitprof record` sampling waits
# (the memory source at 100 Hz, no CPU profile), and with the same record plus --cpu-profile at
# 99 Hz and at 999 Hz per CPU. The configurations alternate within each round, each round
# starting one later, and every window is printed; the summary gives each configuration's median
# tps relative to the windows without anything, with the spread over the rounds, and the A/A
# spread of "nothing" against itself. A figure, not a test: run it on an otherwise idle machine.
#
#   tests/perf/cpu_profile_cost.sh [--rounds N] [--window SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
binary=$build/daemon/pgwaitprof
rounds=5 window=15
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --window) window=$2; shift ;;
    *) echo "cpu_profile_cost.sh: error: unknown argument \"$1\"" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$binary" ] || { echo "cpu_profile_cost.sh: error: could not find \"$binary\"" >&2; exit 1; }

cluster=$(mktemp -d /tmp/pgwaitprof-cpucost-XXXXXX)
work=$(mktemp -d /tmp/pgwaitprof-cpucost-work-XXXXXX)
eval "$("$root/deploy/scratch-cluster.sh" start "$cluster")"
record_pid=""
cleanup() {
  [ -n "$record_pid" ] && kill "$record_pid" 2>/dev/null && wait "$record_pid" 2>/dev/null
  "$root/deploy/scratch-cluster.sh" stop "$cluster"
  rm -rf "$work"
}
trap cleanup EXIT
pgbench -i -q -s 10 >"$work/init.log" 2>&1

configs=(none none_again record_100hz record_cpu_99hz record_cpu_999hz)
results=$work/results.txt
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r); pgbench -S -M prepared -c 8 -j 2 -T $window, $rounds rounds"
window_once() {  # $1: round, $2: configuration
  local extra=()
  case $2 in
    record_100hz) extra=(--hz 100) ;;
    record_cpu_99hz) extra=(--hz 100 --cpu-profile=99) ;;
    record_cpu_999hz) extra=(--hz 100 --cpu-profile=999) ;;
  esac
  if [ ${#extra[@]} -gt 0 ]; then
    "$binary" record --no-daemon --data-dir "$work/data" --duration $((window + 4)) "${extra[@]}" \
      >"$work/record.log" 2>&1 &
    record_pid=$!
    sleep 2  # attached and sampling before the window starts
  fi
  local tps
  tps=$(pgbench -n -S -M prepared -c 8 -j 2 -T "$window" 2>&1 | awk '/^tps/ { print $3 }')
  if [ -n "$record_pid" ]; then
    wait "$record_pid" || { echo "record failed:" >&2; cat "$work/record.log" >&2; exit 1; }
    record_pid=""
  fi
  echo "$1 $2 $tps" | tee -a "$results"
}
for round in $(seq "$rounds"); do
  for offset in $(seq 0 $((${#configs[@]} - 1))); do
    window_once "$round" "${configs[$(((offset + round - 1) % ${#configs[@]}))]}"
  done
done

python3 - "$results" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
by = {}
for round_, config, tps in rows:
    by.setdefault(config, {})[int(round_)] = float(tps)
base = by["none"]
print("configuration      median tps   vs none (median, min to max over rounds)")
for config, values in by.items():
    ratios = [values[r] / base[r] - 1 for r in values if r in base]
    print(f"{config:18} {statistics.median(values.values()):10.1f}   "
          f"{100 * statistics.median(ratios):+6.1f} % ({100 * min(ratios):+.1f} to {100 * max(ratios):+.1f})")
EOF
