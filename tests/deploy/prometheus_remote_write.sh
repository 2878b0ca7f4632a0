#!/usr/bin/env bash
# Fleet metrics end to end: a real pgwaitprof daemon samples the test cluster; a "benchmark host"
# Prometheus configured from deploy/prometheus/remote-write/benchmark-host.yml scrapes it and
# remote-writes to a "central" Prometheus started from central.yml with
# --web.enable-remote-write-receiver; the central one must come to hold the daemon's series
# with the host label the benchmark host's external_labels set.
#
#   prometheus_remote_write.sh [PGWAITPROF]
#
# PGHOST, PGPORT, PGUSER, PGDATABASE name a running PostgreSQL. Listens on loopback only.
# Prints one line per check and a closing "N passed, N failed" line; exits 1 if any failed.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/cluster_slot.sh source-path=SCRIPTDIR
source "$script_dir/../support/cluster_slot.sh"
source_dir=$(cd "$script_dir/../.." && pwd)
examples=$source_dir/deploy/prometheus/remote-write
pgwaitprof=${1:-${PGWAITPROF:-$source_dir/build/daemon/pgwaitprof}}
prometheus_bin=${PROMETHEUS:-prometheus}
host_label=bench-e2e

passed=0
failed=0
pass() { printf 'ok    %s\n' "$1"; passed=$((passed + 1)); }
fail() {
  printf 'FAIL  %s\n' "$1"
  if [[ -n "${2:-}" ]]; then printf '%s\n' "$2" | sed 's/^/      /'; fi
  failed=$((failed + 1))
}
die() {
  echo "prometheus_remote_write: $*" >&2
  exit 1
}

[[ -x $pgwaitprof ]] || die "no pgwaitprof binary at \"$pgwaitprof\""
for tool in curl jq python3 "$prometheus_bin"; do
  command -v "$tool" >/dev/null || die "\"$tool\" is not installed"
done
for variable in PGHOST PGPORT PGUSER PGDATABASE; do
  [[ -n ${!variable:-} ]] || die "$variable is not set"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgwaitprof-rw.XXXXXX")
pids=()
stop_all() {
  local pid
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 150); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_all
  if ((status != 0 || failed != 0)); then
    for log in daemon.log host.log central.log; do
      [[ -s $tmp/$log ]] && { echo "--- last lines of $log"; tail -n 20 "$tmp/$log"; }
    done
  fi
  rm -rf "$tmp"
  echo "prometheus_remote_write: $passed passed, $failed failed"
  if ((failed != 0 && status == 0)); then status=1; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for() {  # seconds, command...
  local deadline=$(($(date +%s) + $1))
  shift
  while (($(date +%s) < deadline)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  return 1
}

daemon_port=$(free_port)
host_port=$(free_port)
central_port=$(free_port)
cat >"$tmp/pgwaitprof.yaml" <<YAML
listen: 127.0.0.1:$daemon_port
data_dir: "$tmp/data"
targets:
  - name: rw
    dsn: "host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
    hz: 50
YAML
"$pgwaitprof" daemon -c "$tmp/pgwaitprof.yaml" >"$tmp/daemon.log" 2>&1 &
pids+=($!)

# The examples as shipped, with this test's addresses and host name.
sed -e "s|127.0.0.1:9816|127.0.0.1:$daemon_port|" \
  -e "s|http://central.example:9090|http://127.0.0.1:$central_port|" \
  -e "s|host: bench01|host: $host_label|" \
  -e "s|  - ../rules.yml|  - $source_dir/deploy/prometheus/rules.yml|" \
  "$examples/benchmark-host.yml" >"$tmp/host.yml"
cp "$examples/central.yml" "$tmp/central.yml"
grep -q "127.0.0.1:$central_port" "$tmp/host.yml" || die "benchmark-host.yml has no remote_write url to rewrite"

"$prometheus_bin" --config.file="$tmp/central.yml" --storage.tsdb.path="$tmp/central-tsdb" \
  --web.listen-address="127.0.0.1:$central_port" --web.enable-remote-write-receiver \
  >"$tmp/central.log" 2>&1 &
pids+=($!)
"$prometheus_bin" --config.file="$tmp/host.yml" --storage.tsdb.path="$tmp/host-tsdb" \
  --web.listen-address="127.0.0.1:$host_port" >"$tmp/host.log" 2>&1 &
pids+=($!)

if wait_for 60 curl -fsS --max-time 2 "http://127.0.0.1:$central_port/-/ready" &&
  wait_for 60 curl -fsS --max-time 2 "http://127.0.0.1:$host_port/-/ready"; then
  pass "both Prometheus servers are ready (host 127.0.0.1:$host_port, central 127.0.0.1:$central_port)"
else
  fail "both Prometheus servers are ready within 60 s"
  exit 1
fi

central_query() {
  curl -sS --max-time 5 -G "http://127.0.0.1:$central_port/api/v1/query" --data-urlencode "query=$1"
}
has_series() {
  [[ $(central_query "$1" | jq '.data.result | length') -gt 0 ]]
}
if wait_for 90 has_series "pgwaitprof_up{host=\"$host_label\", target=\"rw\"} == 1"; then
  pass "central Prometheus holds pgwaitprof_up{host=\"$host_label\", target=\"rw\"} 1"
else
  fail "central Prometheus holds pgwaitprof_up{host=\"$host_label\"} within 90 s" \
    "$(central_query 'count by (__name__) ({__name__=~".+"})' | head -c 600)"
fi
if wait_for 30 has_series "pgwaitprof_snapshots_total{host=\"$host_label\"}"; then
  pass "central Prometheus holds the sampler's counters with the host label"
else
  fail "central Prometheus holds pgwaitprof_snapshots_total{host=\"$host_label\"}"
fi
names=$(central_query 'count by (__name__) ({__name__=~".+"})' | jq -r '.data.result[].metric.__name__' | sort)
if [[ -n $names ]] && ! grep -qv '^pgwaitprof' <<<"$names"; then
  pass "only pgwaitprof series were forwarded ($(wc -l <<<"$names") metric names)"
else
  fail "only pgwaitprof series were forwarded" "$names"
fi
