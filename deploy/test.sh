#!/usr/bin/env bash
# The test command (README.md, .ci/run): installs dependencies, checks the formatting and the
# layering, builds, starts scratch PostgreSQL 15 clusters for the tests that need a server (the
# Prometheus tests start their own Prometheus), runs every test once with ctest, and stops what it
# started. Arguments go to ctest and run just those tests, on one cluster (e.g. deploy/test.sh -L
# unit).
#
# The tests run side by side on three scratch clusters, each test that needs a server on one of
# its own (ctest hands them out: tests/support/cluster_slot.cc), beside the version matrix
# (deploy/version-matrix.sh: PostgreSQL 13, 14, 16, 17 and 18 on clusters of their own). The rate
# checks (1000 Hz, the cap, the memory source at 10 kHz, the activity source's bias against the
# kernel) run alone at the end: they measure the machine; then the daemon with hundreds of
# targets, which loads it.
#
# deploy/test.sh --sanitized builds the program with ASan/UBSan (build-asan/) and runs the tests
# that drive a program (the fault tests, the daemon, run and CPU profile tests) against it: the
# check to run before a change lands (docs/development.md). It is not part of the test command:
# with it CI took 17 to 27 minutes on 2 cores, against a budget of 12 warm and 25 cold.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
sanitized_check=0
if [ "${1:-}" = --sanitized ]; then
  sanitized_check=1
  shift
  if [ $# -gt 0 ]; then
    echo "test.sh: error: --sanitized takes no other arguments" >&2
    exit 2
  fi
fi

"$root/deploy/install-deps.sh"
# The servers of the version matrix (deploy/version-matrix.sh), cached: fetched once.
"$root/deploy/fetch-servers.sh"
# PostgreSQL 19 (Debian experimental's release candidate) in a Debian sid root, for the tests of a
# server in a root of its own and of 19 (tests/integration/containers_test.cc): made once and
# cached by deploy/sid-root.sh (about four minutes and 100 MB from Debian's mirror), beside the
# builds, for the whole suite only. A root that cannot be made leaves those tests skipped, and
# says why before the tests start.
sid_pid=""
if [ $# -eq 0 ] && [ $sanitized_check -eq 0 ]; then
  sid_log=$(mktemp)
  "$root/deploy/sid-root.sh" >"$sid_log" 2>&1 &
  sid_pid=$!
fi
"$root/deploy/check-format.sh"
"$root/deploy/check-layers.py"
# Where the time goes: each phase's end, in seconds since the start (bash's SECONDS).
phase() { echo "test.sh: $1 at ${SECONDS} s"; }
phase "dependencies and checks done"

# One build with warnings as errors: the program, the test programs and the browser check's
# helper, optimised (-O2) as packagers build it.
BUILD_DIR=$build "$root/deploy/build.sh" -DPGWAITPROF_WERROR=ON
if [ $sanitized_check -eq 0 ]; then
  # The Debian package of that build, as it is (no second compile); deploy_package tests it.
  package_started=$(date +%s)
  BUILD_DIR=$build "$root/deploy/package.sh" >/dev/null
  echo "test.sh: packaged in $(($(date +%s) - package_started)) s"
else
  # The program alone with the sanitizers, unoptimised (-O0): it compiles in half the time of
  # -O1, and the sanitizers find the same errors (the rate checks, which measure speed, do not
  # run on it). UBSan's vptr, null, alignment, object-size and pointer-overflow checks are left
  # out: with them the build took 1.7 times as long (daemon_app.cc: 20.7 s of CPU against 12.5
  # s, 2026-12-06); ASan reports the bad accesses that null and object-size catch. Every other
  # UBSan check (signed overflow, shifts, bounds, enum and bool loads, float casts, ...) stays.
  # -DPGWAITPROF_SANITIZE_SKIP= builds with all of them.
  BUILD_DIR=$build-asan BUILD_TARGET=pgwaitprof "$root/deploy/build.sh" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DPGWAITPROF_SANITIZE=ON -DPGWAITPROF_WERROR=ON \
    -DPGWAITPROF_SANITIZE_SKIP=vptr,null,alignment,object-size,pointer-overflow
fi
phase "builds done"
if [ -n "$sid_pid" ]; then
  if wait "$sid_pid"; then
    phase "sid root with PostgreSQL 19 ready"
  else
    echo "test.sh: warning: no sid root with PostgreSQL 19, its tests skip: $(tail -1 "$sid_log")"
  fi
  rm -f "$sid_log"
fi

clusters=()
# shellcheck disable=SC2317  # called by the EXIT trap
stop_clusters() {
  for cluster in ${clusters[@]+"${clusters[@]}"}; do "$root/deploy/scratch-cluster.sh" stop "$cluster"; done
}
trap stop_clusters EXIT
# Starts a scratch cluster; $cluster_env is then the file of the variables that point tests at it.
start_cluster() {
  local cluster
  cluster=$(mktemp -d /tmp/pgwaitprof-test-XXXXXX)
  clusters+=("$cluster")
  cluster_env=$cluster/test.env
  "$root/deploy/scratch-cluster.sh" start "$cluster" >"$cluster_env"
  echo "test.sh: scratch cluster at $cluster"
}
# The daemon with as many targets as the server allows (up to 300) and pgbench -C beside it loads
# both cores: beside the other tests it starved the timed ones. It runs alone at the end.
many='^ManyTargets\.'
rate='^(DaemonTest\.(SamplesAt1000Hz|AtTheRateCap|MemorySourceSamplesAt10kHz)|LocalKernelCheckTest\.ActivityOnABusyLocalServer)'
cd "$build"
if [ $sanitized_check -eq 1 ]; then
  # The sanitizer build's program for the tests that drive it, in two lanes on clusters of their
  # own. The tests preload the collector of JSON outputs (tests/CMakeLists.txt) into what they
  # start, this program too: ASan need not be the first library then.
  export PGWAITPROF_TEST_BINARY=$build-asan/daemon/pgwaitprof
  export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:verify_asan_link_order=0
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  start_cluster
  faults_env=$cluster_env
  start_cluster
  (
    eval "$(cat "$faults_env")"
    ctest --output-on-failure --timeout 600 -L faults -E "$many" 2>&1 |
      sed -u 's/^/[asan faults] /'
  ) &
  faults_pid=$!
  failed=0
  eval "$(cat "$cluster_env")"
  ctest --output-on-failure --timeout 600 --no-tests=error \
    -R '^(DaemonRunTest|DaemonTest|RunTest|CpuProfileTest)\.' \
    -E "$rate" 2>&1 |
    sed -u 's/^/[asan] /' || failed=1
  wait "$faults_pid" || failed=1
  phase "sanitizer tests done"
  exit $failed
fi
if [ $# -gt 0 ]; then
  start_cluster
  eval "$(cat "$cluster_env")"
  ctest --output-on-failure --timeout 600 "$@"
  exit
fi

# The clusters the tests share out: ctest gives each test that needs one a cluster of its own
# (tests/support/cluster_slot.cc), so that as many such tests run side by side as there are
# clusters, and a test starts as soon as any cluster is free.
cluster_count=${PGWAITPROF_TEST_CLUSTER_COUNT:-3}
export PGWAITPROF_TEST_CLUSTERS=$build/test-clusters
mkdir -p "$PGWAITPROF_TEST_CLUSTERS"
resources='{"version": {"major": 1, "minor": 0}, "local": [{"cluster": ['
separator=''
for ((slot = 0; slot < cluster_count; slot++)); do
  start_cluster
  # scratch-cluster.sh's one "export NAME=value ..." line, a NAME=value a line.
  sed 's/^export //; s/ /\n/g' "$cluster_env" >"$PGWAITPROF_TEST_CLUSTERS/$slot.env"
  resources+="$separator{\"id\": \"$slot\", \"slots\": 1}"
  separator=', '
done
resources+=']}]}'
echo "$resources" >"$PGWAITPROF_TEST_CLUSTERS/resources.json"
# Without a record of an earlier run's times (a fresh clone), ctest would start the tests in the
# order they were defined, and a long test started last would end the run alone: the times of a
# run of 2026-12-07 tell it which to start first. Later runs use their own.
if [ ! -f Testing/Temporary/CTestCostData.txt ]; then
  mkdir -p Testing/Temporary
  cp "$root/tests/ctest_costs.txt" Testing/Temporary/CTestCostData.txt
fi

# The version matrix (its own clusters of the other majors) beside the rest, two majors at a
# time: with three beside four other tests (seven processes runnable on the two CPUs), a traced
# run's programs were not loaded within its 10 s to the first sample (2026-12-07).
(BUILD_DIR=$build VERSION_MATRIX_JOBS=2 "$root/deploy/version-matrix.sh" 2>&1 |
  sed -u 's/^/[versions] /') &
versions_pid=$!
failed=0
ctest --output-on-failure --timeout 600 -j "$cluster_count" \
  --resource-spec-file "$PGWAITPROF_TEST_CLUSTERS/resources.json" -LE versions \
  -E "$rate|$many" || failed=1
phase "tests done"
wait "$versions_pid" || failed=1
phase "version matrix done"

# The rate checks, alone on the machine. They measure the machine as much as the sampler: one
# that misses its rate is measured once more (a slow moment of a shared 2-core machine passes
# then; a slow sampler fails twice). Every other test runs once: a failure is a defect.
eval "$(cat "$cluster_env")"
ctest --output-on-failure --timeout 600 -R "$rate" --repeat until-pass:2 || failed=1
# The daemon with hundreds of targets, alone after them: it loads both cores.
ctest --output-on-failure --timeout 600 --no-tests=error -R "$many" || failed=1
if [ $failed -ne 0 ]; then echo "test.sh: some tests failed (see above)" >&2; fi
phase "rate checks done"
exit $failed
