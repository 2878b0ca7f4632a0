#!/usr/bin/env bash
# A daemon target with a sampler host (issue 50): the daemon in the client's namespace, its one
# target's sampler_host the server's (the hosts: remote_hosts.sh). Checks:
#   1. /metrics shows the server's waits, client backends' too while pgbench runs from the
#      client's namespace, sampled by the memory source of the server's host, and the target up;
#      the password (PGPASSWORD of the daemon) in no process's argv.
#      A run through the daemon's control socket records the sampler host in its report, and
#      the CPU profile of the target's cpu_profile taken on the server's host: client backends'
#      stacks through PostgresMain, no "no CPU profile" warning (the daemon is in a PID
#      namespace of its own: its host cannot see the server's processes). The remote side has
#      perf events open during the run only: none before it, none once it ended.
#   2. ssh killed once, during a second run with the CPU profile: the daemon's log shows the
#      outage and a new channel, /metrics grow again, the new channel takes the run's profile
#      again, and the run ends completed with the outage marked.
#   3. SIGTERM: the daemon stops within a second, and nothing of the remote side is left.
# Needs root (namespaces, sshd). Usage: remote_daemon_test.sh PGWAITPROF_BINARY
source "$(dirname "${BASH_SOURCE[0]}")/remote_hosts.sh"

port=$((20000 + tag % 20000))
mkdir -m 700 "$work/daemon"
cat >"$work/daemon.yaml" <<CONF
listen: 127.0.0.1:$port
data_dir: $work/daemon
targets:
  - name: db
    dsn: "host=$srv_ip port=5432 user=postgres dbname=postgres"
    sampler_host: ssh://root@$srv_ip
    sampler_program: $bin
    cpu_profile: 99
CONF
( while :; do ps -eo args >>"$work/ps_daemon.txt"; sleep 0.2; done ) &
watcher=$!
pids+=($watcher)
# A command in the client's namespace with the password in its environment only (an `env
# PGPASSWORD=...` would show it in ps). In the background only: it replaces the shell it runs in,
# so that $! is the command's pid.
with_password() { PGPASSWORD="$secret" exec ip netns exec "$cli" "$@"; }
# The daemon in a PID namespace of its own (unshare's child, its pid 1 there): this host cannot
# read the server's processes.
with_password unshare --pid --fork --kill-child --mount-proc "$bin" daemon -c "$work/daemon.yaml" \
  >"$work/daemon.log" 2>&1 &
unshared=$!
pids+=($unshared)

