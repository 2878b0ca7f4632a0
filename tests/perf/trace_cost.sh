#!/usr/bin/env bash
# The tps cost of the traced source (issue 48, item 5), on a scratch cluster it starts and stops:
# pgbench -S -M prepared -c 8 -j 2 windows with nothing beside them (twice: the A/A spread), with
# the bare 1 kHz wake-up loop (tests/perf/wakeup_floor.c: the floor of any once-a-tick sampler),
# with `pgwaitprof record --source memory --hz 1000`, and with `pgwaitprof record --source trace`
# (its on-CPU samples at 1 kHz, in the kernel). The configurations alternate within each round,
# each round starting one later; every window is printed, and the summary gives each
# configuration's median tps relative to "none" with the spread over the rounds, and the
# context switches per second (/proc/stat ctxt). The BPF programs' own time per event (run_time_ns
# / run_cnt, from bpftool) is measured in one more trace window after the rounds, with
# kernel.bpf_stats_enabled on: the statistics add to every event, so no timed window has them
# (--rounds 0: that window alone).
# Target of the issue: trace at most 1 % of tps (median of at least 10 rounds) and below memory at
# 1 kHz. A figure, not a test: run it as root on an otherwise idle machine.
#
# --interleaved SECONDS: instead of windows, one pgbench run of SECONDS per configuration and
# round, the configuration's process started and stopped every 6 s within it (the method of
# tests/perf/suite.sh part 1b, which pauses a sampler with SIGSTOP: that cannot stop programs in
# the kernel). The time it takes to start (until it samples: the BPF programs loaded and
# attached) and to stop counts for neither phase; each second of pgbench's progress wholly in a
# phase counts for it, and each running phase is compared with the stopped phases on either side
# (interleaved_cost.py). This VM's speed drifts over minutes by more than the cost; within one
# run, phases seconds apart see the same machine.
#
# --against BINARY (with --interleaved): another build's pgwaitprof traced too, as
# configuration trace_against, in the same rounds beside this build's trace_1khz and the A/A
# pair: two builds' costs side by side on the same machine in the same minutes (the floor and the
# memory source are left out then).
#
#   tests/perf/trace_cost.sh [--rounds N] [--window SECONDS] [--interleaved SECONDS]
#                            [--against BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
binary=$build/daemon/pgwaitprof
rounds=10 window=15 interleaved=0 against=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --window) window=$2; shift ;;
    --interleaved) interleaved=$2; shift ;;
    --against) against=$2; shift ;;
    *) echo "trace_cost.sh: error: unknown argument \"$1\"" >&2; exit 2 ;;
  esac
  shift
done
for program in "$binary" ${against:+"$against"}; do
  [ -x "$program" ] || { echo "trace_cost.sh: error: could not find \"$program\"" >&2; exit 1; }
done
if [ -n "$against" ] && [ "$interleaved" -eq 0 ]; then
  echo "trace_cost.sh: error: --against needs --interleaved" >&2
  exit 2
fi
[ "$(id -u)" -eq 0 ] || { echo "trace_cost.sh: error: the traced source needs root" >&2; exit 1; }

cluster=$(mktemp -d /tmp/pgwaitprof-tracecost-XXXXXX)
work=$(mktemp -d /tmp/pgwaitprof-tracecost-work-XXXXXX)
cc -O2 -o "$work/wakeup_floor" "$root/tests/perf/wakeup_floor.c"
eval "$("$root/deploy/scratch-cluster.sh" start "$cluster")"
helper_pid=""
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
  [ -n "$helper_pid" ] && kill "$helper_pid" 2>/dev/null && wait "$helper_pid" 2>/dev/null
  sysctl -q -w kernel.bpf_stats_enabled="$stats_before"
  "$root/deploy/scratch-cluster.sh" stop "$cluster"
  rm -rf "$work"
}
trap cleanup EXIT
pgbench -i -q -s 10 >"$work/init.log" 2>&1

configs=(none none_again floor_1khz memory_1khz trace_1khz)
results=$work/results.txt

