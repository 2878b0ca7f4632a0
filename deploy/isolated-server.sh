#!/usr/bin/env bash
# A scratch PostgreSQL cluster isolated as a container isolates one, on this host, for the tests
# of servers in containers and chroots (scratch-cluster.sh's SCRATCH_ISOLATION calls it, as root):
#   start DIR BIN_DIR pid        the server in a PID and mount namespace of its own
#                                (unshare --pid --fork --mount-proc, as user postgres)
#   start DIR BIN_DIR chroot     the server under DIR/root, a minimal root of BIN_DIR's server,
#                                its libraries and time zones, hard-linked (copied across file
#                                systems): seconds, no network
#   start DIR BIN_DIR root:PATH  the server under PATH, a Debian tree with the server installed
#                                (deploy/sid-root.sh), BIN_DIR as that tree names it
#   stop DIR
# The cluster is set up as scratch-cluster.sh sets up its own (pgbench tables, extensions,
# prepared transactions) and "start" prints the PG* variables to export; PGHOST and
# PGWAITPROF_TEST_PGDATA are this host's paths.
set -euo pipefail
action=$1
dir=$2
client=/usr/lib/postgresql/15/bin
uid=$(id -u postgres)
gid=$(id -g postgres)

# Where each file of the server's dynamic libraries is (ldd), for a minimal root.
libraries() {
  ldd "$@" 2>/dev/null | sed -nE 's@.*=> (/[^ ]+) .*@\1@p; s@^\s*(/[^ ]+) \(.*@\1@p' | sort -u
}

# Hard links (copies across file systems) of PATH... into the root at the same paths.
place() {
  local root=$1
  shift
  for path in "$@"; do
    [ -e "$path" ] || continue
    mkdir -p "$root$(dirname "$path")"
    cp -al "$path" "$root$path" 2>/dev/null || cp -a "$path" "$root$path"
  done
}

