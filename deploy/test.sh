#!/usr/bin/env bash
# The test command (README.md, .ci/run): installs dependencies, builds, starts a scratch
# PostgreSQL 15 cluster for the integration tests (the Prometheus test starts its own
# Prometheus), runs every test with ctest, and stops what it started.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/deploy/install-deps.sh"
"$root/deploy/check-format.sh"
# Warnings are errors here (not for packagers), in the default build and in a Release build of
# the program, which is what packagers make.
BUILD_DIR=$build "$root/deploy/build.sh" -DPGWAITPROF_WERROR=ON
BUILD_DIR=$build-release BUILD_TARGET=pgwaitprof "$root/deploy/build.sh" \
  -DCMAKE_BUILD_TYPE=Release -DPGWAITPROF_WERROR=ON

# The sanitizer build (ASan + UBSan, -O1): only the program and the two test programs that
# start it; its tests find this build's binary (PGWAITPROF_BINARY is compiled in).
cmake -S "$root" -B "$build-asan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DPGWAITPROF_SANITIZE=ON -DPGWAITPROF_WERROR=ON >/dev/null
cmake --build "$build-asan" -j "$(nproc)" \
  --target pgwaitprof pgwaitprof_fault_tests pgwaitprof_integration_tests

cluster=$(mktemp -d /tmp/pgwaitprof-test-XXXXXX)
trap '"$root/deploy/scratch-cluster.sh" stop "$cluster"' EXIT
eval "$("$root/deploy/scratch-cluster.sh" start "$cluster")"
echo "test.sh: scratch cluster at $PGHOST port $PGPORT"

cd "$build"
ctest --output-on-failure --timeout 600 "$@"

# Under the sanitizers: the fault tests, and the tests of the control socket, the daemon and
# runs (not the 1000 Hz rate check: ASan's slowdown is not the sampler's). Any report fails.
if [ $# -eq 0 ]; then
  cd "$build-asan"
  export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  ctest --output-on-failure --timeout 600 -R '(Faults|ScratchInterrupt|DiskFull|DaemonRunTest|DaemonTest|RunTest)\.' \
    -E 'SamplesAt1000Hz'
fi
