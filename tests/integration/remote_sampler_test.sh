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
#   7. matrix --sampler-host: its runs sampled on the server's host.
# Needs root (namespaces, sshd). Usage: remote_sampler_test.sh PGWAITPROF_BINARY
set -uo pipefail
bin=$(readlink -f "$1")
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v /usr/sbin/sshd >/dev/null || { echo "SKIP: no sshd (deploy/install-deps.sh)"; exit 77; }
pgbin=/usr/lib/postgresql/15/bin
tag=$$
work=$(mktemp -d /tmp/pgwp-remote.XXXXXX)
chmod 755 "$work"
srv=pgwp-srv-$tag cli=pgwp-cli-$tag
srv_ip=10.201.$((tag % 200)).2 cli_ip=10.201.$((tag % 200)).1
secret="pw-$tag-secret"
pids=()
failures=0

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  # `ip netns exec` may leave the process it started (the sshds, unshare with --kill-child): each
  # named by this test's own directory, ended by its pid.
  for pid in $(pgrep -f -- "$work/sshd_"); do kill "$pid" 2>/dev/null; done
  if [ -f "$work/data/postmaster.pid" ]; then
    runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/data" -m immediate -w stop >/dev/null 2>&1
  fi
  ip netns del "$srv" 2>/dev/null
  ip netns del "$cli" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# The two hosts.
ip netns add "$srv" && ip netns add "$cli" || exit 1
ip link add "pwc$tag" type veth peer name "pws$tag" || exit 1
ip link set "pws$tag" netns "$srv"
ip link set "pwc$tag" netns "$cli"
ip -n "$srv" addr add "$srv_ip/24" dev "pws$tag"
ip -n "$cli" addr add "$cli_ip/24" dev "pwc$tag"
for ns in "$srv" "$cli"; do
  ip -n "$ns" link set lo up
done
ip -n "$srv" link set "pws$tag" up
ip -n "$cli" link set "pwc$tag" up

# sshd with keys of its own.
mkdir -p /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$work/host_key" -C host
ssh-keygen -q -t ed25519 -N '' -f "$work/client_key" -C client
cp "$work/client_key.pub" "$work/authorized_keys"
chmod 600 "$work/authorized_keys"
start_sshd() {  # NS ADDRESS NAME [unshare]
  cat >"$work/sshd_$3" <<CONF
ListenAddress $2:22
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $work/sshd_$3.pid
CONF
  if [ "${4:-}" = unshare ]; then
    ip netns exec "$1" unshare --pid --fork --kill-child --mount-proc /usr/sbin/sshd -D -e -f "$work/sshd_$3" \
      2>"$work/sshd_$3.log" &
  else
    ip netns exec "$1" /usr/sbin/sshd -D -e -f "$work/sshd_$3" 2>"$work/sshd_$3.log" &
  fi
  pids+=($!)
}
start_sshd "$srv" "$srv_ip" server
start_sshd "$cli" "$cli_ip" client unshare
{
  echo "$srv_ip $(cut -d' ' -f1-2 "$work/host_key.pub")"
  echo "$cli_ip $(cut -d' ' -f1-2 "$work/host_key.pub")"
} >"$work/known_hosts"
cat >"$work/ssh_config" <<CONF
Host *
  IdentityFile $work/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $work/known_hosts
  StrictHostKeyChecking yes
  User root
CONF
export PGWAITPROF_SSH_COMMAND="ssh -F $work/ssh_config"

# PostgreSQL on the server host's address, with a password.
mkdir -p "$work/data" && chown postgres: "$work/data"
echo "$secret" >"$work/pwfile" && chown postgres: "$work/pwfile"
runuser -u postgres -- "$pgbin/initdb" -D "$work/data" -U postgres -A scram-sha-256 \
  --pwfile="$work/pwfile" -E UTF8 --locale=C --no-sync >"$work/initdb.log" || exit 1
cat >>"$work/data/postgresql.conf" <<CONF
listen_addresses = '$srv_ip'
unix_socket_directories = '$work/data'
port = 5432
max_connections = 50
CONF
echo "host all all 10.201.0.0/16 scram-sha-256" >>"$work/data/pg_hba.conf"
ip netns exec "$srv" runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/data" -l "$work/data/server.log" \
  -w -t 60 start >/dev/null || { cat "$work/data/server.log"; exit 1; }
dsn="host=$srv_ip port=5432 user=postgres dbname=postgres password=$secret"
ip netns exec "$cli" env PGPASSWORD="$secret" "$pgbin/pgbench" -i -q -s 2 \
  "host=$srv_ip port=5432 user=postgres dbname=postgres" >"$work/init.log" 2>&1 ||
  { cat "$work/init.log"; exit 1; }
for _ in $(seq 50); do
  ip netns exec "$cli" ssh -F "$work/ssh_config" -o BatchMode=yes "$srv_ip" true 2>/dev/null && break
  sleep 0.1
done

# Runs pgwaitprof in the client's namespace: run_client NAME ARGS... (report in $work/NAME).
run_client() {
  local name=$1
  shift
  ip netns exec "$cli" env PGWAITPROF_DATA_DIR="$work/$name" "$bin" run "$dsn" --no-daemon \
    --sampler-program "${program:-$bin}" "$@" >"$work/$name.out" 2>"$work/$name.err"
}
report_of() { ls "$work/$1"/runs/*/report.json 2>/dev/null | head -1; }
remote_pids() { pgrep -f -- "__sample-remote" | tr '\n' ' '; }

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
for _ in $(seq 100); do [ -n "$(remote_pids)" ] && break; sleep 0.1; done
sleep 2.5
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
one_line version "speaks protocol 2 (pgwaitprof .*), this host's pgwaitprof .* protocol 1"
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

# 6. The server not on the sampler host.
run_client elsewhere --sampler-host "ssh://root@$cli_ip" -- -c 2 -T 2 -S
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
variants:
  - name: base
PLAN
ip netns exec "$cli" env PGWAITPROF_DATA_DIR="$work/matrix" "$bin" matrix "$work/plan.yaml" \
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
    print(f"matrix run: source={run['sampler']['source']} sampler_host={remote and remote['hostname']}")
    if run["sampler"]["source"] != "memory" or not remote:
        sys.exit(1)
PY
fi
sleep 0.5
[ -z "$(remote_pids)" ] || fail "remote samplers left running after the matrix: $(remote_pids)"

if [ "$failures" -gt 0 ]; then
  echo "remote_sampler_test: $failures failures"
  exit 1
fi
echo "remote_sampler_test: passed"
