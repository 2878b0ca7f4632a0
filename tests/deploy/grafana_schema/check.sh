#!/usr/bin/env bash
# Type-checks Grafana dashboards against Grafana's own dashboard model: the Dashboard type of the
# npm package @grafana/schema, with TypeScript's `tsc --noEmit --strict`, both pinned in
# package-lock.json next to this script. Each dashboard's JSON becomes object literals assigned
# to that type (dashboard_check.mjs, dashboard_types.ts), so an unknown field or a value of the
# wrong type is an error, down to panels, targets, field config, variables and annotations.
#
#   check.sh [--cache-dir DIR] [DASHBOARD...]
#
# Without DASHBOARD it checks deploy/grafana/*.json and then runs the negative tests: copies of
# deploy/grafana/pgwaitprof.json with one bad field injected each must be rejected. The pinned
# packages are installed with `npm ci` into DIR (default $XDG_CACHE_HOME/pgwaitprof/grafana_schema;
# ctest passes one under the build directory), again only when package-lock.json changed.
# Prints one line per check and a closing "N passed, N failed" line; exits 1 if any check failed.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$script_dir/../../.." && pwd)
cache_dir=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/pgwaitprof/grafana_schema
dashboards=()
while (($#)); do
  case "$1" in
    --cache-dir)
      [[ $# -ge 2 ]] || { echo "check.sh: --cache-dir needs a directory" >&2; exit 2; }
      cache_dir=$2
      shift 2
      ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    -*) echo "check.sh: unknown option \"$1\"" >&2; exit 2 ;;
    *) dashboards+=("$1"); shift ;;
  esac
done
negative_tests=false
if ((${#dashboards[@]} == 0)); then
  dashboards=("$source_dir"/deploy/grafana/*.json)
  negative_tests=true
fi

passed=0
failed=0
finish() {
  echo "grafana_schema: $passed passed, $failed failed"
  if ((failed)); then exit 1; fi
  exit 0
}

missing=()
for tool in node npm jq flock; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
  echo "FAIL  required tools are installed: missing ${missing[*]} (Debian packages nodejs npm jq util-linux; deploy/install-deps.sh)"
  failed=$((failed + 1))
  finish
fi
# typescript 7 runs on Node.js 16.20 and later; Debian bookworm has 18.
node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 18)); then
  echo "FAIL  Node.js is 18 or later: $(node --version) at $(command -v node)"
  failed=$((failed + 1))
  finish
fi

# --- the pinned packages, installed once per package-lock.json -----------------------------------
mkdir -p "$cache_dir"
cache_dir=$(cd "$cache_dir" && pwd)
# Exclusive while installing, shared while using: a check of another checkout that shares the
# cache and pins other versions must not reinstall under a running tsc.
exec 9>"$cache_dir/.lock"
flock 9
stamp=$cache_dir/.installed-package-lock.json
tsc_script=$cache_dir/node_modules/typescript/bin/tsc
if cmp -s "$script_dir/package-lock.json" "$stamp" && [[ -f $tsc_script ]]; then
  echo "ok    pinned packages are installed in $cache_dir"
  passed=$((passed + 1))
else
  rm -f "$stamp"
  cp "$script_dir/package.json" "$script_dir/package-lock.json" "$cache_dir/"
  if output=$(cd "$cache_dir" && npm ci --no-audit --no-fund 2>&1); then
    cp "$script_dir/package-lock.json" "$stamp"
    echo "ok    npm ci --no-audit --no-fund into $cache_dir"
    passed=$((passed + 1))
  else
    echo "FAIL  npm ci --no-audit --no-fund into $cache_dir (is the npm registry reachable?)"
    printf '%s\n' "$output" | tail -n 20 | sed 's/^/      /'
    failed=$((failed + 1))
    finish
  fi
fi
flock -s 9
# shellcheck disable=SC2016  # a JavaScript template literal, not the shell's
versions=$(cd "$cache_dir" && node -p 'const v = (p) => require(`./node_modules/${p}/package.json`).version;
  `@grafana/schema ${v("@grafana/schema")}, typescript ${v("typescript")}`')
echo "info  $versions, node $(node --version)"

work_dir=$(mktemp -d "$cache_dir/work.XXXXXX")
trap 'rm -rf "$work_dir"' EXIT
cp "$script_dir/dashboard_types.ts" "$work_dir/"
# Runs dashboard_check.mjs and counts its "ok"/"FAIL" lines; a failure that printed no FAIL line
# (a crash) fails too.
check() {
  local output status=0 failed_before=$failed line
  output=$(node "$script_dir/dashboard_check.mjs" --tsc "$tsc_script" --work "$work_dir" "$@" 2>&1) ||
    status=$?
  while IFS= read -r line; do
    printf '%s\n' "$line"
    case "$line" in
      "ok    "*) passed=$((passed + 1)) ;;
      "FAIL  "*) failed=$((failed + 1)) ;;
    esac
  done <<<"$output"
  if ((status != 0 && failed == failed_before)); then
    echo "FAIL  dashboard_check.mjs exited with status $status"
    failed=$((failed + 1))
  fi
}

# --- the dashboards --------------------------------------------------------------------------------
labels=()
for dashboard in "${dashboards[@]}"; do
  labels+=(--label "$dashboard=${dashboard#"$source_dir"/}")
done
check "${labels[@]}" "${dashboards[@]}"

# --- negative tests: each must be rejected -------------------------------------------------------
# A jq filter on deploy/grafana/pgwaitprof.json per line: "description|filter". Every nesting
# level the check claims, both kinds of error (unknown field, wrong type), and the limits of
# the allow-lists in dashboard_types.ts and dashboard_check.mjs.
if $negative_tests; then
  base=$source_dir/deploy/grafana/pgwaitprof.json
  timeseries='.panels |= map(if .type == "timeseries" then'
  cases=(
    "unknown top-level field (refreshInterval)|.refreshInterval = \"5s\""
    "mistyped top-level field (graphTooltip: \"shared\")|.graphTooltip = \"shared\""
    "import-only field below the top level (panel __inputs)|$timeseries .__inputs = [] else . end)"
    "unknown panel field (datasrc)|$timeseries .datasrc = .datasource else . end)"
    "mistyped gridPos (w: \"24\")|$timeseries .gridPos.w = \"24\" else . end)"
    "unknown field config field (units)|$timeseries .fieldConfig.defaults.units = \"s\" else . end)"
    "misspelt custom field config (fillOpacty)|$timeseries .fieldConfig.defaults.custom.fillOpacty = 10 else . end)"
    "override of an unknown custom property (custom.lineWidht)|$timeseries .fieldConfig.overrides += [{matcher: {id: \"byName\", options: \"CPU\"}, properties: [{id: \"custom.lineWidht\", value: 2}]}] else . end)"
    "misspelt panel option (legend.placment)|$timeseries .options.legend.placment = \"right\" else . end)"
    "invalid enum value (color.mode palette-classics)|$timeseries .fieldConfig.defaults.color.mode = \"palette-classics\" else . end)"
    "target without refId|$timeseries .targets |= map(del(.refId)) else . end)"
    "mistyped target field (hide: \"no\")|$timeseries .targets |= map(.hide = \"no\") else . end)"
    "unknown field in a panel of a collapsed row|.panels[0].collapsed = true | .panels[0].panels = [(.panels[] | select(.type == \"timeseries\")) + {bogus: 1}][0:1]"
    "unknown variable field (defualt)|.templating.list |= map(.defualt = \"x\")"
    "mistyped variable field (refresh: 5)|.templating.list |= map(if .type == \"query\" then .refresh = 5 else . end)"
    "definition on a variable that is not a query variable|.templating.list |= map(if .type != \"query\" then .definition = \"x\" else . end)"
    "unknown annotation field (colour)|.annotations.list |= map(.colour = \"red\")"
    "Prometheus annotation fields on a Grafana annotation (titleFormat)|.annotations.list |= map(if .datasource.type == \"grafana\" then .titleFormat = \"x\" else . end)"
  )
  mkdir "$work_dir/negative"
  negative=()
  number=0
  for case in "${cases[@]}"; do
    number=$((number + 1))
    description=${case%%|*}
    filter=${case#*|}
    copy=$work_dir/negative/$number.json
    if ! jq "$filter" "$base" >"$copy" 2>"$copy.err"; then
      echo "FAIL  negative test \"$description\": jq: $(cat "$copy.err")"
      failed=$((failed + 1))
    elif cmp -s <(jq -S . "$base") <(jq -S . "$copy"); then
      echo "FAIL  negative test \"$description\": the filter changed nothing"
      failed=$((failed + 1))
    else
      negative+=(--label "$copy=pgwaitprof.json + $description" "$copy")
    fi
  done
  if ((${#negative[@]})); then
    check --expect-failure "${negative[@]}"
  fi
fi

finish