make_root() {
  local root=$1 bin=$2
  local home
  home=$(cd "$bin/.." && pwd)
  mkdir -p "$root"/{dev/shm,tmp,etc,usr/share}
  chmod 1777 "$root/tmp" "$root/dev/shm"
  mknod -m 666 "$root/dev/null" c 1 3
  place "$root" "$home" /usr/share/zoneinfo
  [ -d /usr/share/postgresql/"$(basename "$home")" ] &&
    place "$root" /usr/share/postgresql/"$(basename "$home")"
  for library in $(libraries "$bin"/postgres "$home"/lib/*.so); do
    mkdir -p "$root$(dirname "$library")"
    cp -L "$library" "$root$library"
  done
  grep -E '^(root|postgres):' /etc/passwd >"$root/etc/passwd"
  grep -E '^(root|postgres):' /etc/group >"$root/etc/group"
}

in_root() {
  local root=$1
  shift
  chroot --userspec="$uid:$gid" --groups="$gid" "$root" "$@"
}

case "$action" in
  start)
    bin=$3
    isolation=$4
    # A start that fails leaves nothing running or behind, and says why.
    trap 'tail -5 "$dir"/*.log >&2 2>/dev/null; "$0" stop "$dir" >/dev/null 2>&1' EXIT
    echo "$bin" >"$dir/bin-dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    root=""
    inside=$dir
    case "$isolation" in
      pid) ;;
      chroot)
        root=$dir/root
        make_root "$root" "$bin"
        inside=""
        ;;
      root:*)
        root=${isolation#root:}
        inside=/scratch/$(basename "$dir")-$$
        echo "$root$inside" >"$dir/root-dir"
        # initdb looks its user up: the root's passwd names this host's postgres uid.
        grep -q "^[^:]*:[^:]*:$uid:" "$root/etc/passwd" ||
          echo "pgwaitprof-postgres:x:$uid:$gid::/tmp:/bin/sh" >>"$root/etc/passwd"
        ;;
      *)
        echo "unknown SCRATCH_ISOLATION \"$isolation\" (pid, chroot or root:PATH)" >&2
        exit 2
        ;;
    esac
    echo "$root" >"$dir/root-path"
    mkdir -p "$root$inside/sock"
    chown postgres: "$root$inside" "$root$inside/sock"
    data=$inside/data  # as the server names it
    # initdb runs the server through /bin/sh, which a minimal root has not: the host's initdb
    # (the same binaries) writes that root's data directory.
    if [ "$isolation" != "${isolation#root:}" ]; then
      in_root "$root" "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C \
        --no-sync >"$dir/initdb.log"
    else
      runuser -u postgres -- "$bin/initdb" -D "$root$data" -U postgres -A trust -E UTF8 \
        --locale=C --no-sync >"$dir/initdb.log"
    fi
    lib=$(cd "$root$bin/.." && pwd)/lib
    preload=pg_stat_statements
    [ -f "$lib/pg_wait_sampling.so" ] && preload=pg_wait_sampling,pg_stat_statements
    major=$(sed -n 1p "$root$data/PG_VERSION")
    cat >>"$root$data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$inside/sock'
port = $port
max_connections = ${SCRATCH_MAX_CONNECTIONS:-200}
max_prepared_transactions = 2
shared_preload_libraries = '$preload'
compute_query_id = on
CONF
    [ "$major" -ge 14 ] || sed -i '/^compute_query_id/d' "$root$data/postgresql.conf"
    if [ "$isolation" = pid ]; then
      setsid unshare --pid --fork --mount-proc --kill-child -- \
        runuser -u postgres -- "$bin/postgres" -D "$data" >"$dir/server.log" 2>&1 </dev/null &
      echo $! >"$dir/namespace-pid"
    else
      setsid chroot --userspec="$uid:$gid" --groups="$gid" "$root" "$bin/postgres" -D "$data" \
        >"$dir/server.log" 2>&1 </dev/null &
    fi
    export PGHOST=$root$inside/sock PGPORT=$port PGUSER=postgres PGDATABASE=postgres
    for _ in $(seq 1 600); do
      "$client/pg_isready" -q && break
      sleep 0.1
    done
    "$client/pg_isready" -q || { cat "$dir/server.log" >&2; exit 1; }
    "$client/pgbench" -i -q -s "${SCRATCH_SCALE:-2}" >"$dir/pgbench-init.log" 2>&1
    for extension in $(echo "${preload//,/ }" | tr ' ' '\n' | sort -u); do
      "$client/psql" -X -q -c "CREATE EXTENSION IF NOT EXISTS $extension" >/dev/null
    done
    trap - EXIT
    echo "export PGHOST=$PGHOST PGPORT=$port PGUSER=postgres PGDATABASE=postgres PGWAITPROF_TEST_PGDATA=$root$data PGWAITPROF_TEST_PGBIN=$bin"
    ;;
  stop)
    root=$(cat "$dir/root-path" 2>/dev/null || true)
    data=$(cat "$dir/root-dir" 2>/dev/null || echo "$dir")/data
    [ -n "$root" ] && [ ! -s "$dir/root-dir" ] && data=$root/data
    if [ -s "$dir/namespace-pid" ]; then
      # The postmaster's pid in postmaster.pid is its namespace's: the host's is unshare's
      # grandchild (unshare, then runuser as the namespace's first process).
      holder=$(cat "$dir/namespace-pid")
      pkill -INT -P "$holder" -x postgres || true
      for child in $(pgrep -P "$holder" || true); do
        pkill -INT -P "$child" -x postgres || true
      done
      for _ in $(seq 1 300); do kill -0 "$holder" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$holder" 2>/dev/null || true
    elif [ -f "$data/postmaster.pid" ]; then
      postmaster=$(sed -n 1p "$data/postmaster.pid")
      kill -INT "$postmaster" 2>/dev/null || true
      for _ in $(seq 1 300); do kill -0 "$postmaster" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$postmaster" 2>/dev/null || true
    fi
    [ -s "$dir/root-dir" ] && rm -rf "$(cat "$dir/root-dir")"
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start DIR BIN_DIR pid|chroot|root:PATH | stop DIR" >&2
    exit 2
    ;;
esac
