#!/usr/bin/env bash
# Where the traced source's cost goes, in CPU time rather than tps (issue 48, item 5): on a scratch
# cluster under pgbench -S -M prepared -c 8 -j 2, with `pgwaitprof record --source trace --hz HZ`
# sampling, over a 20 s window: each BPF program's events a second, its own time per event
# (kernel.bpf_stats_enabled: run_time_ns / run_cnt; the statistics add to every event) and its
# share of the CPUs; pgwaitprof's own process (utime + stime); its sessions on the server (their
# backends' utime + stime); the context switches a second. A CPU share is measured directly where
# the tps cost (tests/perf/trace_cost.sh) is a small difference of noisy rates. Not counted: each
# attached tracepoint's dispatch outside the programs. A figure, not a test: run it as root on an
# otherwise idle machine.
#
#   tests/perf/trace_cpu.sh [--hz HZ] [--rounds N]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
binary=$build/daemon/pgwaitprof
hz=1000 rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --hz) hz=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    *) echo "trace_cpu.sh: error: unknown argument \"$1\"" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$binary" ] || { echo "trace_cpu.sh: error: could not find \"$binary\"" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "trace_cpu.sh: error: the traced source needs root" >&2; exit 1; }
cluster=$(mktemp -d /tmp/pgwaitprof-tracecpu-XXXXXX)
work=$(mktemp -d /tmp/pgwaitprof-tracecpu-work-XXXXXX)
eval "$("$root/deploy/scratch-cluster.sh" start "$cluster")"
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
pids=()
cleanup() {
  for pid in ${pids[@]+"${pids[@]}"}; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  sysctl -q -w kernel.bpf_stats_enabled="$stats_before"
  "$root/deploy/scratch-cluster.sh" stop "$cluster"
  rm -rf "$work"
}
trap cleanup EXIT
pgbench -i -q -s 10 >"$work/init.log" 2>&1
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
sessions() {
  psql -XAtc "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'pgwaitprof%'"
}
programs() {
  bpftool prog show | awk '/ name (on_|dump_)/ {
    for (i = 1; i <= NF; i++) {
      if ($i == "name") n = $(i + 1)
      if ($i == "run_time_ns") t = $(i + 1)
      if ($i == "run_cnt") c = $(i + 1)
    }
    print n, t, c }'
}
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -r); pgbench -S -M prepared -c 8 -j 2, record --source trace --hz $hz, 20 s windows"
for round in $(seq "$rounds"); do
  pgbench -n -S -M prepared -c 8 -j 2 -T 40 >"$work/bench.log" 2>&1 &
  bench=$!
  pids=("$bench")
  sleep 3
  sysctl -q -w kernel.bpf_stats_enabled=1
  "$binary" record --no-daemon --data-dir "$work/data" --duration 60 --source trace --hz "$hz" \
    >"$work/record.log" 2>&1 &
  record=$!
  pids+=("$record")
  until grep -q "sampling target" "$work/record.log"; do
    kill -0 "$record" 2>/dev/null || { cat "$work/record.log" >&2; exit 1; }
    sleep 0.1
  done
  sleep 2
  own=$(sessions)
  before_programs=$(programs) before_process=$(ticks "$record") before_sessions=0
  for pid in $own; do before_sessions=$((before_sessions + $(ticks "$pid"))); done
  before_switches=$(awk '/^ctxt/ { print $2 }' /proc/stat) started=$(date +%s.%N)
  sleep 20
  after_programs=$(programs) after_process=$(ticks "$record") after_sessions=0
  for pid in $own; do after_sessions=$((after_sessions + $(ticks "$pid"))); done
  after_switches=$(awk '/^ctxt/ { print $2 }' /proc/stat) ended=$(date +%s.%N)
  sysctl -q -w kernel.bpf_stats_enabled="$stats_before"
  kill -TERM "$record"
  wait "$record" || true
  wait "$bench" || true
  python3 - "$round" "$before_programs" "$after_programs" "$before_process" "$after_process" \
    "$before_sessions" "$after_sessions" "$started" "$ended" "$before_switches" \
    "$after_switches" "$(getconf CLK_TCK)" "$(nproc)" "$(awk '/^tps/ { print $3 }' "$work/bench.log")" <<'PY'
import sys
(round_, before, after, p0, p1, s0, s1, t0, t1, c0, c1, tick, cpus, tps) = sys.argv[1:]
parse = lambda text: {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in text.splitlines()}
before, after = parse(before), parse(after)
window, tick, cpus = float(t1) - float(t0), int(tick), int(cpus)
share = lambda seconds: 100 * seconds / window / cpus
total = 0
for name, (ns, count) in sorted(after.items()):
    ns -= before.get(name, (0, 0))[0]
    count -= before.get(name, (0, 0))[1]
    total += ns
    if count:
        print(f"round {round_} {name:12} {count / window:8.0f}/s {ns / count:5.0f} ns {share(ns / 1e9):5.2f} % of the CPUs")
print(f"round {round_} programs {share(total / 1e9):.2f} %, pgwaitprof {share((int(p1) - int(p0)) / tick):.2f} %, "
      f"its sessions {share((int(s1) - int(s0)) / tick):.2f} % of the CPUs; "
      f"{(int(c1) - int(c0)) / window:.0f} switches/s; pgbench {float(tps):.0f} tps")
PY
done
