#!/usr/bin/env bash
# The version matrix of deploy/test.sh (issue 29): one scratch cluster per supported major (13,
# 14, 16, 17, 18: the servers deploy/fetch-servers.sh keeps in its cache; and Debian's 15, for
# the traced source's tests of issue 48), started side by side, then the tests labelled
# "versions" (tests/versions), one ctest test per major, side by side too, and the matrix of two
# builds as variants (versions_builds), given the clusters' bin directories in
# PGWAITPROF_TEST_SERVER_BINS ("16=DIR 17=DIR ...": the copies the postgres user can enter); the
# clusters are stopped at the end. BUILD_DIR as for deploy/test.sh.
# Small clusters (scale 1, 50 connections): the tests run 3-4 s of pgbench on each.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/deploy/fetch-servers.sh"

clusters=()
# shellcheck disable=SC2317  # called by the EXIT trap
stop_clusters() {
  for cluster in ${clusters[@]+"${clusters[@]}"}; do "$root/deploy/scratch-cluster.sh" stop "$cluster"; done
}
trap stop_clusters EXIT
pids=()
for bin in $("$root/deploy/fetch-servers.sh" --list) /usr/lib/postgresql/15/bin; do
  cluster=$(mktemp -d /tmp/pgwaitprof-versions-XXXXXX)
  clusters+=("$cluster")
  SCRATCH_SCALE=1 SCRATCH_MAX_CONNECTIONS=50 \
    "$root/deploy/scratch-cluster.sh" start "$cluster" "$bin" >"$cluster.env" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
majors=()
server_bins=()
for cluster in "${clusters[@]}"; do
  # Each cluster's PG* variables name it to the tests as PGWAITPROF_TEST_PG<major>.
  read -r major bin conninfo < <(
    # shellcheck disable=SC1090
    source "$cluster.env"
    echo "$("$PGWAITPROF_TEST_PGBIN/postgres" --version | sed -E 's/.* ([0-9]+)[.a-z].*/\1/')" \
      "$PGWAITPROF_TEST_PGBIN" "host=$PGHOST port=$PGPORT user=postgres dbname=postgres"
  )
  export "PGWAITPROF_TEST_PG$major=$conninfo"
  majors+=("$major")
  server_bins+=("$major=$bin")
  rm -f "$cluster.env"
done
export PGWAITPROF_TEST_SERVER_BINS="${server_bins[*]}"
echo "version-matrix: clusters of PostgreSQL ${majors[*]} started"
cd "$build"
# Each major's tests run once: a failure is a defect. On 2026-12-05, beside the suite's other
# tests, the memory source's kernel check cried wolf (sampled running above the kernel's on-CPU +
# run-queue time: pg13 0.90 against 0.71, pg14 1.11 against 0.78, pg17 0.75 against 0.35), found
# on 2026-12-06 (a 90 % interval of few intervals; model/kernel_check.h) and mended; a retry hid
# it until then.
ctest --output-on-failure --timeout 180 -L versions -j "${VERSION_MATRIX_JOBS:-3}"
