#!/usr/bin/env bash
# Installs pgwaitprof on this host as the Debian package: builds it (deploy/package.sh, into
# BUILD_DIR, default ./build) and installs it with apt-get, which also installs what it depends
# on. Running it again upgrades in place: dpkg keeps an edited /etc/pgwaitprof/pgwaitprof.yaml.
# Needs root. What the package installs, and how to remove or purge it: docs/daemon-and-monitoring.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if ((EUID != 0)); then
  echo "install.sh: installing a package needs root; run it with sudo" >&2
  exit 1
fi
deb=$(BUILD_DIR=${BUILD_DIR:-$root/build} "$root/deploy/package.sh")
# Over an installed package of the same version, --reinstall replaces the files all the same.
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --reinstall "$(realpath "$deb")"
echo "installed $deb; next: edit /etc/pgwaitprof/pgwaitprof.yaml, then: systemctl enable --now pgwaitprof"
