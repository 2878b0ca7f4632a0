#!/usr/bin/env bash
# The test command (README.md, .ci/run): installs dependencies, checks the formatting and the
# layering, builds, starts scratch PostgreSQL 15 clusters for the tests that need a server (the
# Prometheus tests start their own Prometheus), runs every test with ctest, and stops what it
# started. Arguments go to ctest and run just those tests, on one cluster, without the sanitizer
# run (e.g. deploy/test.sh -L unit).
#
# Three lanes run side by side, each on its own cluster: the tests of the release build; the fault
# tests driving the ASan/UBSan build of the program; and the version matrix
# (deploy/version-matrix.sh: PostgreSQL 13, 14, 16, 17 and 18 on clusters of their own), then the
# daemon and run tests against the sanitizer build, then the package test, then the longest
# release tests. The rate checks
# (1000 Hz, the cap, the memory source at 10 kHz, the activity source's bias against the kernel)
# run alone at the end: they measure the machine; then the daemon with hundreds of targets,
# which loads it.
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

# The sanitizer suite: every fault test (label faults), the daemon and run tests, and the CPU
# profile's (its ring buffers are read with bounds the sanitizers check).
sanitized='^(DaemonRunTest|DaemonTest|RunTest|CpuProfileTest)\.'
# The two longest release tests (45 s and 36 s of pgbench) and the two Prometheus end-to-end
# tests (41 s and 26 s) run in the third lane, which ends well before the other two without them
# (cold run of 2026-12-05: release 579 s, sanitizer faults 547 s, third lane 391 s); and since
# the cold run of 2026-12-06 (release 591 s, sanitizer faults 541 s, third lane about 450 s) the
# next three longest release tests too (31 s, 29 s and 26 s). (Moved once before and moved back
# when the scratch-directory failures came with them: those were the sweep of a pgwaitprof in
# another PID namespace, ContainersTest's, removing other lanes' live clusters, fixed since.)
longest='^(MemorySourceTest\.AgreesWithActivityAndPgWaitSampling|MatrixTest\.ClientsAuto|deploy_prometheus_e2e|deploy_prometheus_remote_write|HistoryTest\.TrendNamesTheRunWhereSynchronousCommitWentOn|MatrixTest\.ResumeAfterInterruptionCompletesOnlyTheMissingRuns|remote_sampler$)'
# Likewise the interruptions of scratch-cluster runs (54 s), fault tests that the third lane runs
# against the sanitizer build with the daemon and run tests: the fault lane is the longest.
interrupts='^Stages/ScratchInterrupt\.'
# The daemon with as many targets as the server allows (up to 300) and pgbench -C beside it loads
# both cores for two minutes: beside the other lanes it starved the sanitizer build's timed run
# tests (196 of 918 snapshots at 200 Hz). It runs alone at the end, with the release build.
many='^ManyTargets\.'
rate='^(DaemonTest\.(SamplesAt1000Hz|AtTheRateCap|MemorySourceSamplesAt10kHz)|MemorySourceTest\.ActivityOnABusyLocalServer)'
start_cluster
release_env=$cluster_env
start_cluster
sanitizer_env=$cluster_env
start_cluster
third_env=$cluster_env

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
# Each suite's lines are prefixed with its name; each ends with ctest's own summary.
(
  eval "$(cat "$release_env")"
  ctest --output-on-failure --timeout 600 -j "$(nproc)" "${retry_once[@]}" -LE 'faults|versions' \
    -E "$sanitized|$longest|$rate|^deploy_package\$" 2>&1 | sed -u 's/^/[release] /'
) &
release_pid=$!
# The sanitizer build's program for the tests that drive it. The tests preload the collector of
# JSON outputs (tests/CMakeLists.txt) into what they start, this program too: ASan need not be
# the first library then.
sanitized_program() {
  export PGWAITPROF_TEST_BINARY=$build-asan/daemon/pgwaitprof
  export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:verify_asan_link_order=0
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
}
(
  eval "$(cat "$sanitizer_env")"
  sanitized_program
  ctest --output-on-failure --timeout 600 "${retry_once[@]}" -L faults -E "$interrupts|$many" 2>&1 |
    sed -u 's/^/[asan] /'
) &
sanitizer_pid=$!
# The third lane, on a cluster of its own: the version matrix (its own clusters of the other
# majors), then the daemon and run tests and the scratch interruptions against the sanitizer
# build, then the package test (it installs the package on this machine and runs it against this
# lane's cluster), then the longest release tests. A pattern that matches no test fails.
(
  eval "$(cat "$third_env")"
  status=0
  # (pipefail: a pipeline fails with its command's status)
  BUILD_DIR=$build "$root/deploy/version-matrix.sh" 2>&1 | sed -u 's/^/[versions] /' || status=1
  (
    sanitized_program
    ctest --output-on-failure --timeout 600 --no-tests=error "${retry_once[@]}" \
      -R "$sanitized|$interrupts" -E "$rate" 2>&1 | sed -u 's/^/[asan] /'
  ) || status=1
  ctest --output-on-failure --timeout 600 -R '^deploy_package$' 2>&1 | sed -u 's/^/[package] /' ||
    status=1
  ctest --output-on-failure --timeout 600 --no-tests=error "${retry_once[@]}" -R "$longest" 2>&1 |
    sed -u 's/^/[longest] /' || status=1
  exit $status
) &
third_pid=$!
failed=0
wait "$release_pid" || failed=1
phase "release suite done"
wait "$sanitizer_pid" || failed=1
phase "sanitizer fault tests done"
wait "$third_pid" || failed=1
phase "version matrix, sanitizer daemon and run tests, package test done"

# The rate checks of the release build, alone on the machine. They measure the machine as much
# as the sampler: one that misses its rate is run once more (a slow moment of a shared 2-core
# machine passes then; a slow sampler fails twice).
eval "$(cat "$release_env")"
ctest --output-on-failure --timeout 600 -R "$rate" --repeat until-pass:2 || failed=1
# The daemon with hundreds of targets runs once more when it fails, like the lanes' tests: on
# 2026-12-06 its SIGTERM-to-exit took 1.9 s in one run of four (the daemon's own stop 0.26 s of it;
# the rest not yet explained), against its bound of 1.5 s.
ctest --output-on-failure --timeout 600 --no-tests=error "${retry_once[@]}" -R "$many" || failed=1
if [ $failed -ne 0 ]; then echo "test.sh: some tests failed (see above)" >&2; fi
phase "rate checks done"
exit $failed
