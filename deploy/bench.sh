#!/usr/bin/env bash
# Runs the sampler benchmark (tests/perf/bench_sampler.cc) against a scratch PostgreSQL 15
# cluster that it starts, and stops again however it ends. Run it after deploy/install-deps.sh
# and deploy/build.sh (BUILD_DIR as for build.sh, default ./build). Extra arguments go to
# pgwaitprof_bench, e.g. --seconds 10. Prints figures and a summary against the targets; exits
# 1 only when something could not be measured. Run it on an otherwise idle machine: the
# figures measure the machine as much as the sampler.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bench=$build/tests/pgwaitprof_bench
daemon=$build/daemon/pgwaitprof
# The benchmark programs are not in the default build: build them (and the program) here.
BUILD_DIR=$build BUILD_TARGET="pgwaitprof pgwaitprof_bench" "$root/deploy/build.sh"

for binary in "$bench" "$daemon"; do
  if [[ ! -x $binary ]]; then
    echo "bench.sh: error: could not find executable \"$binary\"" >&2
    echo "bench.sh: hint: Build it first with deploy/build.sh (BUILD_DIR=$build)." >&2
    exit 1
  fi
done

cluster=$(mktemp -d /tmp/pgwaitprof-bench-cluster-XXXXXX)
trap '"$root/deploy/scratch-cluster.sh" stop "$cluster"' EXIT
eval "$("$root/deploy/scratch-cluster.sh" start "$cluster")"
echo "bench.sh: scratch cluster at $PGHOST port $PGPORT"

"$bench" --pgwaitprof "$daemon" "$@"
