# The two "hosts" of the tests of a sampler on the server's own host (issue 50), sourced by
# remote_sampler_test.sh and remote_daemon_test.sh with the pgwaitprof binary as $1: network
# namespaces joined by a veth pair. The server's namespace ($srv, $srv_ip) has sshd (a key
# made for the test, its own authorized_keys and host key, nothing of /root/.ssh) and a
# scratch PostgreSQL on its veth address with a password ($secret, user postgres); the
# client's ($cli, $cli_ip) has a second sshd in a PID namespace of its own (a host without the
# server). PGWAITPROF_SSH_COMMAND points ssh at the test's configuration. Everything is
# removed at exit. Needs root (namespaces, sshd): exits 77 otherwise.
set -uo pipefail
bin=$(readlink -f "$1")
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v /usr/sbin/sshd >/dev/null || { echo "SKIP: no sshd (deploy/install-deps.sh)"; exit 77; }
pgbin=/usr/lib/postgresql/15/bin
tag=$$
# What an earlier test left when it was killed before its EXIT trap ran (ctest's timeout kills
# with SIGKILL): the namespaces of a tag whose shell is gone, with every process in them (its
# server, its sshds), and the directories that such a shell named its own. A tag whose pid is
# alive again (another process now) is left alone.
for stale in $(ip netns list 2>/dev/null | awk '$1 ~ /^pgwp-(srv|cli)-[0-9]+$/ {print $1}'); do
  kill -0 "${stale##*-}" 2>/dev/null && continue
  for pid in $(ip netns pids "$stale" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  ip netns del "$stale" 2>/dev/null
done
for stale in /tmp/pgwp-remote.*/owner; do
  [ -f "$stale" ] || continue
  owner=$(cat "$stale")
  [[ $owner =~ ^[0-9]+$ ]] && ! kill -0 "$owner" 2>/dev/null && rm -rf "$(dirname "$stale")"
done
work=$(mktemp -d /tmp/pgwp-remote.XXXXXX)
chmod 755 "$work"
echo "$tag" >"$work/owner"
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

# Runs pgwaitprof in the client's namespace: run_client NAME ARGS... (report in $work/NAME),
# against $target (default $dsn) with HOME=$home (default the test's own) and no PGPASSWORD.
# With own_pids=1, in a PID namespace of its own too: a client host that cannot see the
# server's processes (in the network namespace alone it can, this being one machine).
run_client() {
  local name=$1
  shift
  local isolate=()
  [ -n "${own_pids:-}" ] && isolate=(unshare --pid --fork --kill-child --mount-proc)
  ip netns exec "$cli" "${isolate[@]}" env -u PGPASSWORD -u PGPASSFILE HOME="${home:-$HOME}" \
    PGWAITPROF_DATA_DIR="$work/$name" "$bin" run "${target:-$dsn}" --no-daemon \
    --sampler-program "${program:-$bin}" "$@" >"$work/$name.out" 2>"$work/$name.err"
}
report_of() { ls "$work/$1"/runs/*/report.json 2>/dev/null | head -1; }
# A report's CPU profile taken on the server's host: at 99 Hz, client backends' samples with
# stacks through PostgresMain (frames named there), and no warning about the CPU profile.
# Prints its figures; `fail WHAT` otherwise: expect_server_cpu_profile REPORT WHAT.
expect_server_cpu_profile() {
  python3 - "$1" <<'PY' || fail "$2"
import json, sys
run = json.load(open(sys.argv[1]))
warnings = [w for w in run["warnings"] if "CPU profile" in w]
profile = run.get("cpu_profile")
client = (profile or {}).get("groups", {}).get("client backend", {})
named = [stack for stack in client.get("folded", {}) if "PostgresMain" in stack.split(";")]
print(f"cpu profile: hz={profile and profile['hz']} cpus={profile and profile['cpus']} "
      f"samples={profile and profile['samples']} client={client.get('samples')} "
      f"stacks through PostgresMain={len(named)} "
      f"top={[f['function'] for f in client.get('self', [])[:5]]} warnings={warnings} "
      f"per interval={[i['client_samples'] for i in (profile or {}).get('intervals', [])]}")
if warnings or not profile or profile["hz"] != 99 or client.get("samples", 0) == 0 or not named:
    sys.exit(1)
PY
}
# The remote samplers running (and the ssh clients that started them: their command line names
# the program too), of this test's two namespaces only: remote_sampler and remote_daemon run side
# by side in deploy/test.sh's lanes, and each saw the other's samplers as left running (and could
# have killed one as its victim).
remote_pids() {
  local in_namespaces
  in_namespaces=$({ ip netns pids "$srv"; ip netns pids "$cli"; } 2>/dev/null | paste -sd, -)
  [ -n "$in_namespaces" ] || return 0
  ps -o pid=,args= -p "$in_namespaces" | awk '/__sample-remote/ { printf "%s ", $1 }'
}
