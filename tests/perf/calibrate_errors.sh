#!/usr/bin/env bash
# A/A calibration of the error bars and verdicts (issue 11). Runs tests/perf/calibration/aa.yaml
# as a matrix on a scratch cluster (10 identical 50 s runs of pgbench TPC-B at 4 clients as
# variants A and A2, interleaved with 5 runs with synchronous_commit off), then
# pgwaitprof_calibrate prints the coverage of one run's 95 % intervals, the false-positive rate
# of `compare` over every 3 + 3 split of the A/A runs and its power on the real effect, each
# with PASS or MISSED against issue 11's targets. Exit status 1 when a figure could not be
# measured (a missed target is a result, not an error), 2 when the matrix failed. 15 runs of
# 50 s plus about 2 s each: about 13 minutes (a --quick run took 62 s for its 9 runs of 5 s on
# the shared 2-core machine). A benchmark: run it after deploy/build.sh on an otherwise idle
# machine.
#
#   tests/perf/calibrate_errors.sh [--quick] [--keep]
#
# --quick  3 repeats of 5 s at scale 2 (9 runs, about a minute): checks that the pipeline
#          works end to end. Its runs are far too short for batch means, so the coverage
#          figures are NOT MEASURED and the exit status is 1; its other figures mean little.
# --keep   keep the runs' data directory (printed at the end) instead of removing it.
# --duration=S  runs of S seconds instead of the plan's 50 (e.g. 120: about 20 batches per run
#          after the warm-up, so that one run's interval can be checked; about 31 minutes).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
# pgwaitprof_calibrate is not in the default build: build it (and the program) first.
BUILD_DIR=$build BUILD_TARGET="pgwaitprof pgwaitprof_calibrate" "$root/deploy/build.sh"
overrides=()
keep=false
for argument in "$@"; do
  case $argument in
    --quick) overrides=(--duration 5 --repeats 3 --scale 2) ;;
    --keep) keep=true ;;
    --duration=*) overrides+=(--duration "${argument#--duration=}") ;;
    *) echo "calibrate_errors.sh: unknown option \"$argument\"" >&2; exit 2 ;;
  esac
done
data=$(mktemp -d /tmp/pgwaitprof-calibrate-XXXXXX)
if $keep; then
  trap 'echo "runs kept in $data" >&2' EXIT
else
  trap 'rm -rf "$data"' EXIT
fi
# A scratch cluster of its own: unset the PG* variables so that `matrix` starts one.
unset PGHOST PGPORT PGUSER PGDATABASE PGSERVICE
"$build/daemon/pgwaitprof" matrix --data-dir "$data" "${overrides[@]}" \
  "$root/tests/perf/calibration/aa.yaml" >"$data/matrix.out" 2>"$data/matrix.err" ||
  { cat "$data/matrix.err" >&2; exit 2; }
matrix=$(ls -d "$data"/matrix/*-aa)
echo "pgwaitprof_calibrate $matrix (plan tests/perf/calibration/aa.yaml${overrides[*]:+, ${overrides[*]}})"
"$build/tests/pgwaitprof_calibrate" "$matrix"
