#!/usr/bin/env bash
# Starts (start DIR) or stops and removes (stop DIR) a scratch PostgreSQL 15 cluster for the
# tests: unix socket in DIR, a free port, pg_wait_sampling and pg_stat_statements preloaded and
# created (compute_query_id on), pgbench tables at scale 2; SCRATCH_MAX_CONNECTIONS (default
# 200) sets max_connections. Run as root, the server runs as the postgres user. "start" prints
# the PG* variables to export.
set -euo pipefail
action=$1
dir=$2
bin=/usr/lib/postgresql/15/bin
as_server() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$action" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_server "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log"
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
max_connections = ${SCRATCH_MAX_CONNECTIONS:-200}
shared_preload_libraries = 'pg_wait_sampling,pg_stat_statements'
compute_query_id = on
CONF
    as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
    export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres
    "$bin/pgbench" -i -q -s 2 >"$dir/pgbench-init.log" 2>&1
    "$bin/psql" -X -q -c "CREATE EXTENSION IF NOT EXISTS pg_wait_sampling" >/dev/null
    "$bin/psql" -X -q -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
    echo "export PGHOST=$dir PGPORT=$port PGUSER=postgres PGDATABASE=postgres PGWAITPROF_TEST_PGDATA=$dir/data PGWAITPROF_TEST_PGBIN=$bin"
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_server "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
