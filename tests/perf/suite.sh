#!/usr/bin/env bash
# The sampler's performance suite (issue 10), in one invocation on a scratch cluster it starts
# and stops: the tps cost of each sampler beside none (pgwaitprof at 100 Hz and 1 kHz with the
# rates they achieved, a raw pgbench loop of pgwaitprof's query at 1000/s, pg_wait_sampling at
# 10 ms, psql \watch 0.01), the rate under that load,
# the rate and client and server cost per snapshot at 10, 100, 500 and 1,000 backends beside a
# raw pgbench loop of the same query, the accuracy against pg_wait_sampling on tpcb and
# update-5rows, RSS over 10 minutes at 1 kHz, and /metrics scrape time with every wait event
# present; the memory source beside activity (tps cost at 100 Hz, 1 kHz and 10 kHz, ticks
# taken, client and server CPU per snapshot with many backends); and (part 1b) each pausable
# sampler's tps cost within one pgbench run, stopped and continued every few seconds, beside the
# same pauses of a process that does nothing. Configurations alternate within each round; every
# figure is printed raw and the medians replace the "## The latest suite run" section of
# docs/performance.md (or --out FILE).
#
#   tests/perf/suite.sh [--quick] [--select-only] [--out FILE] [--parts LIST] [--configs "LIST"]
#                       [--backends "N..."] [--interleave SECONDS]
#
# --quick shortens every part (one round, 3 s windows, 20 s of RSS) to check the suite itself.
# --parts runs some parts only (overhead,interleaved,backends,accuracy,rss,scrape; default all),
# --configs the samplers of parts 1 and 1b (default all; 1b takes those it can pause),
# --backends the counts of part 3 (default 10 100 500 1000), --interleave the length of part
# 1b's pgbench runs (default 120 s); --select-only runs pgbench's
# select-only script (-S) instead of tpcb in parts 1 and 1b: more backends without a wait event,
# so more of the kernel view's state reads. With any of them, write to another file with --out.
# Needs a build (BUILD_DIR, default ./build) and deploy/install-deps.sh. Run it on an
# otherwise idle machine: it measures the machine as much as the sampler. A figure, not a test.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
# The benchmark programs are not in the default build: build them (and the program) first.
BUILD_DIR=$build BUILD_TARGET="pgwaitprof pgwaitprof_bench pgwaitprof_scrape_cost" \
  "$root/deploy/build.sh"
# The floor: a C loop that only wakes (tests/perf/wakeup_floor.c), nothing of pgwaitprof's.
floor=$build/tests/wakeup_floor
cc -O2 -o "$floor" "$root/tests/perf/wakeup_floor.c"
out=$root/docs/performance.md
rounds=3 window=10 pairs=3 accuracy_runs=3 accuracy_window=20 rss_seconds=600
interleave_seconds=120 phase=4 interleave_rounds=2
backend_counts="10 100 500 1000"
script=()  # pgbench's built-in tpcb
parts=overhead,interleaved,backends,accuracy,rss,scrape
configs=(none_again pgwaitprof_100hz pgwaitprof_1khz raw_loop_1khz pg_wait_sampling_10ms psql_watch
  memory_100hz memory_1khz memory_10khz wakeups_1khz wakeups_10khz)
command="tests/perf/suite.sh $*"
while [ $# -gt 0 ]; do
  case $1 in
    --quick) rounds=1 window=3 pairs=1 accuracy_runs=1 accuracy_window=5 rss_seconds=20
      interleave_seconds=40 interleave_rounds=1
      backend_counts="10 100" ;;
    --select-only) script=(-S) ;;
    --interleave) interleave_seconds=$2; shift ;;
    --out) out=$2; shift ;;
    --parts) parts=$2; shift ;;
    --configs) read -r -a configs <<<"$2"; shift ;;
    --backends) backend_counts=$2; shift ;;
    *) echo "suite.sh: error: unknown argument \"$1\"" >&2; exit 2 ;;
  esac
  shift
