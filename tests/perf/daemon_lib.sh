# Shared by soak.sh and scrapers.sh (sourced): a daemon sampling the PG* target at 1 kHz on a
# free port with its own data directory, its metrics, and a cleanup trap.
# Needs: $build (the build directory; PGWAITPROF_BIN for another binary), the PG* variables of a
# running cluster, python3, curl.
binary=${PGWAITPROF_BIN:-$build/daemon/pgwaitprof}
work=$(mktemp -d /tmp/pgwaitprof-perf-XXXXXX)
daemon_pid=""
load_pid=""
cleanup() {
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null || true
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
: "${PGHOST:?set the PG* variables of a cluster (deploy/scratch-cluster.sh start DIR)}"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dsn="host=$PGHOST port=${PGPORT:-5432} user=${PGUSER:-postgres} dbname=${PGDATABASE:-postgres}"

start_daemon() {  # $1: hz, $2: source (default activity)
  cat >"$work/pgwaitprof.yaml" <<YAML
listen: 127.0.0.1:$port
data_dir: $work/data
targets:
  - name: local
    dsn: "$dsn"
    hz: $1
    source: ${2:-activity}
YAML
  "$binary" daemon -c "$work/pgwaitprof.yaml" >"$work/daemon.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 100); do
    [ "$(metric 'pgwaitprof_up{target="local"}')" = 1 ] && return 0
    sleep 0.1
  done
  echo "the daemon did not come up:" >&2
  cat "$work/daemon.log" >&2
  exit 1
}

# The value of one series on /metrics ("" when not there); a slow answer is asked again.
metric() {
  local value=""
  for _ in 1 2 3; do
    value=$(curl -s --max-time 10 "http://127.0.0.1:$port/metrics" |
      awk -v s="$1" 'index($0, s) == 1 { print $NF; exit }') || true
    [ -n "$value" ] && break
  done
  echo "$value"
}

rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$daemon_pid/status"; }
fd_count() { ls "/proc/$daemon_pid/fd" | wc -l; }

# pgbench at a fixed rate (light: on a small machine a saturating load measures the machine).
start_load() {  # $1: seconds
  pgbench -i -q -s 1 "$dsn" >/dev/null 2>&1 || true
  pgbench -n -c 2 -j 1 -R 200 -T "$1" "$dsn" >"$work/pgbench.log" 2>&1 &
  load_pid=$!
}
