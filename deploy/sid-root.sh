#!/usr/bin/env bash
# Makes the Debian sid root in which PostgreSQL 19 (Debian experimental's 19~rc1) runs on this
# host: its package needs a newer C library than bookworm's, so it runs in a chroot, which is
# also how the tests check a server under a root of its own (tests/integration/containers_test.cc,
# through deploy/isolated-server.sh's root:PATH). `debootstrap --variant=minbase sid`, then the
# server's package unpacked and the libraries it needs installed (the package itself is not
# installed: postgresql-common pulls perl, which sid cannot always install in step). About four
# minutes (233 s on a loaded 2-core machine) and 100 MB from Debian's mirror, once: idempotent, the root is kept in
# ${XDG_CACHE_HOME:-~/.cache}/pgwaitprof/roots/sid-pg19 (or $1). Prints the root's path. As root.
set -euo pipefail
cache=${XDG_CACHE_HOME:-$HOME/.cache}/pgwaitprof/roots
root=${1:-$cache/sid-pg19}
mirror=http://deb.debian.org/debian
if [ -f "$root/.complete" ]; then
  echo "$root"
  exit 0
fi
command -v debootstrap >/dev/null || apt-get install -y debootstrap >/dev/null
rm -rf "$root"
mkdir -p "$(dirname "$root")"
debootstrap --variant=minbase sid "$root" "$mirror" >"$root.log" 2>&1 ||
  { tail -5 "$root.log" >&2; exit 1; }
echo "deb $mirror experimental main" >"$root/etc/apt/sources.list.d/experimental.list"
# In a mount namespace of its own, so that /proc is unmounted with it whatever happens.
unshare --mount --fork chroot "$root" sh -ec '
  mount -t proc proc /proc
  export DEBIAN_FRONTEND=noninteractive
  apt="apt-get -o Acquire::Check-Valid-Until=false"
  $apt update
  cd /tmp
  $apt download postgresql-19/experimental
  $apt install -y --no-install-recommends libpq5/experimental libicu78 libxml2-16 liburing2 \
    libnuma1 libldap2 libgssapi-krb5-2 libxslt1.1 libzstd1 liblz4-1 libssl3t64 libsystemd0
  dpkg-deb -x /tmp/postgresql-19_*.deb /
  rm -f /tmp/postgresql-19_*.deb
  ! ldd /usr/lib/postgresql/19/bin/postgres | grep "not found"
  /usr/lib/postgresql/19/bin/postgres --version
' >>"$root.log" 2>&1 || { tail -5 "$root.log" >&2; exit 1; }
touch "$root/.complete"
echo "$root"
