#!/usr/bin/env bash
# The load generator on its own host (issue 50): two "hosts" on this machine, network
# namespaces joined by a veth pair. The server's namespace has sshd (a key made for this test,
# its own authorized_keys and host key, nothing of /root/.ssh) and a scratch PostgreSQL on its
# veth address with a password; the client's runs `pgwaitprof run --sampler-host`. Checks:
#   1. one report whose waits come from the server host's memory source, whose tps is
#      pgbench's, whose environment names both hosts and the clock offset, whose load
#      generator CPU is measured on the client side; the password in no process's argv; no
#      remote sampler left running.
#   2. the SSH channel cut mid-run (ssh killed): the report marks the sampler's outage, the
#      remote side exits, the run ends completed.
#   3. the remote program missing; 4. of another protocol version; 5. the host unreachable:
#      one line each, at once.
#   6. the server not on the sampler host (a second sshd in the client's namespace, in a PID
#      namespace of its own): the remote side samples pg_stat_activity, and the report says why.
#   7. matrix --sampler-host: its runs sampled on the server's host, with the plan's CPU
#      profile taken there.
#   8. the password only in this host's ~/.pgpass: libpq's password crosses the channel (the
#      remote side has none of its own), and it is in no process's argv.
#   9. run --cpu-profile --sampler-host from a client that cannot see the server's processes
#      (a PID namespace of its own): the CPU profile is taken on the server's host (its client
#      backends' stacks named there, through PostgresMain), with no "no CPU profile" warning;
#      and case 6's run, with its sampler host not the server's, warns why not in that host's
#      words.
# The hosts: remote_hosts.sh. Needs root (namespaces, sshd).
# Usage: remote_sampler_test.sh PGWAITPROF_BINARY
source "$(dirname "${BASH_SOURCE[0]}")/remote_hosts.sh"

# 1. The run.
( while :; do ps -eo args >>"$work/ps.txt"; sleep 0.2; done ) &
watcher=$!
pids+=($watcher)
started=$(date +%s.%N)
run_client main --sampler-host "ssh://root@$srv_ip" -- -c 4 -j 2 -T 5 -S
code=$?
kill "$watcher" 2>/dev/null
echo "run: exit $code in $(echo "$(date +%s.%N) - $started" | bc) s"
report=$(report_of main)
if [ "$code" -ne 0 ] || [ -z "$report" ]; then
  fail "run exited $code"
  cat "$work/main.err"
else
  python3 - "$report" "$work/main/runs" <<'PY' || fail "report of the run"
import json, sys, glob, re
run = json.load(open(sys.argv[1]))
env = run["environment"]
remote = env.get("sampler_host")
errors = []
if run["sampler"]["source"] != "memory":
    errors.append(f"source {run['sampler']['source']} ({run['sampler']['source_reason']})")
if not remote or not remote["hostname"] or not remote["kernel"] or remote["cpu_count"] < 1:
    errors.append(f"sampler host {remote}")
elif abs(remote["clock_offset_ms"]) > 1000 or remote["round_trip_ms"] <= 0:
    errors.append(f"clock {remote['clock_offset_ms']} ms, round trip {remote['round_trip_ms']} ms")
if not env["hostname"] or not env["kernel"]:
    errors.append("this host's environment")
log = open(glob.glob(sys.argv[2] + "/*/pgbench.log")[0]).read()
printed = float(re.findall(r"^tps = ([0-9.]+)", log, re.M)[-1])
if abs(run["loadgen"]["tps"] - printed) > 1e-6 * printed:
    errors.append(f"tps {run['loadgen']['tps']} against pgbench's {printed}")
waits = sum(entry["count"] for entry in run["profile"]["entries"])
if waits == 0 or run["sampler"]["snapshots"] == 0:
    errors.append("no samples")
kernel = run.get("kernel", {})
if kernel.get("load generator", {}).get("on_cpu_s", 0) <= 0:
    errors.append(f"load generator CPU {kernel.get('load generator')}")
if kernel.get("client backends", {}).get("on_cpu_s", 0) <= 0:
    errors.append(f"client backends' CPU from the server host {kernel.get('client backends')}")
if run["outages"]:
    errors.append(f"outages {run['outages']}")
print(f"source={run['sampler']['source']} snapshots={run['sampler']['snapshots']} "
      f"tps={run['loadgen']['tps']:.1f} offset_ms={remote and remote['clock_offset_ms']} "
      f"rtt_ms={remote and remote['round_trip_ms']} "
      f"loadgen_cpu_s={kernel.get('load generator', {}).get('on_cpu_s')}")
for error in errors:
    print("  " + error)
sys.exit(1 if errors else 0)
PY
  grep -q "sampler host" "$work/main.out" && grep -q "clock offset" "$work/main.out" ||
    fail "the text report names no sampler host or clock offset"
