#!/usr/bin/env bash
# Cross-checks the activity sampler against pg_wait_sampling on the same load: one daemon
# samples one server twice (target "activity" from pg_stat_activity at 100 Hz, target
# "wait_sampling" from the extension's own 100 Hz profile) while pgbench runs, then prints each
# wait class's share of the client backends' waits from both, side by side. CPU and
# Client | ClientRead are left out of the shares: pg_wait_sampling 1.1 records no sample for a
# backend without a wait event, and keeps no session state to tell an idle ClientRead from one
# inside a transaction; the raw figures are printed for them.
#
#   tests/perf/crosscheck_wait_sampling.sh [PGWAITPROF] [SECONDS]
#
# Needs PG* variables naming a server with pg_wait_sampling preloaded and created, and pgbench
# tables (deploy/scratch-cluster.sh start DIR prints them). A figure, not a test.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pgwaitprof=${1:-$root/build/daemon/pgwaitprof}
seconds=${2:-20}
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/pgwaitprof.yaml" <<YAML
listen: 127.0.0.1:$port
data_dir: $work/data
targets:
  - {name: activity, dsn: "", hz: 100, source: activity}
  - {name: wait_sampling, dsn: "", hz: 100, source: pg_wait_sampling, pg_wait_sampling_poll_ms: 1000}
YAML
"$pgwaitprof" daemon -c "$work/pgwaitprof.yaml" >"$work/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
sleep 2
curl -s "127.0.0.1:$port/metrics" >"$work/before.txt"
pgbench -n -c 4 -j 2 -T "$seconds" >"$work/pgbench.txt" 2>&1
sleep 1.5  # one more read of pg_wait_sampling's profile
curl -s "127.0.0.1:$port/metrics" >"$work/after.txt"

# Client backends' non-idle samples per wait class, as deltas over the pgbench run.
python3 - "$work/before.txt" "$work/after.txt" <<'PY'
import re, sys
def load(path):
    samples = {}
    for line in open(path):
        m = re.match(r'pgwaitprof_wait_samples_total\{target="(\w+)",backend_type="client backend",state="([^"]*)",wait_event_type="([^"]*)",wait_event="([^"]*)"\} (\S+)', line)
        if m and m.group(2) != "idle":
            key = (m.group(1), m.group(3))
            samples[key] = samples.get(key, 0) + float(m.group(5))
    return samples
before, after = load(sys.argv[1]), load(sys.argv[2])
delta = {key: after[key] - before.get(key, 0) for key in after}
apart = ("CPU", "Client")
classes = sorted({c for (_, c) in delta if c not in apart})
totals = {t: sum(v for (tt, c), v in delta.items() if tt == t and c not in apart) for t in ("activity", "wait_sampling")}
print(f"{'wait class':<12} {'activity':>10} {'pg_wait_sampling':>17} {'difference':>11}")
for c in classes:
    a = 100 * delta.get(("activity", c), 0) / max(totals["activity"], 1)
    w = 100 * delta.get(("wait_sampling", c), 0) / max(totals["wait_sampling"], 1)
    print(f"{c:<12} {a:>9.1f}% {w:>16.1f}% {a - w:>+10.1f}")
print(f"{'samples':<12} {totals['activity']:>10.0f} {totals['wait_sampling']:>17.0f}   (client backends' waits, CPU and Client left out)")
for c in apart:
    print(f"{c + ' samples':<12} {delta.get(('activity', c), 0):>10.0f} {delta.get(('wait_sampling', c), 0):>17.0f}")
PY
grep -E '^tps' "$work/pgbench.txt"
