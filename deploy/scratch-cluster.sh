#!/usr/bin/env bash
# Starts (start DIR [BIN_DIR]) or stops and removes (stop DIR) a scratch PostgreSQL cluster for
# the tests: unix socket in DIR, a free port, pg_stat_statements preloaded and created
# (compute_query_id on from 14), pg_wait_sampling too where the server has it (Debian's 15),
# pgbench tables at scale 2 (SCRATCH_SCALE); SCRATCH_MAX_CONNECTIONS (default 200) sets
# max_connections; prepared transactions enabled (2), so that every test server has their
# PGPROCs, which the memory source must not take for backends. BIN_DIR holds the server's initdb, pg_ctl and postgres (default Debian's
# PostgreSQL 15; the version matrix passes the servers of deploy/fetch-servers.sh); Debian's
# psql and pgbench 15 drive every major. Run as root, the server runs as the postgres user (a
# server the postgres user cannot reach, e.g. under /root/.cache, is hard-linked into DIR
# first). SCRATCH_PRELOAD, when set, replaces the preloaded libraries ("" for none:
# pg_stat_statements is still created, as on a server where it was created but never
# preloaded). "start" prints the PG* variables to export.
# SCRATCH_ISOLATION runs the server as a container would, on this host: "pid" in a PID (and
# mount) namespace of its own (`unshare --pid --fork --mount-proc`: the server's pids are not
# this host's); "chroot" under a root of its own in DIR/root (the server's binaries and libraries
# hard-linked or copied there; its data directory is /data, its socket directory /sock, this
# host's DIR/root/data and DIR/root/sock); "root:PATH" under the prepared root PATH (a Debian
# tree with the server installed, deploy/sid-root.sh: BIN_DIR is then the server's as the root
# names it; the cluster's directories go to PATH/scratch/NAME).
set -euo pipefail
action=$1
dir=$2
client=/usr/lib/postgresql/15/bin
as_server() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$action" in
  start)
    bin=${3:-$client}
    isolation=${SCRATCH_ISOLATION:-}
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    echo "$isolation" >"$dir/isolation"
    if [ -n "$isolation" ]; then
      [ "$(id -u)" -eq 0 ] || { echo "SCRATCH_ISOLATION needs root" >&2; exit 1; }
      exec "$(dirname "$0")/isolated-server.sh" start "$dir" "$bin" "$isolation"
    fi
    if ! as_server test -x "$bin/postgres"; then
      cp -al "$bin/.." "$dir/server" 2>/dev/null || cp -a "$bin/.." "$dir/server"
      bin=$dir/server/bin
    fi
    echo "$bin" >"$dir/bin-dir"
    major=$("$bin/postgres" --version | sed -E 's/.* ([0-9]+)[.a-z].*/\1/')
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_server "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log"
    preload=pg_stat_statements
    if [ -f "$bin/../lib/pg_wait_sampling.so" ] || [ -f "$bin/../lib/postgresql/pg_wait_sampling.so" ]; then
      preload=pg_wait_sampling,pg_stat_statements
    fi
    preload=${SCRATCH_PRELOAD-$preload}
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
max_connections = ${SCRATCH_MAX_CONNECTIONS:-200}
max_prepared_transactions = 2
shared_preload_libraries = '$preload'
CONF
    [ "$major" -ge 14 ] && echo "compute_query_id = on" >>"$dir/data/postgresql.conf"
    as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
    export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres
    "$client/pgbench" -i -q -s "${SCRATCH_SCALE:-2}" >"$dir/pgbench-init.log" 2>&1
    for extension in $(echo "pg_stat_statements ${preload//,/ }" | tr ' ' '\n' | sort -u); do
      "$client/psql" -X -q -c "CREATE EXTENSION IF NOT EXISTS $extension" >/dev/null
    done
    echo "export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres PGWAITPROF_TEST_PGDATA=$dir/data PGWAITPROF_TEST_PGBIN=$bin"
    ;;
  stop)
    if [ -s "$dir/isolation" ]; then
      exec "$(dirname "$0")/isolated-server.sh" stop "$dir"
    fi
    bin=$(cat "$dir/bin-dir" 2>/dev/null || echo "$client")
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_server "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start DIR [BIN_DIR] | stop DIR" >&2
    exit 2
    ;;
esac