fi
# ssh's and the remote sampler's command lines (this script's own `ip netns exec` holds the DSN).
grep -E -- "ssh |__sample-remote" "$work/ps.txt" | grep -q -- "$secret" &&
  fail "the password was on ssh's or the remote sampler's command line"
grep -q -- "__sample-remote" "$work/ps.txt" || fail "no remote sampler was ever seen running"
sleep 0.5
[ -z "$(remote_pids)" ] || fail "a remote sampler still runs after the run: $(remote_pids)"

# 2. The channel cut mid-run.
run_client cut --sampler-host "ssh://root@$srv_ip" -- -c 2 -T 7 -S &
runner=$!
# Cut mid-run: 2 s after the run says its remote sampler started (the channel set up, the clocks
# compared). (2.5 s after the remote sampler's process appeared was still inside the run's set-up
# once on a loaded CI machine: the run failed, with no outage to mark.)
for _ in $(seq 600); do
  grep -q 'remote sampler started' "$work/cut.err" 2>/dev/null && break
  sleep 0.1
done
sleep 2
victim=$(remote_pids)
ssh_client=$(pgrep -f -- "ssh -F $work/ssh_config .*$srv_ip" | head -1)
if [ -z "$victim" ] || [ -z "$ssh_client" ]; then
  fail "no remote sampler or ssh client to cut"
else
  kill -9 "$ssh_client"
  gone=no
  for _ in $(seq 50); do
    still=0
    for pid in $victim; do kill -0 "$pid" 2>/dev/null && still=1; done
    [ $still -eq 0 ] && { gone=yes; break; }
    sleep 0.1
  done
  [ $gone = yes ] || fail "the remote sampler $victim did not exit when its channel was cut"
fi
wait "$runner"
code=$?
report=$(report_of cut)
if [ -z "$report" ]; then
  fail "no report after the cut (exit $code)"
else
  python3 - "$report" <<'PY' || fail "the cut's report"
import json, sys
run = json.load(open(sys.argv[1]))
outages = [o for o in run["outages"] if o["connection"] == "sampler"]
print(f"status={run['status']} outages={[(round(o['start_s'], 1), round(o['duration_s'], 1), o['reason']) for o in outages]}")
if not outages or "channel" not in outages[0]["reason"]:
    sys.exit(1)
if run["status"] != "completed":
    sys.exit(1)
PY
fi

# 3-5: one line each, at once.
one_line() {  # NAME PATTERN: the run fails with the reason in its one last line
  local last
  last=$(tail -n 1 "$work/$1.err")
  [[ "$last" == "pgwaitprof: run failed: "* ]] || fail "$1: the last line is not the failure: $last"
  grep -q -- "$2" <<<"$last" || fail "$1: no \"$2\" in: $last"
}
started=$(date +%s)
program=/nonexistent/pgwaitprof run_client missing --sampler-host "ssh://root@$srv_ip" -- -T 2 &&
  fail "a missing remote program was not refused"
one_line missing "could not start the sampler on \"ssh://root@$srv_ip\": .*No such file"
program="env PGWAITPROF_FAULT_FAIL=remote-protocol $bin" run_client version \
  --sampler-host "ssh://root@$srv_ip" -- -T 2 && fail "another protocol version was not refused"
one_line version "speaks protocol 3 (pgwaitprof .*), this host's pgwaitprof .* protocol 2"
run_client unreachable --sampler-host "ssh://root@$srv_ip:2" -- -T 2 &&
  fail "an unreachable host was not refused"
one_line unreachable "Connection refused"
program="env PGWAITPROF_FAULT_FAIL=remote-clock $bin" run_client clock \
  --sampler-host "ssh://root@$srv_ip" -- -T 2 && fail "a clock 5 s off was not refused"
one_line clock "s off this host's (more than 1 s)"
elapsed=$(($(date +%s) - started))
echo "refusals: $elapsed s for four"
[ "$elapsed" -le 30 ] || fail "the refusals took $elapsed s"
cat "$work"/{missing,version,unreachable,clock}.err

# 6. The server not on the sampler host (and 9's refusal: no CPU profile there).
run_client elsewhere --sampler-host "ssh://root@$cli_ip" --cpu-profile=99 -- -c 2 -T 2 -S
code=$?
report=$(report_of elsewhere)
if [ "$code" -ne 0 ] || [ -z "$report" ]; then
  fail "run with the server elsewhere exited $code: $(cat "$work/elsewhere.err")"
else
  python3 - "$report" <<'PY' || fail "the report of a server not on the sampler host"
import json, sys
run = json.load(open(sys.argv[1]))
print(f"source={run['sampler']['source']} reason={run['sampler']['source_reason']!r}")
if run["sampler"]["source"] != "activity" or "another host" not in run["sampler"]["source_reason"]:
    sys.exit(1)
