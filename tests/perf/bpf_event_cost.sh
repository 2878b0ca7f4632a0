#!/usr/bin/env bash
# The traced source's BPF programs' own time per event (issue 48, item 5), on a scratch cluster it
# starts and stops: `pgwaitprof record --source trace` (on-CPU samples at 1 kHz) under pgbench -S
# -M prepared -c 8 -j 2, with kernel.bpf_stats_enabled on for the whole script (restored on exit),
# and each program's run_time_ns / run_cnt over the window (from the start of the window to its
# end, so the load and the unload are not in it) with its events per second.
#
# The kernel times each run of a program on its own CPU: the figure is the program's cost, which
# the load of other processes on the machine changes far less than it changes tps (caches shared
# with them still count). With --against BINARY, a second build's pgwaitprof (its programs: the
# old object against the new) runs in every round too, the two alternating (each round starting
# with the other one), under the same load: the summary gives each build's median per program,
# the spread over the rounds, and the median of the per-round ratios against/this.
#
#   tests/perf/bpf_event_cost.sh [--rounds N] [--window SECONDS] [--against BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
binary=$build/daemon/pgwaitprof
against=""
rounds=5 window=10
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --window) window=$2; shift ;;
    --against) against=$2; shift ;;
    *) echo "bpf_event_cost.sh: error: unknown argument \"$1\"" >&2; exit 2 ;;
  esac
  shift
done
for program in "$binary" ${against:+"$against"}; do
  [ -x "$program" ] || { echo "bpf_event_cost.sh: error: could not find \"$program\"" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bpf_event_cost.sh: error: the traced source needs root" >&2; exit 1; }

cluster=$(mktemp -d /tmp/pgwaitprof-bpfcost-XXXXXX)
work=$(mktemp -d /tmp/pgwaitprof-bpfcost-work-XXXXXX)
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
record_pid=""
cleanup() {
  [ -n "$record_pid" ] && kill "$record_pid" 2>/dev/null && wait "$record_pid" 2>/dev/null
  sysctl -q -w kernel.bpf_stats_enabled="$stats_before"
  "$root/deploy/scratch-cluster.sh" stop "$cluster"
  rm -rf "$work"
}
trap cleanup EXIT
eval "$("$root/deploy/scratch-cluster.sh" start "$cluster")"
pgbench -i -q -s 10 >"$work/init.log" 2>&1
sysctl -q -w kernel.bpf_stats_enabled=1

# The ids of the BPF programs process $1 holds (its program and link descriptors' fdinfo).
program_ids() {
  grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -un
}
# "name run_time_ns run_cnt" of each of the programs whose ids are given.
program_stats() {
  local id
  for id in "$@"; do
    bpftool prog show id "$id" | awk '
      { for (i = 1; i <= NF; i++) {
          if ($i == "name") name = $(i + 1)
          if ($i == "run_time_ns") ns = $(i + 1)
          if ($i == "run_cnt") cnt = $(i + 1) } }
      END { if (name != "dump_tasks") print name, ns + 0, cnt + 0 }'
  done
}
results=$work/results.txt
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg);" \
  "pgbench -S -M prepared -c 8 -j 2 -T $window, $rounds rounds"
echo "# this: $binary${against:+; against: $against}"
window_once() {  # $1: round, $2: label, $3: the pgwaitprof binary
  "$3" record --no-daemon --data-dir "$work/data-$2" --duration $((window + 30)) \
    --source trace --hz 1000 >"$work/record.log" 2>&1 &
  record_pid=$!
  local ids=() waited
  # The programs loaded and attached (10 s at most): five (switch, fork, exec, sample, iterator),
  # seven in builds before 2026-12-07 (two wake-up programs).
  for waited in $(seq 100); do
    mapfile -t ids < <(program_ids "$record_pid")
    [ "${#ids[@]}" -ge 5 ] && break
    kill -0 "$record_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ "${#ids[@]}" -lt 5 ]; then
    echo "bpf_event_cost.sh: error: the traced source of \"$3\" did not load:" >&2
    cat "$work/record.log" >&2
    exit 1
  fi
  sleep 1  # the perf events' links too
  local before after switches
  before=$(program_stats "${ids[@]}")
  switches=$(awk '/^ctxt/ { print $2 }' /proc/stat)
  pgbench -n -S -M prepared -c 8 -j 2 -T "$window" >"$work/pgbench.log" 2>&1
  switches=$((($(awk '/^ctxt/ { print $2 }' /proc/stat) - switches) / window))
  after=$(program_stats "${ids[@]}")
  kill -INT "$record_pid" 2>/dev/null || true
  wait "$record_pid" 2>/dev/null || true
  record_pid=""
  local tps
  tps=$(awk '/^tps/ { print $3 }' "$work/pgbench.log")
  join <(echo "$before" | sort) <(echo "$after" | sort) | while read -r name ns0 cnt0 ns1 cnt1; do
    [ $((cnt1 - cnt0)) -gt 0 ] || continue
    echo "$1 $2 $name $(((ns1 - ns0) / (cnt1 - cnt0))) $(((cnt1 - cnt0) / window)) $switches $tps"
  done | tee -a "$results"
}
echo "# round build program ns_per_event events_per_s switches_per_s tps"
for round in $(seq "$rounds"); do
  if [ -z "$against" ]; then
    window_once "$round" this "$binary"
  elif [ $((round % 2)) -eq 1 ]; then
    window_once "$round" this "$binary"
    window_once "$round" against "$against"
  else
    window_once "$round" against "$against"
    window_once "$round" this "$binary"
  fi
done

python3 - "$results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
ns, rate = {}, {}
for round_, build, program, per_event, per_s, _, _ in rows:
    ns.setdefault((build, program), {})[int(round_)] = int(per_event)
    rate.setdefault((build, program), []).append(int(per_s))
print("build    program          ns/event median (min to max)   events/s median")
for (build, program), values in sorted(ns.items()):
    v = list(values.values())
    print(f"{build:8} {program:16} {statistics.median(v):8.0f} ({min(v)} to {max(v)})"
          f"{statistics.median(rate[(build, program)]):18.0f}")
# The programs' CPU time a second, all of them together (ns per event times events a second):
# a build without a program has its cost in no row of its own.
cpu = {}
for round_, build, program, per_event, per_s, _, _ in rows:
    cpu.setdefault(build, {}).setdefault(int(round_), 0.0)
    cpu[build][int(round_)] += int(per_event) * int(per_s) / 1e6
for build, per_round in sorted(cpu.items()):
    v = list(per_round.values())
    print(f"{build:8} all programs: {statistics.median(v):.1f} ms of CPU a second, median"
          f" ({min(v):.1f} to {max(v):.1f})")
if "against" in cpu and "this" in cpu:
    ratios = [cpu["against"][r] / cpu["this"][r] for r in cpu["against"] if cpu["this"].get(r)]
    print(f"all programs against/this, median of the rounds {statistics.median(ratios):.2f}"
          f" ({min(ratios):.2f} to {max(ratios):.2f})")
programs = sorted({program for build, program in ns if build == "against"})
if programs:
    print("program          against/this ns per event, median of the rounds (min to max)")
for program in programs:
    this, other = ns.get(("this", program), {}), ns[("against", program)]
    ratios = [other[r] / this[r] for r in other if this.get(r)]
    if ratios:
        print(f"{program:16} {statistics.median(ratios):6.2f} ({min(ratios):.2f} to {max(ratios):.2f})")
PY
