#!/usr/bin/env bash
# End-to-end check of the monitoring stack: a real pgwaitprof daemon samples a real PostgreSQL
# while `pgwaitprof run` drives pgbench through it, a real Prometheus scrapes it every second and
# evaluates deploy/prometheus/rules.yml; then every PromQL expression of the Grafana dashboard
# (panels, run annotation, variable queries, with the variables set to real values) and every
# rule must parse and return at least one series, and every metric the dashboard and rules
# name must exist in what the daemon exported. As root, a second target of the same server uses
# the traced source (issue 48): its exact wait-duration histogram through histogram_quantile, its
# waits counted alike by the histogram and pgwaitprof_waits_total, and its AAS from the rules.
#
#   prometheus_e2e.sh [PGWAITPROF]
#
# PGWAITPROF (argument or environment; default build/daemon/pgwaitprof of the source tree) is the
# binary. PGHOST, PGPORT, PGUSER, PGDATABASE (and PGPASSWORD if needed) name a running
# PostgreSQL 15 cluster whose database has pgbench's tables. Optional: PROMETHEUS (default
# "prometheus"), E2E_RUN_SECONDS (pgbench -T, default 15), E2E_RUN_TARGET (what `pgwaitprof run`
# is given, default the connection string), E2E_KEEP_TMP=1 to keep the temporary directory,
# E2E_RENDER_DIR=DIR to render the main dashboard panels from the test's data into
# DIR/dashboard.html at the end (tests/deploy/render_dashboard.py; not a check).
# Needs curl, jq, python3 with python3-yaml, promtool and prometheus; listens on loopback only.
# Prints one line per check and a closing "N passed, N failed" line; exits 1 if any failed.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../support/cluster_slot.sh source-path=SCRIPTDIR
source "$script_dir/../support/cluster_slot.sh"
source_dir=$(cd "$script_dir/../.." && pwd)
dashboard=$source_dir/deploy/grafana/pgwaitprof.json
rules=$source_dir/deploy/prometheus/rules.yml
helper=$script_dir/check_static.sh

pgwaitprof=${1:-${PGWAITPROF:-$source_dir/build/daemon/pgwaitprof}}
prometheus_bin=${PROMETHEUS:-prometheus}
run_seconds=${E2E_RUN_SECONDS:-15}
target_name=e2e
traced_name=e2e_traced
traced=0
if [[ $(id -u) == 0 ]]; then traced=1; fi

die() {
  echo "prometheus_e2e: $*" >&2
  exit 1
}

# --- preconditions -----------------------------------------------------------------------------
[[ -x $pgwaitprof ]] || die "no pgwaitprof binary at \"$pgwaitprof\" (pass it as the argument or set PGWAITPROF)"
for tool in curl jq python3 promtool "$prometheus_bin"; do
  command -v "$tool" >/dev/null || die "\"$tool\" is not installed (Debian packages: curl jq python3 python3-yaml prometheus)"
done
for variable in PGHOST PGPORT PGUSER PGDATABASE; do
  [[ -n ${!variable:-} ]] || die "$variable is not set; the harness must name a running PostgreSQL with pgbench tables"
done
[[ $run_seconds =~ ^[0-9]+$ ]] || die "E2E_RUN_SECONDS must be a whole number of seconds"

