#!/usr/bin/env bash
# The test command (README.md, .ci/run): installs dependencies, builds, starts a scratch
# PostgreSQL 15 cluster for the integration tests (the Prometheus test starts its own
# Prometheus), runs every test with ctest, and stops what it started.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/deploy/install-deps.sh"
BUILD_DIR=$build "$root/deploy/build.sh"

cluster=$(mktemp -d /tmp/pgwaitprof-test-XXXXXX)
trap '"$root/deploy/scratch-cluster.sh" stop "$cluster"' EXIT
eval "$("$root/deploy/scratch-cluster.sh" start "$cluster")"
echo "test.sh: scratch cluster at $PGHOST port $PGPORT"

cd "$build"
ctest --output-on-failure --timeout 600 "$@"
