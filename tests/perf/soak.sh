#!/usr/bin/env bash
# Soak (issue 8): the daemon at 1 kHz with pgbench load and a /metrics scrape every second for
# DURATION seconds (default 1800: 30 minutes); prints RSS growth, open file descriptors and
# missed ticks from the end of a 30 s warm-up to the end. Not a test: it prints figures.
# Usage: tests/perf/soak.sh [DURATION_S]   (PG* variables of a running cluster; BUILD_DIR)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
duration=${1:-1800}
warmup=30
. "$root/tests/perf/daemon_lib.sh"

start_daemon 1000
start_load $((duration + warmup + 5))
scrapes=0
failed=0
scrape_for() {  # $1: seconds, one scrape a second
  local until=$((SECONDS + $1))
  while [ $SECONDS -lt $until ]; do
    if curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" >/dev/null; then
      scrapes=$((scrapes + 1))
    else
      failed=$((failed + 1))
    fi
    sleep 1
  done
}
scrape_for $warmup
rss0=$(rss_kb) fd0=$(fd_count)
missed0=$(metric 'pgwaitprof_missed_ticks_total{target="local"}')
snap0=$(metric 'pgwaitprof_snapshots_total{target="local"}')
t0=$SECONDS
scrape_for "$duration"
rss1=$(rss_kb) fd1=$(fd_count)
missed1=$(metric 'pgwaitprof_missed_ticks_total{target="local"}')
snap1=$(metric 'pgwaitprof_snapshots_total{target="local"}')
elapsed=$((SECONDS - t0))
kill -0 "$daemon_pid" || { echo "soak: the daemon died" >&2; exit 1; }
python3 - "$duration" "$elapsed" "$rss0" "$rss1" "$fd0" "$fd1" "$missed0" "$missed1" \
  "$snap0" "$snap1" "$scrapes" "$failed" <<'PY'
import sys
d, el, r0, r1, f0, f1, m0, m1, s0, s1, ok, bad = map(float, sys.argv[1:])
print(f"soak: {d:.0f} s at 1000 Hz with pgbench -R 200 and a scrape every second")
print(f"  RSS        {r0/1024:.1f} MB -> {r1/1024:.1f} MB  (growth {(r1-r0)/1024:+.2f} MB; limit 1 MB)")
print(f"  open fds   {f0:.0f} -> {f1:.0f}")
print(f"  snapshots  {(s1-s0)/el:.0f}/s achieved")
print(f"  missed     {m1-m0:.0f} ticks ({100*(m1-m0)/max(1.0,(m1-m0)+(s1-s0)):.2f} % of the ticks)")
print(f"  scrapes    {ok:.0f} answered, {bad:.0f} failed")
PY
