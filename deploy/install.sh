#!/usr/bin/env bash
# Installs pgwaitprof on this host as the Debian package: builds it (deploy/package.sh, into
# BUILD_DIR, default ./build) and installs it with apt-get, which also installs what it depends
# on. Running it again upgrades in place: dpkg keeps an edited /etc/pgwaitprof/pgwaitprof.yaml.
# Needs root. What the package installs, and how to remove or purge it: docs/daemon-and-monitoring.md.
#
# --no-package [PREFIX]: no package, no root needed for a PREFIX of your own: builds the
# program, its man pages and its bash completion (not the tests) and copies them to
# PREFIX/bin, PREFIX/share/man/man1 and PREFIX/share/bash-completion/completions (PREFIX
# defaults to /usr/local; ~/.local works for one user).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
if [ "${1:-}" = --no-package ]; then
  prefix=${2:-/usr/local}
  command -v help2man >/dev/null ||
    { echo "install.sh: \"help2man\" is not installed (run deploy/install-deps.sh)" >&2; exit 1; }
  BUILD_DIR=$build BUILD_TARGET=pgwaitprof_package_files \
    "$root/deploy/build.sh" >&2
  install -D -m 0755 "$build/daemon/pgwaitprof" "$prefix/bin/pgwaitprof"
  install -d "$prefix/share/man/man1"
  install -m 0644 "$build"/package/man/*.1.gz "$prefix/share/man/man1/"
  install -D -m 0644 "$build/package/pgwaitprof.bash-completion" \
    "$prefix/share/bash-completion/completions/pgwaitprof"
  echo "installed $prefix/bin/pgwaitprof, its man pages in $prefix/share/man/man1 and its bash completion in $prefix/share/bash-completion/completions"
  exit 0
fi
if ((EUID != 0)); then
  echo "install.sh: installing a package needs root; run it with sudo (or: install.sh --no-package PREFIX)" >&2
  exit 1
fi
deb=$(BUILD_DIR=$build "$root/deploy/package.sh")
# Over an installed package of the same version, --reinstall replaces the files all the same.
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall "$(realpath "$deb")"
echo "installed $deb; next: edit /etc/pgwaitprof/pgwaitprof.yaml, then: systemctl enable --now pgwaitprof"
