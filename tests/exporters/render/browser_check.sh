#!/usr/bin/env bash
# The HTML pages in a real browser: renders the fixture report's page with the binary, the same
# report with latency percentiles and kernel times (tests/fixtures/report_v3_latency_kernel.json:
# report_v1.json re-rendered as schema 3, with per-interval p50-max latencies derived from its
# pgbench averages and client backends' schedstat times derived from its CPU samples), a run
# with --cpu-profile (tests/fixtures/report_v7_cpu.json: pgbench -S -c 2 on the scratch cluster,
# its folded stacks cut to the largest 60 per group; both flame graphs), and a matrix page of tests/fixtures/compare with the render_matrix_page helper, opens each in
# headless Chromium (no network, a fresh profile), and fails unless the page loaded without an
# error and every chart drew its data with a hover value for every series
# (check_page_dom.py says what is read from the DOM).
# Usage: browser_check.sh PGWAITPROF RENDER_MATRIX_PAGE [SCREENSHOT_DIR]
# With SCREENSHOT_DIR, also writes report.png (1400x1000) and matrix.png (1400x1750, down to its
# wait-profile charts) there, the cursor mid-chart: docs/report-screenshot.png and
# docs/matrix-screenshot.png are made so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
pgwaitprof=$1
render_matrix_page=$2
screenshots=${3:-}

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "browser_check: chromium not found" >&2
  echo "HINT: deploy/install-deps.sh installs Debian's chromium package." >&2
  exit 1
fi
work=$(mktemp -d /tmp/pgwaitprof-browser-XXXXXX)
trap 'rm -rf "$work"' EXIT

"$pgwaitprof" report "$root/tests/fixtures/report_v1.json" --format html >"$work/report.html"
"$pgwaitprof" report "$root/tests/fixtures/report_v3_latency_kernel.json" --format html \
  >"$work/kernel.html"
"$pgwaitprof" report "$root/tests/fixtures/report_v7_cpu.json" --format html >"$work/cpu.html"
"$render_matrix_page" "clog-buffers: pgbench -S, scale 100" \
  "$root/tests/fixtures/compare/master" "$root/tests/fixtures/compare/patched" >"$work/matrix.html"

# Chromium as root needs --no-sandbox; the other flags keep it off the network and quiet.
# --virtual-time-budget lets the page's timers run before the DOM is taken.
chrome() {
  local profile
  profile=$(mktemp -d "$work/profile-XXXXXX")
  timeout 90 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --virtual-time-budget=5000 "$@" 2>"$profile.log"
}

failed=0
# name:charts:flame graphs:screenshot height[:series the timeline must have, comma-separated]
for page in report:1:1:1000 "kernel:1:1:1000:latency p99,run queue" cpu:1:2:1000 matrix:2:0:1750; do
  IFS=: read -r name charts flames height required <<<"$page"
  size=$(wc -c <"$work/$name.html")
  echo "browser_check: $name.html: $size bytes"
  # #selftest puts the cursor mid-chart once drawn, so that the legends show values.
  chrome --dump-dom "file://$work/$name.html#selftest" >"$work/$name.dom"
  if ! python3 "$here/check_page_dom.py" "$name" "$work/$name.dom" "$charts" "$flames" \
    "${required:-}"; then
    failed=1
  fi
  if [ -n "$screenshots" ] && [ "$name" != kernel ] && [ "$name" != cpu ]; then
    chrome --hide-scrollbars --window-size="1400,$height" --screenshot="$screenshots/$name.png" \
      "file://$work/$name.html#selftest"
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "browser_check: FAILED" >&2
  exit 1
fi
echo "browser_check: every page loaded without errors and drew every chart"