metrics() { ip netns exec "$cli" curl -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null; }
# The sum of a family's series for target db: total NAME [LABEL-FILTER]
total() {
  metrics | awk -v name="$1" -v filter="${2:-}" '
    index($0, name "{") == 1 && index($0, "target=\"db\"") && index($0, filter) { sum += $NF }
    END { printf "%d\n", sum }'
}
# The perf events the remote samplers have open (the CPU profile's, on the server's host).
perf_events() {
  local pid count=0
  for pid in $(remote_pids); do
    count=$((count + $(find "/proc/$pid/fd" -lname 'anon_inode:*perf_event*' 2>/dev/null | wc -l)))
  done
  echo "$count"
}
perf_open() { [ "$(perf_events)" -gt 0 ]; }
perf_closed() { [ "$(perf_events)" -eq 0 ]; }
# A run through the daemon's control socket, in the background: daemon_run NAME PGBENCH-ARGS...
daemon_run() {
  local name=$1
  shift
  ip netns exec "$cli" env PGWAITPROF_SOCKET="$work/daemon/pgwaitprof.sock" "$bin" run \
    "host=$srv_ip port=5432 user=postgres dbname=postgres" -- "$@" \
    >"$work/$name.out" 2>"$work/$name.err" &
}
# The report of the daemon's latest run.
latest_report() { ls -t "$work"/daemon/runs/*/report.json 2>/dev/null | head -1; }
# Waits up to $1 tenths of a second for a command to succeed.
within() {
  local tenths=$1
  shift
  for _ in $(seq "$tenths"); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}

daemon_started() { [ -n "$(pgrep -P "$unshared")" ]; }
within 50 daemon_started || fail "the daemon did not start"
daemon=$(pgrep -P "$unshared")

# 1. The server's waits, from the memory source of its host.
sampling_memory() { metrics | grep -q 'pgwaitprof_sampler_info{.*source="memory".*} 1'; }
within 300 sampling_memory || fail "no memory source of the server's host in /metrics"
with_password "$pgbin/pgbench" -c 2 -T 4 -S "host=$srv_ip port=5432 user=postgres dbname=postgres" \
  >"$work/pgbench.log" 2>&1 &
loadgen=$!
pids+=($loadgen)
client_waits() { [ "$(total pgwaitprof_wait_samples_total 'backend_type="client backend"')" -gt 0 ]; }
within 100 client_waits || fail "no client backends' waits in /metrics"
wait "$loadgen" || fail "pgbench failed: $(tail -n 3 "$work/pgbench.log")"
echo "metrics: snapshots=$(total pgwaitprof_snapshots_total)" \
  "wait_samples=$(total pgwaitprof_wait_samples_total)" \
  "client_backend_samples=$(total pgwaitprof_wait_samples_total 'backend_type="client backend"')" \
  "up=$(total pgwaitprof_up)"
[ "$(total pgwaitprof_up)" -eq 1 ] || fail "the target is not up"

# A run through the daemon's control socket: pgbench started by the daemon here, the server
# sampled on its host, and the report says so, with the target's CPU profile from that host.
perf_closed || fail "perf events open on the server's host before any run: $(perf_events)"
daemon_run run -c 2 -T 4 -S
run=$!
within 100 perf_open || fail "no perf events open on the server's host during the run"
echo "during the run: $(perf_events) perf events open on the server's host"
wait "$run" || fail "the run through the daemon failed: $(tail -n 2 "$work/run.err")"
within 30 perf_closed || fail "perf events still open on the server's host after the run: $(perf_events)"
report=$(latest_report)
first_report=$report
if [ -z "$report" ]; then
  fail "no report of the run through the daemon"
else
  python3 - "$report" <<'PY' || fail "the report of the run through the daemon"
import json, sys
run = json.load(open(sys.argv[1]))
remote = run["environment"].get("sampler_host") or {}
print(f"daemon run: status={run['status']} source={run['sampler']['source']} "
      f"tps={run['loadgen']['tps']:.1f} sampler_host={remote.get('hostname')} "
      f"clock_offset_ms={remote.get('clock_offset_ms')}")
if run["status"] != "completed" or run["sampler"]["source"] != "memory" or not remote.get("hostname"):
    sys.exit(1)
PY
  expect_server_cpu_profile "$report" "the CPU profile of the run through the daemon"
fi

# 2. The channel cut once, during a run with the CPU profile: an outage, a new channel, the
# metrics grow again, and the new channel takes the run's profile again.
daemon_run cut -c 2 -T 8 -S
run=$!
within 100 perf_open || fail "no perf events open on the server's host during the second run"
ssh_client=$(pgrep -f -- "ssh -F $work/ssh_config .*$srv_ip" | head -1)
if [ -z "$ssh_client" ]; then
  fail "no ssh client of the daemon to cut"
else
  kill -9 "$ssh_client"
  restored() { grep -q "connection restored target=db" "$work/daemon.log"; }
  within 200 restored || fail "no new channel after the cut"
  grep -q "lost connection to target=db: the channel to the sampler on" "$work/daemon.log" ||
    fail "the daemon's log shows no outage"
  after=$(total pgwaitprof_snapshots_total)
  grows() { [ "$(total pgwaitprof_snapshots_total)" -gt "$after" ]; }
  within 100 grows || fail "/metrics did not grow after the new channel"
  within 30 perf_open || fail "the new channel did not take the run's CPU profile again"
  grep -E "lost connection|connection restored" "$work/daemon.log"
  [ "$(total pgwaitprof_up)" -eq 1 ] || fail "the target is not up again"
fi
wait "$run" || fail "the run cut through the daemon failed: $(tail -n 2 "$work/cut.err")"
within 30 perf_closed || fail "perf events still open on the server's host after the cut run"
report=$(latest_report)
[ "$report" != "$first_report" ] || fail "no report of the cut run"
[ "$report" = "$first_report" ] || python3 - "$report" <<'PY' || fail "the report of the cut run"
import json, sys
run = json.load(open(sys.argv[1]))
outages = [o for o in run["outages"] if o["connection"] == "sampler"]
profile = run.get("cpu_profile") or {}
print(f"cut run: status={run['status']} "
      f"outages={[(round(o['start_s'], 1), round(o['duration_s'], 1), o['reason']) for o in outages]} "
      f"cpu samples={profile.get('samples')}")
if run["status"] != "completed" or not outages or "channel" not in outages[0]["reason"]:
    sys.exit(1)
if not profile.get("samples"):
    sys.exit(1)
PY

# 3. The stop: within a second, the remote side gone with it.
kill "$watcher" 2>/dev/null
grep -q -- "$secret" "$work/ps_daemon.txt" && fail "the password was on a command line"
grep -q -- "__sample-remote" "$work/ps_daemon.txt" || fail "no remote sampler was ever seen running"
started=$(date +%s%N)
kill -TERM "$daemon"
wait "$unshared"  # unshare exits with the daemon's code
code=$?
stopped_ms=$((($(date +%s%N) - started) / 1000000))
gone() { [ -z "$(remote_pids)" ]; }
within 20 gone || fail "a remote sampler still runs after the daemon stopped: $(remote_pids)"
gone_ms=$((($(date +%s%N) - started) / 1000000))
echo "stop: daemon exit $code after $stopped_ms ms, remote side gone after $gone_ms ms"
grep "stop took" "$work/daemon.log"
[ "$code" -eq 0 ] || fail "the daemon exited $code"
[ "$stopped_ms" -le 1000 ] || fail "the daemon took $stopped_ms ms to stop"
[ "$gone_ms" -le 1000 ] || fail "the remote side was gone only $gone_ms ms after the stop"
grep -q "did not stop in time" "$work/daemon.log" && fail "the sampler did not stop in time"
grep -q -- "$secret" "$work/daemon.log" && fail "the password is in the daemon's log"

if [ "$failures" -gt 0 ]; then
  echo "--- daemon log"
  tail -n 40 "$work/daemon.log"
  echo "remote_daemon_test: $failures failures"
  exit 1
fi
echo "remote_daemon_test: passed"