# libpq connection string from the PG* variables, each value single-quoted.
conninfo_value() {
  local value=${1//\\/\\\\}
  printf "'%s'" "${value//\'/\\\'}"
}
dsn="host=$(conninfo_value "$PGHOST") port=$(conninfo_value "$PGPORT") user=$(conninfo_value "$PGUSER") dbname=$(conninfo_value "$PGDATABASE")"
run_target=${E2E_RUN_TARGET:-$dsn}

# --- bookkeeping -------------------------------------------------------------------------------
passed=0
failed=0
pass() { printf 'ok    %s\n' "$1"; passed=$((passed + 1)); }
fail() {
  printf 'FAIL  %s\n' "$1"
  if [[ -n "${2:-}" ]]; then printf '%s\n' "$2" | sed 's/^/      /'; fi
  failed=$((failed + 1))
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgwaitprof-e2e.XXXXXX")
daemon_pid=
prometheus_pid=
run_pid=

# Stops a process this script started: SIGTERM, up to 15 s, then SIGKILL.
stop_process() {
  local pid=$1 name=$2
  [[ -n $pid ]] || return 0
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "prometheus_e2e: $name (pid $pid) ignored SIGTERM for 15 s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if ((status != 0 && failed == 0)); then fail "the test ran to its end" "stopped early, exit status $status"; fi
  stop_process "$run_pid" "pgwaitprof run"
  stop_process "$prometheus_pid" prometheus
  stop_process "$daemon_pid" "pgwaitprof daemon"
  if ((status != 0 || failed != 0)); then
    for log in daemon.log run.err prometheus.log; do
      if [[ -s $tmp/$log ]]; then
        echo "--- last lines of $log"
        tail -n 30 "$tmp/$log"
      fi
    done
  fi
  if [[ ${E2E_KEEP_TMP:-0} == 1 ]]; then
    echo "kept $tmp"
  else
    rm -rf "$tmp"
  fi
  echo "prometheus_e2e: $passed passed, $failed failed"
  if ((failed != 0 && status == 0)); then status=1; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

now() { date +%s.%N; }

# Prometheus HTTP API: instant query at a time; prints the JSON answer.
prometheus_url=
query_at() {
  curl -sS --max-time 10 -G "$prometheus_url/api/v1/query" \
    --data-urlencode "query=$1" --data-urlencode "time=$2"
}

# Waits up to $1 seconds for the command to succeed, checking that $2 (a pid) is alive.
wait_for() {
  local timeout_s=$1 pid=$2 deadline
  shift 2
  deadline=$(($(date +%s) + timeout_s))
  while (($(date +%s) < deadline)); do
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then return 2; fi
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  return 1
}

# --- the daemon --------------------------------------------------------------------------------
daemon_port=$(free_port)
loadgens='"pgbench"'
for candidate in /usr/lib/postgresql/*/bin/pgbench; do
  [[ -x $candidate ]] && loadgens+=", \"$candidate\""
done
yaml_string() {
  local value=${1//\\/\\\\}
  printf '"%s"' "${value//\"/\\\"}"
}
cat >"$tmp/pgwaitprof.yaml" <<EOF
listen: 127.0.0.1:$daemon_port
data_dir: $(yaml_string "$tmp/data")
log_level: info
loadgen_executables: [$loadgens]
targets:
  - name: $target_name
    dsn: $(yaml_string "$dsn")
    hz: 200
    source: activity
EOF
# The traced target's DSN differs (application_name), so that the run is given to the other one.
if ((traced)); then
  cat >>"$tmp/pgwaitprof.yaml" <<EOF
  - name: $traced_name
    dsn: $(yaml_string "$dsn application_name=pgwaitprof_e2e_traced")
    source: trace
    pg_wait_sampling_poll_ms: 500
EOF
fi
mkdir -p "$tmp/data"
"$pgwaitprof" daemon -c "$tmp/pgwaitprof.yaml" >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!

daemon_up() {
  curl -sS --max-time 2 "http://127.0.0.1:$daemon_port/metrics" |
    grep -qE "^pgwaitprof_up\{[^}]*target=\"$target_name\"[^}]*\} 1(\.0+)?\$"
}
if wait_for 30 "$daemon_pid" daemon_up; then
  pass "daemon serves /metrics with pgwaitprof_up{target=\"$target_name\"} 1 (127.0.0.1:$daemon_port)"
else
  fail "daemon serves /metrics with pgwaitprof_up{target=\"$target_name\"} 1 within 30 s" \
    "$(kill -0 "$daemon_pid" 2>/dev/null && echo "daemon is running" || echo "daemon exited")"
  exit 1
fi

# --- Prometheus --------------------------------------------------------------------------------
prometheus_port=$(free_port)
prometheus_url=http://127.0.0.1:$prometheus_port
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $(yaml_string "$rules")
scrape_configs:
  - job_name: pgwaitprof
    static_configs:
      - targets: ["127.0.0.1:$daemon_port"]
EOF
"$prometheus_bin" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$prometheus_port" >"$tmp/prometheus.log" 2>&1 &
prometheus_pid=$!

if wait_for 60 "$prometheus_pid" curl -fsS --max-time 2 "$prometheus_url/-/ready"; then
  pass "prometheus is ready ($prometheus_url)"
else
  fail "prometheus is ready within 60 s"
  exit 1
fi
target_healthy() {
  curl -fsS --max-time 2 "$prometheus_url/api/v1/targets" |
    jq -e --arg address "127.0.0.1:$daemon_port" \
      '[.data.activeTargets[] | select(.labels.instance == $address and .health == "up")] | length > 0'
}
if wait_for 30 "$prometheus_pid" target_healthy; then
  pass "prometheus scrapes the daemon (target health up)"
else
  fail "prometheus scrapes the daemon within 30 s" \
    "$(curl -sS --max-time 2 "$prometheus_url/api/v1/targets" | jq -c '.data.activeTargets[] | {scrapeUrl, health, lastError}' 2>&1)"
  exit 1
fi
first_scrape=$(now)
instance=127.0.0.1:$daemon_port

# A few seconds without load first, so the run starts inside the scraped range.
sleep 5

# --- a run through the daemon ------------------------------------------------------------------
"$pgwaitprof" run "$run_target" --workload tpcb --label e2e --data-dir "$tmp/data" \
  -- -c 4 -j 2 -T "$run_seconds" >"$tmp/run.out" 2>"$tmp/run.err" &
run_pid=$!

# While it runs, remember the latest instant at which Prometheus holds the run's series (they
# exist only while a run is active), and keep one exposition for promtool.
active_at=
run_deadline=$(($(date +%s) + run_seconds + 90))
while kill -0 "$run_pid" 2>/dev/null; do
  if (($(date +%s) > run_deadline)); then
    fail "pgwaitprof run ends within $((run_seconds + 90)) s"
    exit 1
  fi
  instant=$(now)
  if query_at "count(pgwaitprof_run_active{target=\"$target_name\"} == 1) and count(pgwaitprof_loadgen_tps{target=\"$target_name\"}) and count(pgwaitprof_loadgen_latency_seconds{target=\"$target_name\"})" "$instant" |
    jq -e '.data.result | length > 0' >/dev/null 2>&1; then
    active_at=$instant
    curl -sS --max-time 5 "http://127.0.0.1:$daemon_port/metrics" >"$tmp/metrics_during_run.txt" || true
  fi
  sleep 1
done
run_status=0
wait "$run_pid" || run_status=$?
run_pid=
# It ends with "report: RUN_DIR/report.html"; the run directory holds report.json.
run_dir=
while IFS= read -r line; do
  if [[ $line == "report: "* ]]; then
    candidate=$(dirname "${line#report: }")
    if [[ -f $candidate/report.json ]]; then run_dir=$candidate; fi
  fi
done <"$tmp/run.out"
if ((run_status == 0)) && [[ -n $run_dir && -f $run_dir/report.json ]]; then
  pass "pgwaitprof run exits 0 and prints its run directory ($run_dir)"
else
  fail "pgwaitprof run exits 0 and prints its run directory (holding report.json)" \
    "exit status $run_status; stdout: $(tail -n 5 "$tmp/run.out"); stderr: $(tail -n 5 "$tmp/run.err")"
fi
if [[ -z $active_at ]]; then
  fail "prometheus saw pgwaitprof_run_active, pgwaitprof_loadgen_tps and pgwaitprof_loadgen_latency_seconds during the run"
  exit 1
fi
pass "prometheus saw the run's series (last at $active_at)"

if [[ -s $tmp/metrics_during_run.txt ]]; then
  if output=$(promtool check metrics <"$tmp/metrics_during_run.txt" 2>&1); then
    pass "promtool check metrics on the exposition during the run"
  else
    fail "promtool check metrics on the exposition during the run" "$output"
  fi
fi

# Enough scrapes for the [1m] rules and $__range: at least 20 s since the first scrape, and a
# few rule evaluations after the instant we evaluate at.
while (($(date +%s) < ${first_scrape%.*} + 22)); do sleep 1; done
sleep 3
range_s=$(python3 -c "import math; print(max(10, math.floor($active_at - $first_scrape)))")

# --- the recording and alerting rules ----------------------------------------------------------
rules_json=$(curl -sS --max-time 10 "$prometheus_url/api/v1/rules")
if jq -e '.data.groups | length > 0' >/dev/null <<<"$rules_json"; then
  pass "prometheus loaded rules.yml ($(jq '[.data.groups[].rules[]] | length' <<<"$rules_json") rules)"
else
  fail "prometheus loaded rules.yml" "$rules_json"
fi
while IFS= read -r rule; do
  kind=$(jq -r .type <<<"$rule")
  name=$(jq -r .name <<<"$rule")
  expr=$(jq -r .query <<<"$rule")
  if [[ $(jq -r .health <<<"$rule") != ok ]]; then
    fail "rule $name is healthy" "$(jq -r '"health \(.health): \(.lastError // "")"' <<<"$rule")"
    continue
  fi
  answer=$(query_at "$expr" "$active_at")
  if [[ $(jq -r .status <<<"$answer") != success ]]; then
    fail "rule $name expression" "$(jq -r '.error // .' <<<"$answer")"
  elif [[ $kind == recording ]]; then
    series=$(jq '.data.result | length' <<<"$answer")
    recorded=$(query_at "$name" "$active_at" | jq '.data.result | length')
    if ((series > 0 && recorded > 0)); then
      pass "rule $name: $series series (recorded series: $recorded)"
    else
      fail "rule $name returns series" "expression: $series series, recorded $name: $recorded series"
    fi
  else
    # An alert's expression is empty while all is well: it must parse and evaluate.
    pass "alert $name evaluates ($(jq '.data.result | length' <<<"$answer") series past its threshold)"
  fi
done < <(jq -c '.data.groups[].rules[]' <<<"$rules_json")

# --- the traced target ------------------------------------------------------------------------
if ((traced)); then
  client_read="instance=\"$instance\", target=\"$traced_name\", backend_type=\"client backend\", wait_event_type=\"Client\", wait_event=\"ClientRead\""
  median=$(query_at "histogram_quantile(0.5, sum by (le) (rate(pgwaitprof_wait_duration_seconds_bucket{$client_read}[${range_s}s])))" "$active_at" |
    jq -r '.data.result[0].value[1] // empty' 2>/dev/null || true)
  if [[ -n $median ]] && python3 -c 'import sys; sys.exit(0 if 0 < float(sys.argv[1]) < 1 else 1)' "$median"; then
    pass "traced target: histogram_quantile(0.5) of pgbench's ClientRead waits is $median s"
  else
    fail "traced target: histogram_quantile(0.5) of pgbench's ClientRead waits is between 0 and 1 s" "got \"$median\""
  fi
  # The same scrape's values (not increase(): its extrapolation differs for series of the states
  # that appear mid-range, such as "idle in transaction" once pgbench starts).
  apart=$(query_at "sum(pgwaitprof_wait_duration_seconds_count{$client_read}) - sum(pgwaitprof_waits_total{$client_read})" "$active_at" |
    jq -r '.data.result[0].value[1] // empty' 2>/dev/null || true)
  waits=$(query_at "sum(pgwaitprof_waits_total{$client_read})" "$active_at" |
    jq -r '.data.result[0].value[1] // empty' 2>/dev/null || true)
  if [[ -n $apart && -n $waits ]] && python3 -c 'import sys; sys.exit(0 if abs(float(sys.argv[1])) < 1e-6 and float(sys.argv[2]) > 0 else 1)' "$apart" "$waits"; then
    pass "traced target: the histogram's _count and pgwaitprof_waits_total agree ($waits ClientRead waits)"
  else
    fail "traced target: the histogram's _count and pgwaitprof_waits_total agree" "difference \"$apart\", waits \"$waits\""
  fi
  aas=$(query_at "sum(pgwaitprof:aas:by_wait_event{instance=\"$instance\", target=\"$traced_name\"})" "$active_at" |
    jq -r '.data.result[0].value[1] // empty' 2>/dev/null || true)
  if [[ -n $aas ]] && python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "$aas"; then
    pass "traced target: pgwaitprof:aas:by_wait_event from its wait time ($aas AAS)"
  else
    fail "traced target: pgwaitprof:aas:by_wait_event from its wait time" "got \"$aas\""
  fi
fi

# --- the dashboard -----------------------------------------------------------------------------
# Variables: the daemon and target of this test, and a wait event that has both samples and
# completed-wait durations, so the drill-down panels have data.
wait_pair=$(query_at "topk(1,
    sum by (wait_event_type, wait_event) (increase(pgwaitprof_wait_duration_seconds_count{instance=\"$instance\", target=\"$target_name\"}[${range_s}s]))
  and on (wait_event_type, wait_event)
    sum by (wait_event_type, wait_event) (increase(pgwaitprof_wait_samples_total{instance=\"$instance\", target=\"$target_name\"}[${range_s}s])))" "$active_at" |
  jq -r '.data.result[0].metric | [.wait_event_type, .wait_event] | @tsv' 2>/dev/null || true)
wait_event_type=${wait_pair%%$'\t'*}
wait_event=${wait_pair#*$'\t'}
if [[ -n $wait_pair && -n $wait_event_type && -n $wait_event && $wait_event_type != null ]]; then
  pass "a wait event has samples and durations for the drill-down ($wait_event_type | $wait_event)"
else
  fail "a wait event has samples and durations for the drill-down"
  wait_event_type=CPU
  wait_event=CPU
fi

exprs=$(bash "$helper" --exprs "$dashboard" --set "instance=$instance" --set "target=$target_name" \
  --set "wait_event_type=$wait_event_type" --set "wait_event=$wait_event" \
  --set "datasource=prometheus" --set "DS_PROMETHEUS=prometheus" \
  --set "__range=${range_s}s" --set "__rate_interval=15s" --set "__interval=5s" 2>&1) || {
  fail "dashboard expressions are extracted with every variable known" "$exprs"
  exit 1
}
declare -A chosen=([instance]=$instance [target]=$target_name
  [wait_event_type]=$wait_event_type [wait_event]=$wait_event)
while IFS= read -r item; do
  kind=$(jq -r .kind <<<"$item")
  where=$(jq -r .where <<<"$item")
  expr=$(jq -r .expr <<<"$item")
  answer=$(query_at "$expr" "$active_at" 2>&1) || true
  if [[ $(jq -r '.status // "unparsable"' <<<"$answer" 2>/dev/null) != success ]]; then
    fail "$where" "$(jq -r '.error // .' <<<"$answer" 2>/dev/null || echo "$answer")
$expr"
    continue
  fi
  series=$(jq '.data.result | if type == "array" then length else 1 end' <<<"$answer")
  if ((series == 0)); then
    fail "$where returns series" "0 series at $active_at for:
$expr"
    continue
  fi
  if [[ $kind == variable ]]; then
    label=$(jq -r .label <<<"$item")
    name=${where#variable \"}
    name=${name%\"}
    values=$(jq -r --arg key "$label" '[.data.result[].metric[$key] // empty] | unique | join(", ")' <<<"$answer")
    if [[ -n ${chosen[$name]:-} ]] &&
      ! jq -e --arg key "$label" --arg value "${chosen[$name]}" \
        '[.data.result[].metric[$key]] | index($value) != null' >/dev/null <<<"$answer"; then
      fail "$where offers \"${chosen[$name]}\"" "values: $values"
      continue
    fi
    pass "$where: $values"
  else
    pass "$where: $series series"
  fi
done <<<"$exprs"

# Every metric name the dashboard and the rules use exists in what Prometheus stored.
names_json=$(curl -sS --max-time 10 "$prometheus_url/api/v1/label/__name__/values")
missing=()
while IFS= read -r name; do
  [[ -n $name ]] || continue
  # Only a traced target exports these; without root there is none.
  if ((!traced)) && [[ $name == pgwaitprof_wait_seconds_total || $name == pgwaitprof_waits_total ]]; then
    echo "info  $name not checked: no traced target (not root)"
    continue
  fi
  # Exported once a scheduled run's group has been analysed (this test's run is asked for over
  # the control socket): ChangeWatch.* and the promtool rule test in check_static.sh cover it.
  if [[ $name == pgwaitprof_change_point ]]; then
    echo "info  $name not checked: no scheduled run here"
    continue
  fi
  jq -e --arg name "$name" '.data | index($name) != null' >/dev/null <<<"$names_json" ||
    missing+=("$name")
done < <(bash "$helper" --metric-names "$dashboard" "$rules")
if ((${#missing[@]})); then
  fail "every metric the dashboard and rules use was exported" "missing: ${missing[*]}"
else
  pass "every metric the dashboard and rules use was exported"
fi

# Optional, not a check: E2E_RENDER_DIR=DIR renders the main panels from this test's data into
# DIR/dashboard.html (tests/deploy/render_dashboard.py; a failure there only prints a warning).
if [[ -n ${E2E_RENDER_DIR:-} ]]; then
  if mkdir -p "$E2E_RENDER_DIR" && python3 "$script_dir/render_dashboard.py" \
    --prometheus "$prometheus_url" --dashboard "$dashboard" --start "$first_scrape" --end "$(now)" \
    --set "instance=$instance" --set "target=$target_name" \
    --set "wait_event_type=$wait_event_type" --set "wait_event=$wait_event" \
    --out "$E2E_RENDER_DIR/dashboard.html"; then
    echo "rendered $E2E_RENDER_DIR/dashboard.html"
  else
    echo "prometheus_e2e: render_dashboard.py failed; E2E_RENDER_DIR=$E2E_RENDER_DIR has no rendering" >&2
  fi
fi

# The summary and the exit status come from cleanup.
