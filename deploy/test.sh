#!/usr/bin/env bash
# The test command (README.md, .ci/run): installs dependencies, checks the formatting and the
# layering, builds, starts scratch PostgreSQL 15 clusters for the tests that need a server (the
# Prometheus tests start their own Prometheus), runs every test with ctest, and stops what it
# started. Arguments go to ctest and run just those tests, on one cluster, without the sanitizer
# run (e.g. deploy/test.sh -L unit).
#
# Four lanes run side by side, each on its own cluster (what each runs: below): the tests of the
# release build; the fault tests driving the ASan/UBSan build of the program; the version matrix
# (deploy/version-matrix.sh: PostgreSQL 13, 14, 16, 17 and 18 on clusters of their own), then the
# daemon and run tests against the sanitizer build, the package test and the longest release
# tests; and the signal classes against the sanitizer build, then more release tests. The rate
# checks (1000 Hz, the cap, the memory source at 10 kHz, the activity source's bias against the
# kernel) run alone at the end: they measure the machine; then the daemon with hundreds of
# targets, which loads it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/deploy/install-deps.sh"
# The servers of the version matrix (deploy/version-matrix.sh), cached: fetched once.
"$root/deploy/fetch-servers.sh"
# PostgreSQL 19 (Debian experimental's release candidate) in a Debian sid root, for the tests of a
# server in a root of its own and of 19 (tests/integration/containers_test.cc): made once and
# cached by deploy/sid-root.sh (about four minutes and 100 MB from Debian's mirror), beside the
# builds, for the whole suite only. A root that cannot be made leaves those tests skipped, and
# says why before the tests start.
sid_pid=""
if [ $# -eq 0 ]; then
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
# helper, optimised (-O2) as packagers build it. Then the program alone with the sanitizers.
BUILD_DIR=$build "$root/deploy/build.sh" -DPGWAITPROF_WERROR=ON
# The Debian package of that build, as it is (no second compile); deploy_package tests it.
package_started=$(date +%s)
BUILD_DIR=$build "$root/deploy/package.sh" >/dev/null
echo "test.sh: packaged in $(($(date +%s) - package_started)) s"
# Unoptimised (-O0): it compiles in half the time of -O1, and the sanitizers find the same
# errors (the rate checks, which measure speed, do not run on it). UBSan's vptr, null,
# alignment, object-size and pointer-overflow checks are left out: with them the build took 1.7
# times as long (daemon_app.cc: 20.7 s of CPU against 12.5 s, 2026-12-06), which the cold CI
# budget cannot carry; ASan reports the bad accesses that null and object-size catch. Every
# other UBSan check (signed overflow, shifts, bounds, enum and bool loads, float casts, ...)
# stays. -DPGWAITPROF_SANITIZE_SKIP= builds with all of them.
BUILD_DIR=$build-asan BUILD_TARGET=pgwaitprof "$root/deploy/build.sh" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DPGWAITPROF_SANITIZE=ON -DPGWAITPROF_WERROR=ON \
  -DPGWAITPROF_SANITIZE_SKIP=vptr,null,alignment,object-size,pointer-overflow
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

cd "$build"
if [ $# -gt 0 ]; then
  start_cluster
  eval "$(cat "$cluster_env")"
  ctest --output-on-failure --timeout 600 "$@"
  exit
fi

# Four lanes side by side, each on a cluster of its own, balanced by the test time of the CI run
# of 2026-12-06 (5c729a7: release 800 s, sanitizer faults 759 s, third lane 805 s with three
# lanes; a fourth lane uses the CPU time that the lanes' waits leave idle):
# 1. the release build's tests, but for those of the other lanes;
# 2. the fault tests (label faults) against the sanitizer build but for the signal classes, then
#    the memory source's release tests;
# 3. the version matrix (deploy/version-matrix.sh), then the daemon, run and CPU profile tests
#    against the sanitizer build (their ring buffers are read with bounds the sanitizers check),
#    then the package test, then the longest release tests;
# 4. the signal classes and the watchdog as a victim against the sanitizer build (325 s), then
#    the stall, experiment and container release tests.
# A pattern that matches no test fails (--no-tests=error), so a renamed test cannot drop out.
sanitized='^(DaemonRunTest|DaemonTest|RunTest|CpuProfileTest)\.'
signals='^(Endings/SignalClass|Phases/WatchdogVictim)\.'
# The memory source's and the fourth lane's release tests.
memory='^MemorySourceTest\.'
fourth='^(ExplainWaitsTest|ExperimentsTest|ContainersTest)\.'
# The longest release tests (45, 41 and 26 s): the memory source against pg_wait_sampling and
# the two Prometheus end-to-end tests, last in the third lane.
longest='^(MemorySourceTest\.AgreesWithActivityAndPgWaitSampling|deploy_prometheus_e2e|deploy_prometheus_remote_write)'
# The daemon with as many targets as the server allows (up to 300) and pgbench -C beside it loads
# both cores for two minutes: beside the other lanes it starved the sanitizer build's timed run
# tests (196 of 918 snapshots at 200 Hz). It runs alone at the end, with the release build.
many='^ManyTargets\.'
rate='^(DaemonTest\.(SamplesAt1000Hz|AtTheRateCap|MemorySourceSamplesAt10kHz)|MemorySourceTest\.ActivityOnABusyLocalServer)'
envs=()
for _ in 1 2 3 4; do
  start_cluster
  envs+=("$cluster_env")
done

# A stop-gap, not a fix: a test that fails in these lanes runs once more, and a second failure
# still fails the suite. Of the tests it was taken for on 2026-12-05, four have had their causes
# found and fixed since (RunTest.CompletedRunWritesEveryFileWithConsistentTotals asserts what a
# loaded machine can give, RunTest.ServerRateFollowsTheLoadGeneratorsIntervalByInterval reads the
# server's counters ten times an interval, MetricsAbuse.AReconnectingFloodDoesNotKeepAScraperOut
# has a short accept queue, ExplainWaitsTest.RunQueueOfACpuBoundLoadIsMeasuredNotGuessed no longer
# counts pgwaitprof's own connection as load); two are open defects of issue 47 item 13:
# RunTest.SysbenchAgreesWithTheServersCommitRate (an autovacuum in the window counts on the
# server's side) and WatchdogVictim/load_watchdog (a scratch process left once, not reproduced
# since; the test now names it).
retry_once=(--repeat until-pass:2)
# ctest of these arguments with the lane's lines prefixed by `name`; with --no-tests=error.
lane_ctest() {
  local name=$1
  shift
  ctest --output-on-failure --timeout 600 --no-tests=error "${retry_once[@]}" "$@" 2>&1 |
    sed -u "s/^/[$name] /"
}
# The sanitizer build's program for the tests that drive it. The tests preload the collector of
# JSON outputs (tests/CMakeLists.txt) into what they start, this program too: ASan need not be
# the first library then.
sanitized_program() {
  export PGWAITPROF_TEST_BINARY=$build-asan/daemon/pgwaitprof
  export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:verify_asan_link_order=0
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
}
# Each lane's status is its commands' worst (pipefail: a pipeline fails with its command's).
pids=()
(
  eval "$(cat "${envs[0]}")"
  lane_ctest release -j "$(nproc)" -LE 'faults|versions' \
    -E "$sanitized|$memory|$fourth|$longest|$rate|^deploy_package\$"
) &
pids+=($!)
(
  eval "$(cat "${envs[1]}")"
  status=0
  (
    sanitized_program
    lane_ctest asan -L faults -E "$signals|$many"
  ) || status=1
  lane_ctest memory -R "$memory" -E "$longest|$rate" || status=1
  exit $status
) &
pids+=($!)
(
  eval "$(cat "${envs[2]}")"
  status=0
  BUILD_DIR=$build "$root/deploy/version-matrix.sh" 2>&1 | sed -u 's/^/[versions] /' || status=1
  (
    sanitized_program
    lane_ctest asan -R "$sanitized" -E "$rate"
  ) || status=1
  ctest --output-on-failure --timeout 600 -R '^deploy_package$' 2>&1 | sed -u 's/^/[package] /' ||
    status=1
  lane_ctest longest -R "$longest" || status=1
  exit $status
) &
pids+=($!)
(
  eval "$(cat "${envs[3]}")"
  status=0
  (
    sanitized_program
    lane_ctest signals -R "$signals"
  ) || status=1
  lane_ctest fourth -R "$fourth" || status=1
  exit $status
) &
pids+=($!)
failed=0
lane=1
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
  phase "lane $lane done"
  lane=$((lane + 1))
done

# The rate checks of the release build, alone on the machine. They measure the machine as much
# as the sampler: one that misses its rate is run once more (a slow moment of a shared 2-core
# machine passes then; a slow sampler fails twice).
eval "$(cat "${envs[0]}")"
ctest --output-on-failure --timeout 600 -R "$rate" --repeat until-pass:2 || failed=1
# The daemon with hundreds of targets runs once more when it fails, like the lanes' tests: on
# 2026-12-06 its SIGTERM-to-exit took 1.9 s in one run of four (the daemon's own stop 0.26 s of it;
# the rest not yet explained), against its bound of 1.5 s.
ctest --output-on-failure --timeout 600 --no-tests=error "${retry_once[@]}" -R "$many" || failed=1
if [ $failed -ne 0 ]; then echo "test.sh: some tests failed (see above)" >&2; fi
phase "rate checks done"
exit $failed