# --interleaved: the configuration's process on and off within one pgbench run.
start_helper() {  # $1: configuration; returns once it runs (a source: once it samples)
  case $1 in
    none_again) sleep 3600 & helper_pid=$! ;;
    floor_1khz) "$work/wakeup_floor" 1000 3600 >"$work/floor.log" 2>&1 & helper_pid=$! ;;
    memory_1khz | trace_1khz | trace_against)
      local program=$binary source=${1%_1khz}
      [ "$1" = trace_against ] && program=$against source=trace
      "$program" record --no-daemon --data-dir "$work/data" --duration 3600 \
        --source "$source" --hz 1000 >"$work/record.log" 2>&1 &
      helper_pid=$!
      local waited=0
      until grep -q "sampling target" "$work/record.log" 2>/dev/null; do
        kill -0 "$helper_pid" 2>/dev/null || { cat "$work/record.log" >&2; exit 1; }
        sleep 0.05
        waited=$((waited + 1))
        [ $waited -lt 400 ] || { echo "trace_cost.sh: $1 did not start" >&2; exit 1; }
      done ;;
  esac
}
stop_helper() {
  kill -TERM "$helper_pid" 2>/dev/null || true  # (a background job ignores SIGINT)
  wait "$helper_pid" 2>/dev/null || true
  helper_pid=""
}
interleaved_once() {  # $1: round, $2: configuration
  local phases=$work/phases.txt progress=$work/progress.txt
  : >"$phases"
  pgbench -n -S -M prepared -c 8 -j 2 -T "$interleaved" -P 1 --progress-timestamp \
    >"$work/interleaved.out" 2>"$progress" &
  local bench=$!
  while kill -0 "$bench" 2>/dev/null; do
    echo "$(date +%s.%N) STOP" >>"$phases"
    sleep 6
    kill -0 "$bench" 2>/dev/null || break
    echo "$(date +%s.%N) SKIP" >>"$phases"
    start_helper "$2"
    echo "$(date +%s.%N) CONT" >>"$phases"
    sleep 6
    echo "$(date +%s.%N) SKIP" >>"$phases"
    stop_helper
  done
  wait "$bench" || true
  echo "$1 $2 $(python3 "$root/tests/perf/interleaved_cost.py" "$progress" "$phases")" |
    tee -a "$results"
}
if [ "$interleaved" -gt 0 ]; then
  echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r); pgbench -S -M prepared -c 8 -j 2 -T $interleaved -P 1, on and off every 6 s, $rounds rounds"
  interleaved_configs=(none_again floor_1khz memory_1khz trace_1khz)
  if [ -n "$against" ]; then
    echo "# trace_1khz: $binary; trace_against: $against"
    interleaved_configs=(none_again trace_1khz trace_against)
  fi
  for round in $(seq "$rounds"); do
    for offset in $(seq 0 $((${#interleaved_configs[@]} - 1))); do
      interleaved_once "$round" \
        "${interleaved_configs[$(((offset + round - 1) % ${#interleaved_configs[@]}))]}"
    done
  done
  python3 - "$results" <<'PY'
import json, statistics, sys
by = {}
for line in open(sys.argv[1]):
    round_, config, figures = (line.rstrip("\n").split(" ", 2) + [""])[:3]
    if not figures.startswith("{"):
        print(f"round {round_} {config}: no figures (too few phases)")
        continue
    by.setdefault(config, []).extend(json.loads(figures)["costs"])
print("configuration      pairs   tps cost: median (quartiles; 95 % interval of the median)")
for config, costs in by.items():
    costs.sort()
    q = statistics.quantiles(costs, n=4)
    # The median's distribution-free interval: order statistics of the binomial at 95 %.
    n = len(costs)
    low = max(0, int(n / 2 - 0.98 * n ** 0.5))
    high = min(n - 1, int(n / 2 + 0.98 * n ** 0.5))
    print(f"{config:18} {n:5}   {100 * statistics.median(costs):+5.1f} % "
          f"({100 * q[0]:+.1f} to {100 * q[2]:+.1f}; {100 * costs[low]:+.1f} to {100 * costs[high]:+.1f})")
PY
  exit 0
fi
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r); pgbench -S -M prepared -c 8 -j 2 -T $window, $rounds rounds"
context_switches() { awk '/^ctxt/ { print $2 }' /proc/stat; }
window_once() {  # $1: round, $2: configuration
  case $2 in
    floor_1khz)
      "$work/wakeup_floor" 1000 $((window + 4)) >"$work/floor.log" 2>&1 &
      helper_pid=$! ;;
    memory_1khz | trace_1khz)
      local source=${2%_1khz}
      [ "$1" = stats ] && sysctl -q -w kernel.bpf_stats_enabled=1
      "$binary" record --no-daemon --data-dir "$work/data" --duration $((window + 4)) \
        --source "$source" --hz 1000 >"$work/record.log" 2>&1 &
      helper_pid=$! ;;
  esac
  [ -n "$helper_pid" ] && sleep 2  # attached before the window starts
  local switches tps
  switches=$(context_switches)
  tps=$(pgbench -n -S -M prepared -c 8 -j 2 -T "$window" 2>&1 | awk '/^tps/ { print $3 }')
  switches=$((($(context_switches) - switches) / window))
  if [ "$1" = stats ]; then
    bpftool prog show | awk -v round="$1" -v ctxt="$switches" '
      / name (on_switch|on_wakeup|on_wakeup_new|on_sample|on_fork|on_exec) / {
        for (i = 1; i <= NF; i++) {
          if ($i == "name") name = $(i + 1)
          if ($i == "run_time_ns") ns = $(i + 1)
          if ($i == "run_cnt") cnt = $(i + 1)
        }
        if (cnt > 0) printf "# round %s bpf %s: %.0f ns per event over %d events (%d switches/s)\n", round, name, ns / cnt, cnt, ctxt
      }'
  fi
  if [ -n "$helper_pid" ]; then
    wait "$helper_pid" || { echo "$2 failed:" >&2; cat "$work/record.log" "$work/floor.log" >&2 2>/dev/null; exit 1; }
    helper_pid=""
  fi
  if [ "$1" = stats ]; then
    sysctl -q -w kernel.bpf_stats_enabled="$stats_before"
    return
  fi
  echo "$1 $2 $tps $switches" | tee -a "$results"
}
for round in $(seq "$rounds"); do
  for offset in $(seq 0 $((${#configs[@]} - 1))); do
    window_once "$round" "${configs[$(((offset + round - 1) % ${#configs[@]}))]}"
  done
done

window_once stats trace_1khz

# --rounds 0: the programs' time per event alone.
[ -s "$results" ] || exit 0
python3 - "$results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
by, switches = {}, {}
for round_, config, tps, ctxt in rows:
    by.setdefault(config, {})[int(round_)] = float(tps)
    switches.setdefault(config, []).append(int(ctxt))
base = by["none"]
print("configuration      median tps   vs none (median, min to max over rounds)   switches/s")
for config, values in by.items():
    ratios = [values[r] / base[r] - 1 for r in values if r in base]
    print(f"{config:18} {statistics.median(values.values()):10.1f}   "
          f"{100 * statistics.median(ratios):+6.1f} % ({100 * min(ratios):+.1f} to {100 * max(ratios):+.1f})"
          f"   {statistics.median(switches[config]):.0f}")
PY