done
for binary in "$build/daemon/pgwaitprof" "$build/tests/pgwaitprof_bench" \
  "$build/tests/pgwaitprof_scrape_cost"; do
  if [ ! -x "$binary" ]; then
    echo "suite.sh: error: could not find executable \"$binary\"" >&2
    echo "suite.sh: hint: Build it first with deploy/build.sh (BUILD_DIR=$build)." >&2
    exit 1
  fi
done

part() { [[ ",$parts," == *",$1,"* ]]; }

cluster=$(mktemp -d /tmp/pgwaitprof-suite-cluster-XXXXXX)
eval "$(SCRATCH_MAX_CONNECTIONS=1100 "$root/deploy/scratch-cluster.sh" start "$cluster")"
. "$root/tests/perf/daemon_lib.sh"
sleepers_pid=""
suite_cleanup() {
  [ -n "$sleepers_pid" ] && kill "$sleepers_pid" 2>/dev/null || true
  cleanup
  "$root/deploy/scratch-cluster.sh" stop "$cluster"
}
trap suite_cleanup EXIT
results=$work/results.jsonl
: >"$results"
record() { echo "$1" >>"$results"; echo "  $1"; }
psql_at() { psql -X -At -c "$1"; }
stop_daemon() {
  kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=""
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }  # user + system, in clock ticks
# Every server process's CPU (the postmaster and its children), in clock ticks.
server_ticks() {
  local postmaster
  postmaster=$(head -1 "$cluster/data/postmaster.pid")
  { cat "/proc/$postmaster/stat"; for child in $(pgrep -P "$postmaster"); do
      cat "/proc/$child/stat" 2>/dev/null || true; done; } |
    awk '{ sub(/^.*\) /, ""); total += $12 + $13 } END { print total }'
}
clk_tck=$(getconf CLK_TCK)

echo "suite.sh: scratch cluster at $PGHOST port $PGPORT; pgbench tables at scale 10"
pgbench -i -q -s 10 >"$work/init.log" 2>&1
"$build/tests/pgwaitprof_bench" --print-snapshot-query "$(psql_at 'SHOW server_version_num')" \
  >"$work/snapshot.sql"
record "$(printf '{"part":"machine","cpus":%s,"cpu":"%s","kernel":"%s","server":"%s","date":"%s","command":"%s"}' \
  "$(nproc)" "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" "$(uname -r)" \
  "$(psql_at 'SHOW server_version')" "$(date -u +%Y-%m-%dT%H:%MZ)" "$command")"

# pg_wait_sampling is preloaded in the scratch cluster; its collector sleeps for an hour between
# samples except in the configurations that use it.
wait_sampling_period() {  # $1: milliseconds
  psql -X -q -c "ALTER SYSTEM SET pg_wait_sampling.profile_period = $1" \
    -c "ALTER SYSTEM SET pg_wait_sampling.history_period = $1" -c "SELECT pg_reload_conf()" >/dev/null
  sleep 0.5
}
wait_sampling_period 3600000