cpu = [w for w in run["warnings"] if w.startswith("no CPU profile")]
print(f"cpu profile warnings={cpu}")
# The sampler host's reason, named as that host's.
if "cpu_profile" in run or len(cpu) != 1 or not cpu[0].startswith("no CPU profile: on ") or \
        "not on this host" not in cpu[0]:
    sys.exit(1)
PY
fi
sleep 0.5
[ -z "$(remote_pids)" ] || fail "remote samplers left running: $(remote_pids)"

# 7. A matrix with its sampler on the server's host.
cat >"$work/plan.yaml" <<PLAN
name: remote-matrix
scale: 2
workload: select-only
clients: [2]
duration: 2s
repeats: 1
warmup: 0s
checkpoint: false
cpu_profile: 99
variants:
  - name: base
PLAN
# In a PID namespace of its own, as 9's run: the CPU profile can only be the server host's.
ip netns exec "$cli" unshare --pid --fork --kill-child --mount-proc \
  env PGWAITPROF_DATA_DIR="$work/matrix" "$bin" matrix "$work/plan.yaml" \
  --target "$dsn" --data-dir "$work/matrix" --sampler-host "ssh://root@$srv_ip" \
  --sampler-program "$bin" >"$work/matrix.out" 2>"$work/matrix.err"
code=$?
reports=$(find "$work/matrix" -name report.json | head -5)
if [ "$code" -ne 0 ] || [ -z "$reports" ]; then
  fail "matrix --sampler-host exited $code: $(tail -n 3 "$work/matrix.err")"
else
  python3 - $reports <<'PY' || fail "the matrix's runs were not sampled on the server's host"
import json, sys
for path in sys.argv[1:]:
    run = json.load(open(path))
    remote = run["environment"].get("sampler_host")
    client = run.get("cpu_profile", {}).get("groups", {}).get("client backend", {})
    print(f"matrix run: source={run['sampler']['source']} sampler_host={remote and remote['hostname']} "
          f"cpu_profile client samples={client.get('samples')} "
          f"warnings={[w for w in run['warnings'] if 'CPU' in w]}")
    if run["sampler"]["source"] != "memory" or not remote or not client.get("samples"):
        sys.exit(1)
PY
fi
sleep 0.5
[ -z "$(remote_pids)" ] || fail "remote samplers left running after the matrix: $(remote_pids)"

# 8. The password only in this host's ~/.pgpass (HOME of the run), none in the connection
# string or the environment.
mkdir -m 700 "$work/home"
echo "$srv_ip:5432:*:postgres:$secret" >"$work/home/.pgpass"
chmod 600 "$work/home/.pgpass"
( while :; do ps -eo args >>"$work/ps_pgpass.txt"; sleep 0.2; done ) &
watcher=$!
pids+=($watcher)
target="host=$srv_ip port=5432 user=postgres dbname=postgres" home="$work/home" \
  run_client pgpass --sampler-host "ssh://root@$srv_ip" -- -c 2 -T 2 -S
code=$?
kill "$watcher" 2>/dev/null
report=$(report_of pgpass)
if [ "$code" -ne 0 ] || [ -z "$report" ]; then
  fail "run with the password in ~/.pgpass exited $code: $(tail -n 2 "$work/pgpass.err")"
else
  python3 - "$report" <<'PY' || fail "the report of the run with the password in ~/.pgpass"
import json, sys
run = json.load(open(sys.argv[1]))
print(f"pgpass run: source={run['sampler']['source']} snapshots={run['sampler']['snapshots']} "
      f"sampler_host={run['environment'].get('sampler_host', {}).get('hostname')}")
if run["sampler"]["source"] != "memory" or run["sampler"]["snapshots"] == 0:
    sys.exit(1)
PY
fi
grep -q -- "__sample-remote" "$work/ps_pgpass.txt" || fail "no remote sampler seen in the ~/.pgpass run"
grep -q -- "$secret" "$work/ps_pgpass.txt" && fail "the password of ~/.pgpass was on a command line"
grep -q -- "$secret" "$work/pgpass.out" "$work/pgpass.err" && fail "the password was in the output"

# 9. The CPU profile taken on the server's host.
# The client in a PID namespace of its own: its own host cannot take the server's CPU profile.
own_pids=1 run_client cpu --sampler-host "ssh://root@$srv_ip" --cpu-profile=99 -- -c 4 -j 2 -T 5 -S
code=$?
report=$(report_of cpu)
if [ "$code" -ne 0 ] || [ -z "$report" ]; then
  fail "run --cpu-profile --sampler-host exited $code: $(tail -n 3 "$work/cpu.err")"
else
  expect_server_cpu_profile "$report" "the CPU profile of the server's host"
fi
sleep 0.5
[ -z "$(remote_pids)" ] || fail "remote samplers left running after the CPU profile: $(remote_pids)"

if [ "$failures" -gt 0 ]; then
  echo "remote_sampler_test: $failures failures"
  exit 1
fi
echo "remote_sampler_test: passed"
