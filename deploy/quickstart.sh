#!/usr/bin/env bash
# The main job on the embedded default, in three steps, each announced with how long it takes:
#  1. installs the dependencies (deploy/install-deps.sh; nothing to do when they are there);
#  2. builds the program alone, build/daemon/pgwaitprof (not the tests: deploy/test.sh builds
#     those): about 5 minutes on 2 cores the first time, seconds when it is up to date, with
#     ninja's [done/total] progress;
#  3. profiles pgbench tpcb at 1, 4 and 16 clients, 15 s each, each on a fresh scratch cluster
#     that pgwaitprof creates and removes (about 1 minute in all), each report written to its
#     run directory (one line each says where), then prints the runs side by side: clients,
#     tps, tps per client, CPU and the top waits with their shares, and where throughput stops
#     scaling (pgwaitprof runs --format scaling).
# Extra arguments go to one `pgwaitprof run` instead (e.g. -- -c 16 -j 2 -T 60), which prints
# its whole report.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

echo "quickstart: 1/3 dependencies (deploy/install-deps.sh)"
"$root/deploy/install-deps.sh"
echo "quickstart: 2/3 building the program, $build/daemon/pgwaitprof (about 5 min on 2 cores the first time)"
BUILD_DIR=$build BUILD_TARGET=pgwaitprof "$root/deploy/build.sh"
pgwaitprof=$build/daemon/pgwaitprof

if [ $# -gt 0 ]; then
  exec "$pgwaitprof" run "$@"
fi

# The runs of this quickstart, apart from any earlier ones in the same data directory.
stamp=$(date -u +%Y%m%dT%H%M%SZ)
counts=(1 4 16)
echo "quickstart: 3/3 three runs of pgbench tpcb, 15 s each on a fresh scratch cluster (about 1 min)"
for index in "${!counts[@]}"; do
  clients=${counts[$index]}
  echo "quickstart: run $((index + 1)) of ${#counts[@]}: pgbench -c $clients -j 2 -T 15"
  "$pgwaitprof" --log-level warn run --brief --label "quickstart-c$clients" \
    --tag "quickstart=$stamp" -- -c "$clients" -j 2 -T 15
done
echo
"$pgwaitprof" runs --tag "quickstart=$stamp" --format scaling
echo
echo "Each run's whole report is report.txt (and report.html, with charts) in the directory its line above names."
