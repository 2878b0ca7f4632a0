#!/usr/bin/env bash
# How fast `pgwaitprof runs` answers with thousands of runs in the data directory: N synthetic
# run directories (copies of a fixture report.json with their ids, labels and dates changed),
# then `runs` timed three ways: the first call (index built from every report.json), a call with
# the index fresh (no report read), and a call after one run directory was removed and one
# report changed (the index updated, one report read).
#
#   runs_index.sh [PGWAITPROF] [N]      (default build/daemon/pgwaitprof, 2000)
#
# REPORT=path/to/report.json copies a report of your own (a real run's is 50-300 kB; the
# default fixture is a small one), which mostly changes the first call.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$script_dir/../.." && pwd)
pgwaitprof=${1:-$source_dir/build/daemon/pgwaitprof}
count=${2:-2000}
fixture=${REPORT:-$source_dir/tests/fixtures/compare/master/20240301T100045Z-master-c8-r1/report.json}
[[ -x $pgwaitprof ]] || { echo "runs_index: no binary at $pgwaitprof" >&2; exit 1; }

data=$(mktemp -d "${TMPDIR:-/tmp}/pgwaitprof-runs-index.XXXXXX")
trap 'rm -rf "$data"' EXIT
python3 - "$fixture" "$data" "$count" <<'PY'
import json, os, sys
fixture, data, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
report = json.load(open(fixture))
labels = ["nightly", "adhoc", "ci", "release"]
for i in range(count):
    day, second = divmod(i, 86400 // 40)
    run_id = "2026%04d-%06d-%04x-%s" % (1001 + day % 28, second, i & 0xffff, labels[i % 4])
    report["id"] = run_id
    report["label"] = "%s-%d" % (labels[i % 4], i)
    report["workload"] = "tpcb" if i % 3 else "select_only"
    report["started_at"] = "2026-%02d-%02dT%02d:%02d:00.000Z" % (1 + (i // 28) % 11, 1 + i % 28, (i // 60) % 24, i % 60)
    os.makedirs(os.path.join(data, "runs", run_id))
    with open(os.path.join(data, "runs", run_id, "report.json"), "w") as out:
        json.dump(report, out)
PY
report_bytes=$(stat -c %s "$fixture")
echo "runs_index: $count run directories (report.json of $report_bytes bytes each) in $data"

timed() {  # label, args...
  local label=$1 start end
  shift
  start=$(date +%s.%N)
  "$pgwaitprof" runs --data-dir "$data" "$@" >/dev/null
  end=$(date +%s.%N)
  printf 'runs_index: %-44s %6.3f s\n' "$label" "$(echo "$end - $start" | bc)"
}
timed "first call (index built from $count reports)"
timed "index fresh"
timed "index fresh, --label 'nightly-*' --since 2026-06-01" --label 'nightly-*' --since 2026-06-01
timed "index fresh, --format json" --format json
dirs=("$data"/runs/*)
rm -rf "${dirs[0]:?}"
touch "${dirs[-1]}/report.json"
timed "one run deleted, one report changed"
echo "runs_index: index file $(stat -c %s "$data/runs-index.json") bytes"