# --- 1. and 3.: tps cost of each sampler, and the rate pgwaitprof achieves under that load ---
# Each sampler's window follows one without any sampler, and its tps is taken relative to that
# one; pgbench vacuums its tables before every window (no -n), so the tables do not bloat from
# one window to the next and later windows are not slower for that alone.
echo "# 1. tps cost: pgbench tpcb -M prepared -c 8 -j 2 -T $window, $rounds rounds of pairs"
# The samplers that SIGSTOP pauses (parts 1 and 1b): the daemon (daemon_pid), or a loop that
# only wakes as the memory source's reader does, for $2 s (watch_pid, the caller's local).
# Returns 1 for any other configuration.
start_pausable() {  # $1: configuration, $2: seconds
  case $1 in
    pgwaitprof_100hz) start_daemon 100 ;;
    pgwaitprof_1khz) start_daemon 1000 ;;
    memory_100hz) start_daemon 100 memory ;;
    memory_1khz) start_daemon 1000 memory ;;
    memory_10khz) start_daemon 10000 memory ;;
    wakeups_1khz | wakeups_10khz)
      local hz=${1#wakeups_}  # 1khz, 10khz
      "$floor" "${hz%khz}000" "$2" >"$work/wakeups.out" 2>&1 & watch_pid=$! ;;
    *) return 1 ;;
  esac
}
overhead_once() {  # $1: round, $2: configuration
  local watch_pid="" s0=0 m0=0
  start_pausable "$2" $((window + 3)) || case $2 in
    pg_wait_sampling_10ms) wait_sampling_period 10 ;;
    raw_loop_1khz) pgbench -n -M prepared -c 1 -R 1000 -T $((window + 3)) -f "$work/snapshot.sql" \
      >"$work/raw_loop.out" 2>&1 & watch_pid=$! ;;
    psql_watch) printf 'SELECT statement_timestamp(), pid, state, wait_event_type, wait_event FROM pg_stat_activity\n\\watch 0.01\n' |
      psql -X -At -o "$work/watch.out" >/dev/null 2>&1 & watch_pid=$! ;;
  esac
  # Snapshot queries answered within 1 ms and within 2.5 ms (histogram buckets), and all.
  local durations='pgwaitprof_snapshot_duration_seconds'
  local q0=0 q1=0 q2=0
  if [ -n "$daemon_pid" ]; then
    s0=$(metric 'pgwaitprof_snapshots_total{target="local"}')
    m0=$(metric 'pgwaitprof_missed_ticks_total{target="local"}')
    q0=$(metric "${durations}_count{target=\"local\"}")
    q1=$(metric "${durations}_bucket{target=\"local\",le=\"0.001\"}")
    q2=$(metric "${durations}_bucket{target=\"local\",le=\"0.0025\"}")
  fi
  local tps
  tps=$(pgbench ${script[@]+"${script[@]}"} -M prepared -c 8 -j 2 -T "$window" 2>&1 | awk '/^tps/ { print $3 }')
  local rate=null taken=null within_1ms=null within_2_5ms=null
  if [ -n "$daemon_pid" ]; then
    local s1 m1 r0 r1 r2
    s1=$(metric 'pgwaitprof_snapshots_total{target="local"}')
    m1=$(metric 'pgwaitprof_missed_ticks_total{target="local"}')
    r0=$(metric "${durations}_count{target=\"local\"}")
    r1=$(metric "${durations}_bucket{target=\"local\",le=\"0.001\"}")
    r2=$(metric "${durations}_bucket{target=\"local\",le=\"0.0025\"}")
    rate=$(python3 -c "print(round(($s1 - $s0) / $window, 1))")
    taken=$(python3 -c "print(round(($s1 - $s0) / max(1, ($s1 - $s0) + ($m1 - $m0)), 4))")
    within_1ms=$(python3 -c "print(round(($r1 - $q1) / max(1, $r0 - $q0), 4))")
    within_2_5ms=$(python3 -c "print(round(($r2 - $q2) / max(1, $r0 - $q0), 4))")
    stop_daemon
  fi
  if [[ $2 == wakeups_* ]]; then
    wait "$watch_pid" 2>/dev/null || true
  elif [ "$2" = raw_loop_1khz ]; then
    wait "$watch_pid" 2>/dev/null || true
    rate=$(awk '/^tps/ { printf "%.1f", $3 }' "$work/raw_loop.out")
  elif [ -n "$watch_pid" ]; then
    kill "$watch_pid" 2>/dev/null || true; wait "$watch_pid" 2>/dev/null || true
    rate=$(python3 -c "print(round(len({l.split('|')[0] for l in open('$work/watch.out') if '|' in l}) / $window, 1))")
  fi
  [ "$2" = pg_wait_sampling_10ms ] && wait_sampling_period 3600000
  record "{\"part\":\"overhead\",\"round\":$1,\"config\":\"$2\",\"tps\":$tps,\"rate_hz\":$rate,\"ticks_taken\":$taken,\"queries_within_1ms\":$within_1ms,\"queries_within_2_5ms\":$within_2_5ms}"
}
for round in $(seq "$rounds"); do
  part overhead || break
  # Each round starts one sampler later, so no sampler always comes first.
  for offset in $(seq 0 $((${#configs[@]} - 1))); do
    overhead_once "$round" none
    overhead_once "$round" "${configs[$(((offset + round - 1) % ${#configs[@]}))]}"
  done
done

# --- 1b.: the same costs, with the sampler paused and resumed within one pgbench run ---
# This VM's speed drifts by more than a sampler costs over the minutes that separate windows
# take (two windows without any sampler differed by up to 20 %). Here one pgbench run per sampler
# has the sampler stopped (SIGSTOP: no CPU, no wake-ups, no queries) and continued every $phase s;
# each second of pgbench's progress that lies wholly in one phase counts for that phase, and each
# running phase is compared with the paused phases on either side (interleaved_cost.py). The
# "no sampler" row pauses a process that does nothing: the noise of the method itself.
echo "# 1b. tps cost, sampler paused and resumed every $phase s in one pgbench run of $interleave_seconds s"
interleaved_once() {  # $1: round, $2: configuration
  local paused="" watch_pid=""
  if [ "$2" = none_again ]; then
    sleep $((interleave_seconds + 30)) & watch_pid=$!
  elif ! start_pausable "$2" $((interleave_seconds + 30)); then
    return 0  # in-server or rate-scheduled: a pause would not stop it, or would burst
  fi
  paused=${daemon_pid:-$watch_pid}
  psql -X -q -c "VACUUM pgbench_branches" -c "VACUUM pgbench_tellers" \
    -c "TRUNCATE pgbench_history" >/dev/null
  : >"$work/phases.txt"
  pgbench ${script[@]+"${script[@]}"} -n -M prepared -c 8 -j 2 -T "$interleave_seconds" -P 1 \
    --progress-timestamp \
    >"$work/interleaved.out" 2>"$work/progress.txt" &
  local bench=$!
  local state=STOP
  while kill -0 "$bench" 2>/dev/null; do
    kill -"$state" "$paused"
    echo "$(date +%s.%N) $state" >>"$work/phases.txt"
    [ "$state" = STOP ] && state=CONT || state=STOP
    sleep "$phase"
  done
  wait "$bench" || true
  kill -CONT "$paused" 2>/dev/null || true
  if [ -n "$daemon_pid" ]; then
    stop_daemon
  else
    kill "$watch_pid" 2>/dev/null || true; wait "$watch_pid" 2>/dev/null || true
  fi
  record "$(python3 "$root/tests/perf/interleaved_cost.py" "$work/progress.txt" "$work/phases.txt" \
    | sed "s/^{/{\"part\":\"interleaved\",\"round\":$1,\"config\":\"$2\",/")"
}
for round in $(seq "$interleave_rounds"); do
  part interleaved || break
  for offset in $(seq 0 $((${#configs[@]} - 1))); do
    interleaved_once "$round" "${configs[$(((offset + round - 1) % ${#configs[@]}))]}"
  done
done

# --- 2.: rate and cost per snapshot with many backends, beside a raw loop of the same query ---
echo "# 2. rate at hz=10000 with N backends in pg_sleep, $pairs pairs of $window s"
echo "SELECT pg_sleep(3600);" >"$work/sleep.sql"
start_sleepers() {  # $1: count
  pgbench -n -c "$1" -j 2 -T 36000 -f "$work/sleep.sql" >"$work/sleepers.log" 2>&1 &
  sleepers_pid=$!
  for _ in $(seq 600); do
    [ "$(psql_at "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(3600);'")" -ge "$1" ] && return 0
    sleep 0.2
  done
  echo "suite.sh: error: could not start $1 sleeping backends" >&2
  cat "$work/sleepers.log" >&2
  exit 1
}
stop_sleepers() {
  kill "$sleepers_pid" 2>/dev/null || true; wait "$sleepers_pid" 2>/dev/null || true
  sleepers_pid=""
  # pg_sleep does not notice its client has gone.
  psql_at "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(3600);'" >/dev/null
  while [ "$(psql_at "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(3600);'")" -gt 0 ]; do sleep 0.2; done
}
# The floor under any sampler that wakes once a tick: a loop that only sleeps to each tick as
# the memory source's reader does, its CPU per tick.
if part backends; then
  for hz in 1000 10000; do
    record "$("$floor" "$hz" "$window" | sed 's/^{/{"part":"timer_floor",/')"
  done
fi
for count in $backend_counts; do
  part backends || break
  start_sleepers "$count"
  rows=$(psql_at "SELECT count(*) - 1 FROM pg_stat_activity")
  for pair in $(seq "$pairs"); do
    raw=$(pgbench -n -M prepared -c 1 -T "$window" -f "$work/snapshot.sql" 2>&1 | awk '/^tps/ { print $3 }')
    start_daemon 10000
    backend_pid=$(psql_at "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgwaitprof' AND pid <> pg_backend_pid() LIMIT 1")
    s0=$(metric 'pgwaitprof_snapshots_total{target="local"}')
    c0=$(cpu_ticks "$daemon_pid") b0=$(cpu_ticks "$backend_pid")
    sleep "$window"
    s1=$(metric 'pgwaitprof_snapshots_total{target="local"}')
    c1=$(cpu_ticks "$daemon_pid") b1=$(cpu_ticks "$backend_pid")
    stop_daemon
    # The memory source beside it: its rate and client CPU, and the server's CPU with it and in
    # a window without any sampler (the difference is what the source costs the server).
    start_daemon 10000 memory
    # Past the start (the names looked up, the first batches handed over): counted from at once,
    # the 1,000-backend rate came out above the 10 kHz cap (11,222-11,410/s on 2026-12-04).
    sleep 2
    ms0=$(metric 'pgwaitprof_snapshots_total{target="local"}')
    mc0=$(cpu_ticks "$daemon_pid") v0=$(server_ticks)
    sleep "$window"
    ms1=$(metric 'pgwaitprof_snapshots_total{target="local"}')
    mc1=$(cpu_ticks "$daemon_pid") v1=$(server_ticks)
    stop_daemon
    w0=$(server_ticks); sleep "$window"; w1=$(server_ticks)
    record "$(python3 -c "
snaps = $ms1 - $ms0
print('{\"part\":\"memory_backends\",\"backends\":$count,\"rows\":$rows,\"pair\":$pair,\"rate_hz\":%.1f,\"client_us_per_snapshot\":%.2f,\"server_cpu_ms_per_s\":%.2f,\"server_cpu_ms_per_s_without\":%.2f}' % (
    snaps / $window, ($mc1 - $mc0) / $clk_tck * 1e6 / max(1, snaps),
    ($v1 - $v0) / $clk_tck * 1e3 / $window, ($w1 - $w0) / $clk_tck * 1e3 / $window))")"
    record "$(python3 -c "
snaps = $s1 - $s0
rate = snaps / $window
ceiling = min($raw, 10000)
client_us = ($c1 - $c0) / $clk_tck * 1e6 / max(1, snaps)
server_us = ($b1 - $b0) / $clk_tck * 1e6 / max(1, snaps)
print('{\"part\":\"backends\",\"backends\":$count,\"rows\":$rows,\"pair\":$pair,\"raw_hz\":%.1f,\"rate_hz\":%.1f,\"ratio\":%.3f,\"client_us_per_snapshot\":%.1f,\"client_us_per_row\":%.3f,\"server_us_per_snapshot\":%.1f}' % (
    $raw, rate, rate / ceiling, client_us, client_us / max(1, $rows), server_us))")"
  done
  stop_sleepers
done

# --- 4.: accuracy against pg_wait_sampling on the same window ---
if part accuracy; then
echo "# 4. accuracy: activity at 100 Hz vs pg_wait_sampling at 10 ms, 16 clients, $accuracy_window s"
wait_sampling_period 10
cat >"$work/accuracy.yaml" <<YAML
listen: 127.0.0.1:$port
data_dir: $work/accuracy-data
targets:
  - {name: activity, dsn: "$dsn", hz: 100, source: activity}
  - {name: wait_sampling, dsn: "$dsn", source: pg_wait_sampling, pg_wait_sampling_poll_ms: 1000}
YAML
"$binary" daemon -c "$work/accuracy.yaml" >"$work/accuracy.log" 2>&1 &
daemon_pid=$!
sleep 3
for run in $(seq "$accuracy_runs"); do
  for workload in tpcb update-5rows; do
    curl -s "http://127.0.0.1:$port/metrics" >"$work/before.txt"
    if [ "$workload" = tpcb ]; then
      pgbench -n -M prepared -c 16 -j 2 -T "$accuracy_window" >"$work/load.txt" 2>&1
    else
      pgbench -n -M prepared -c 16 -j 2 -T "$accuracy_window" -s 10 \
        -f "$root/loadgen/workloads/update_5rows.pgbench" >"$work/load.txt" 2>&1
    fi
    sleep 2.5  # the extension's profile is read once a second
    curl -s "http://127.0.0.1:$port/metrics" >"$work/after.txt"
    record "$(python3 "$root/tests/perf/suite_tvd.py" "$work/before.txt" "$work/after.txt" "$workload" "$run")"
  done
done
stop_daemon
wait_sampling_period 3600000

fi

# --- 5.: RSS over time at 1 kHz under light load ---
if part rss; then
echo "# 5. RSS at 1 kHz for $rss_seconds s with pgbench -R 200"
start_daemon 1000
start_load $((rss_seconds + 5))
sleep 10
rss_start=$(rss_kb) rss_max=$rss_start
for _ in $(seq $((rss_seconds / 10))); do
  sleep 10
  rss_now=$(rss_kb)
  [ "$rss_now" -gt "$rss_max" ] && rss_max=$rss_now
done
record "{\"part\":\"rss\",\"seconds\":$rss_seconds,\"start_kib\":$rss_start,\"end_kib\":$rss_now,\"max_kib\":$rss_max}"
kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true
load_pid=""
stop_daemon

fi

# --- 6.: /metrics with every wait event present ---
if part scrape; then
echo "# 6. /metrics scrape with every PostgreSQL 15 wait event present"
"$build/tests/pgwaitprof_scrape_cost" --serve 60 --listen "127.0.0.1:$port" >"$work/scrape.txt" &
scrape_pid=$!
for _ in $(seq 100); do grep -q '^listening' "$work/scrape.txt" && break; sleep 0.1; done
for _ in $(seq 100); do
  curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics"
done >"$work/scrape_times.txt"
kill "$scrape_pid" 2>/dev/null || true; wait "$scrape_pid" 2>/dev/null || true
record "$(python3 - "$work/scrape.txt" "$work/scrape_times.txt" <<'PY'
import json, sys
figures = dict(line.split(None, 1) for line in open(sys.argv[1]) if line.strip())
times = sorted(float(t) * 1000 for t in open(sys.argv[2]) if t.strip())
print(json.dumps({"part": "scrape", "series": int(figures["series"]),
                  "body_bytes": int(figures["body_bytes"]),
                  "serialize_p50_ms": float(figures["serialize_p50_ms"]),
                  "http_p50_ms": round(times[len(times) // 2], 2),
                  "http_p99_ms": round(times[int(len(times) * 0.99) - 1], 2)}))
PY
)"
fi

cp "$results" "${out%.md}.jsonl"
# The page keeps what comes before its "## The latest suite run" section (the dated figures of
# other benchmarks); the section itself is replaced.
{
  if [ -f "$out" ]; then sed '/^## The latest suite run$/,$d' "$out"; fi
  python3 "$root/tests/perf/suite_report.py" "$results"
} >"$work/performance.md"
mv "$work/performance.md" "$out"
echo "suite.sh: wrote $out (raw figures in ${out%.md}.jsonl)"
