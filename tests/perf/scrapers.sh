#!/usr/bin/env bash
# 200 concurrent /metrics scrapers (issue 8): the daemon at 1 kHz with light pgbench load;
# the achieved sampling rate over SECONDS (default 30) without scrapers, then with SCRAPERS
# (default 200) clients scraping in a loop; every scrape must be answered and the rate may drop
# by at most 5 %. Not a test: it prints figures. PGWAITPROF_BIN: another binary to measure.
# Usage: tests/perf/scrapers.sh [SECONDS] [SCRAPERS]  (PG* variables of a cluster; BUILD_DIR)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
seconds=${1:-30}
scrapers=${2:-200}
. "$root/tests/perf/daemon_lib.sh"

start_daemon 1000
start_load $((2 * seconds + 15))
sleep 5
rate_over() {  # snapshots per second over $1 seconds
  local s0 s1 t0 t1
  s0=$(metric 'pgwaitprof_snapshots_total{target="local"}') t0=$(date +%s.%N)
  sleep "$1"
  s1=$(metric 'pgwaitprof_snapshots_total{target="local"}') t1=$(date +%s.%N)
  python3 -c "print(f'{($s1 - $s0) / ($t1 - $t0):.0f}')"
}
quiet=$(rate_over "$seconds")
# The scrapers at nice 19: on a small machine they stand for scrapers elsewhere, and should
# not take the sampler's CPU themselves (the daemon's own serving of them is what is measured).
nice -n 19 python3 - "$port" "$seconds" "$scrapers" >"$work/scrapers.out" <<'PY' &
import sys, threading, time, urllib.request
port, seconds, count = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
ok = failed = 0
latencies = []
lock = threading.Lock()
end = time.monotonic() + seconds
def scrape():
    global ok, failed
    while time.monotonic() < end:
        start = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
                good = r.status == 200 and b"pgwaitprof_up" in r.read()
        except Exception:
            good = False
        with lock:
            if good:
                ok += 1
                latencies.append(time.monotonic() - start)
            else:
                failed += 1
threads = [threading.Thread(target=scrape) for _ in range(count)]
for t in threads: t.start()
for t in threads: t.join()
latencies.sort()
p99 = latencies[int(0.99 * (len(latencies) - 1))] if latencies else float("nan")
print(f"{ok} {failed} {p99:.3f}")
PY
scrape_pid=$!
sleep 1
loaded=$(rate_over "$((seconds - 2))")
wait "$scrape_pid"
read -r ok failed p99 <"$work/scrapers.out"
python3 - "$quiet" "$loaded" "$ok" "$failed" "$p99" "$scrapers" "$seconds" <<'PY'
import sys
quiet, loaded, ok, failed, p99 = map(float, sys.argv[1:6])
print(f"scrapers: daemon at 1000 Hz, pgbench -R 200, {sys.argv[6]} scrapers for {sys.argv[7]} s")
print(f"  {'':22} {'no scrapers':>12} {'scrapers':>12}")
print(f"  {'snapshots/s achieved':22} {quiet:12.0f} {loaded:12.0f}   ({100*(loaded-quiet)/quiet:+.1f} %; limit -5 %)")
print(f"  scrapes answered {ok:.0f}, failed {failed:.0f}, p99 latency {p99*1000:.0f} ms")
PY
kill -0 "$daemon_pid" || { echo "scrapers: the daemon died" >&2; exit 1; }
