#!/usr/bin/env bash
# Generates the memory source's shared-memory layouts (collectors/memory/layouts/pgNN.inc), one
# per PostgreSQL major, from that major's real server headers: never typed by hand, and not at
# build time (the build needs no server headers). Run it again when a new major or a layout
# change appears; the output is checked in.
#
#   deploy/generate-layouts.sh [--source MAJOR=DIR ...]
#
# Majors with a postgresql-server-dev-N package in a Debian release (13: bullseye, 15: bookworm,
# 17: trixie, 18: sid, 19: experimental) are fetched from the Debian archive with a private apt
# configuration in a temporary directory (its own sources list and state): `apt-get download`
# and `dpkg-deb -x`, nothing installed. 14 and 16 have no such package: give a PostgreSQL source
# tree of each (a release tarball unpacked, or a checkout of REL_14_x / REL_16_x) with --source;
# it is copied, configured and its generated headers made, and its src/include used. A major
# for which neither is at hand keeps its checked-in file. Needs python3, a C compiler, perl
# (for a source tree's generated headers) and apt-get.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/collectors/memory/layouts
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
declare -A sources=()
while [ $# -gt 0 ]; do
  case "$1" in
    --source)
      [[ "${2:-}" =~ ^([0-9]+)=(.+)$ ]] || { echo "generate-layouts: --source wants MAJOR=DIR" >&2; exit 2; }
      sources[${BASH_REMATCH[1]}]=$(cd "${BASH_REMATCH[2]}" && pwd)
      shift 2
      ;;
    *)
      echo "generate-layouts: unknown argument \"$1\"" >&2
      exit 2
      ;;
  esac
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/state/lists/partial" "$work/cache/archives/partial" "$work/debs"
touch "$work/state/status"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
cat >"$work/sources.list" <<LIST
deb [signed-by=$keyring] $mirror bullseye main
deb [signed-by=$keyring] $mirror bookworm main
deb [signed-by=$keyring] $security bookworm-security main
deb [signed-by=$keyring] $mirror trixie main
deb [signed-by=$keyring] $mirror sid main
deb [signed-by=$keyring] $mirror experimental main
LIST
apt_options=(
  -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/nonexistent
  -o "Dir::State=$work/state" -o "Dir::State::Lists=$work/state/lists"
  -o "Dir::State::status=$work/state/status" -o "Dir::Cache=$work/cache"
  -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)" -o Acquire::Languages=none
)
echo "generate-layouts: reading the package lists of bullseye, bookworm, trixie, sid and experimental"
apt-get "${apt_options[@]}" -q update >"$work/update.log" 2>&1 ||
  { cat "$work/update.log" >&2; exit 1; }

generate() {  # MAJOR INCLUDE_DIR VERSION ORIGIN
  python3 "$root/collectors/memory/generate_layout.py" --include "$2" --major "$1" \
    --version "$3" --origin "$4" --out "$out/pg$1.inc"
  echo "generate-layouts: PostgreSQL $3 ($4) -> collectors/memory/layouts/pg$1.inc"
}

for major in 13 14 15 16 17 18 19; do
  if [ -n "${sources[$major]:-}" ]; then
    tree=$work/src$major
    cp -a "${sources[$major]}" "$tree"
    version=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'$/\1/p" "$tree/configure")
    # Only the headers are wanted: no optional library is needed, and of the generated headers
    # those of the catalog, utils/ (errcodes.h, probes.h, ...), the nodes (16) and the LWLock
    # names.
    (cd "$tree" && ./configure --without-readline --without-zlib --without-icu >configure.log 2>&1) ||
      { tail -20 "$tree/configure.log" >&2; exit 1; }
    make -s -C "$tree/src/backend" submake-catalog-headers submake-utils-headers >/dev/null
    # 16 generates the node tags too.
    if [ -f "$tree/src/backend/nodes/gen_node_support.pl" ]; then
      make -s -C "$tree/src/backend" submake-nodes-headers >/dev/null
    fi
    if [ -f "$tree/src/backend/storage/lmgr/lwlocknames.txt" ]; then
      make -s -C "$tree/src/backend/storage/lmgr" lwlocknames.h >/dev/null
      ln -sf ../../backend/storage/lmgr/lwlocknames.h "$tree/src/include/storage/lwlocknames.h"
    fi
    generate "$major" "$tree/src/include" "$version" "the source tree of PostgreSQL $version"
    continue
  fi
  package=postgresql-server-dev-$major
  if ! (cd "$work/debs" && apt-get "${apt_options[@]}" -q download "$package" >/dev/null 2>&1); then
    echo "generate-layouts: no $package in the Debian archive and no --source $major=DIR:" \
      "collectors/memory/layouts/pg$major.inc stays as it is" >&2
    continue
  fi
  deb=$(ls "$work/debs/${package}"_*.deb)
  version=$(dpkg-deb -f "$deb" Version)
  dpkg-deb -x "$deb" "$work/x$major"
  generate "$major" "$work/x$major/usr/include/postgresql/$major/server" "${version%%-*}" \
    "Debian's $package $version"
  rm -f "$deb"
done
