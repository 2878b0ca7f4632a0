#!/usr/bin/env bash
# The main job on the embedded default: installs dependencies, builds, and runs a profiled
# pgbench run against a scratch PostgreSQL cluster (created, initialised and removed by
# pgwaitprof itself), then prints the wait-event report and where its HTML is.
# Extra arguments go to `pgwaitprof run` (e.g. -- -c 16 -j 2 -T 60).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/deploy/install-deps.sh"
# The program only (the tests and benchmarks are built by deploy/test.sh and the perf scripts).
BUILD_DIR=$build BUILD_TARGET=pgwaitprof "$root/deploy/build.sh"

if [ $# -eq 0 ]; then
  # About a minute: three client counts of tpcb, 15 s each, on a fresh scratch cluster each.
  for clients in 1 4 16; do
    "$build/daemon/pgwaitprof" run --label "quickstart-c$clients" -- -c "$clients" -j 2 -T 15
  done
else
  "$build/daemon/pgwaitprof" run "$@"
fi
