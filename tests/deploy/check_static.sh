#!/usr/bin/env bash
# Static checks of the deployment files, runnable from any directory without a daemon:
#   - deploy/prometheus: `promtool check config`, `promtool check rules`, and `promtool test rules`
#     on synthetic series (AAS leaves idle out, the alerts fire when they should, not before);
#   - deploy/grafana/pgwaitprof.json: valid JSON and importable shape; every PromQL expression in
#     it parses (promtool, after substituting Grafana's variables); every metric it or the rules
#     use is one the daemon exports (DESIGN.md "Prometheus metrics") or a recording rule, and
#     every exported metric is shown somewhere;
#   - deploy/systemd/pgwaitprof.service: `systemd-analyze verify` (skipped, saying why, only where
#     systemd-analyze is not installed: Debian package "systemd");
#   - the Debian package's maintainer scripts (deploy/debian): sh -n and shellcheck; the package
#     itself is tests/deploy/package_test.sh.
# Prints one line per check and a closing "N passed, N failed, N skipped" line; exits 1 if any
# check failed.
#
# The same PromQL helper serves tests/deploy/prometheus_e2e.sh:
#   check_static.sh --exprs DASHBOARD [--set NAME=VALUE]...   JSON lines {kind, where, expr[, label]}
#   check_static.sh --metric-names FILE...                    metric names used by dashboards/rules
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$script_dir/../.." && pwd)
deploy_dir=$source_dir/deploy
dashboard=$deploy_dir/grafana/pgwaitprof.json
prometheus_config=$deploy_dir/prometheus/prometheus.yml
rules=$deploy_dir/prometheus/rules.yml
unit=$deploy_dir/systemd/pgwaitprof.service
install_script=$deploy_dir/install.sh
maintainer_scripts=("$deploy_dir/debian/postinst" "$deploy_dir/debian/prerm" "$deploy_dir/debian/postrm")

# The PromQL helper: extracts expressions from a dashboard, substitutes Grafana variables, lists
# the metric and label names an expression uses, and checks them against the metric contract.
promql_helper() {
  python3 "$script_dir/promql_helper.py" "$@"
}

case "${1:-}" in
  --exprs) shift; promql_helper --exprs "$@"; exit ;;
  --metric-names) shift; promql_helper --metric-names "$@"; exit ;;
  "") ;;
  *) echo "usage: $0 [--exprs DASHBOARD [--set NAME=VALUE]... | --metric-names FILE...]" >&2; exit 2 ;;
esac

passed=0
failed=0
skipped=0
failures=()
pass() { printf 'ok    %s\n' "$1"; passed=$((passed + 1)); }
fail() {
  printf 'FAIL  %s\n' "$1"
  if [[ -n "${2:-}" ]]; then printf '%s\n' "$2" | sed 's/^/      /'; fi
  failed=$((failed + 1))
  failures+=("$1")
}
skip() { printf 'skip  %s: %s\n' "$1" "$2"; skipped=$((skipped + 1)); }

# Runs a command; passes if it exits 0, else fails showing its output.
check() {
  local name=$1 output
  shift
  if output=$("$@" 2>&1); then pass "$name"; else fail "$name" "$output"; fi
}

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/pgwaitprof-check-static.XXXXXX")
trap 'rm -rf "$work_dir"' EXIT

missing_tools=()
for tool in promtool python3 jq; do
  command -v "$tool" >/dev/null || missing_tools+=("$tool")
done
if ((${#missing_tools[@]})); then
  fail "required tools are installed" "missing: ${missing_tools[*]} (Debian packages: prometheus, python3 python3-yaml, jq)"
  echo "check_static: $passed passed, $failed failed, $skipped skipped"
  exit 1
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
  fail "python3 can read YAML" "python3 has no yaml module (Debian package python3-yaml)"
fi

# --- Prometheus --------------------------------------------------------------------------------
check "promtool check config deploy/prometheus/prometheus.yml" promtool check config "$prometheus_config"
check "promtool check rules deploy/prometheus/rules.yml" promtool check rules "$rules"

# Synthetic series at 100 Hz (and of a traced target, in seconds): AAS must leave out state "idle"
# and background processes asleep (Activity, Extension, Timeout) but keep
# "idle in transaction", background waits other than Activity, and same-named events of two
# wait types apart; alerts must hold for their whole "for" before firing.
cat >"$work_dir/rules_test.yml" <<EOF
rule_files:
  - $rules
evaluation_interval: 15s
tests:
  - interval: 15s
    input_series:
      - series: 'pgwaitprof_snapshots_total{instance="h:9816",job="pgwaitprof",target="t"}'
        values: '0+1500x40'
      - series: 'pgwaitprof_missed_ticks_total{instance="h:9816",job="pgwaitprof",target="t"}'
        values: '0+375x40'
      - series: 'pgwaitprof_snapshot_duration_seconds_bucket{instance="h:9816",job="pgwaitprof",target="t",le="0.001"}'
        values: '0+0x40'
      - series: 'pgwaitprof_snapshot_duration_seconds_bucket{instance="h:9816",job="pgwaitprof",target="t",le="0.002"}'
        values: '0+1500x40'
      - series: 'pgwaitprof_snapshot_duration_seconds_bucket{instance="h:9816",job="pgwaitprof",target="t",le="+Inf"}'
        values: '0+1500x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="client backend",state="active",wait_event_type="CPU",wait_event="CPU"}'
        values: '0+3000x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="client backend",state="idle in transaction",wait_event_type="Client",wait_event="ClientRead"}'
        values: '0+1500x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="client backend",state="idle",wait_event_type="Client",wait_event="ClientRead"}'
        values: '0+15000x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="checkpointer",state="background",wait_event_type="Activity",wait_event="CheckpointerMain"}'
        values: '0+1500x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="checkpointer",state="background",wait_event_type="Timeout",wait_event="CheckpointWriteDelay"}'
        values: '0+1500x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="pg_wait_sampling collector",state="background",wait_event_type="Extension",wait_event="Extension"}'
        values: '0+1500x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="checkpointer",state="background",wait_event_type="IO",wait_event="DataFileSync"}'
        values: '0+750x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="client backend",state="active",wait_event_type="IO",wait_event="DataFileSync"}'
        values: '0+750x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="walwriter",state="background",wait_event_type="LWLock",wait_event="WALWrite"}'
        values: '0+750x40'
      - series: 'pgwaitprof_wait_samples_total{instance="h:9816",job="pgwaitprof",target="t",backend_type="client backend",state="active",wait_event_type="IO",wait_event="WALWrite"}'
        values: '0+1500x40'
      # Target "u" of the traced source: seconds per wait key and part, no samples or snapshots.
      - series: 'pgwaitprof_wait_seconds_total{instance="h:9816",job="pgwaitprof",target="u",backend_type="client backend",state="active",wait_event_type="CPU",wait_event="CPU",part="on_cpu"}'
        values: '0+15x40'
      - series: 'pgwaitprof_wait_seconds_total{instance="h:9816",job="pgwaitprof",target="u",backend_type="client backend",state="active",wait_event_type="LWLock",wait_event="WALWrite",part="blocked"}'
        values: '0+7.5x40'
      - series: 'pgwaitprof_wait_seconds_total{instance="h:9816",job="pgwaitprof",target="u",backend_type="client backend",state="active",wait_event_type="LWLock",wait_event="WALWrite",part="runqueue"}'
        values: '0+3.75x40'
      - series: 'pgwaitprof_wait_seconds_total{instance="h:9816",job="pgwaitprof",target="u",backend_type="client backend",state="idle",wait_event_type="Client",wait_event="ClientRead",part="blocked"}'
        values: '0+30x40'
      - series: 'pgwaitprof_wait_seconds_total{instance="h:9816",job="pgwaitprof",target="u",backend_type="checkpointer",state="background",wait_event_type="Activity",wait_event="CheckpointerMain",part="blocked"}'
        values: '0+15x40'
    promql_expr_test:
      - expr: pgwaitprof:aas:by_wait_event
        eval_time: 5m
        exp_samples:
          - labels: 'pgwaitprof:aas:by_wait_event{instance="h:9816",target="t",wait_event_type="CPU",wait_event="CPU"}'
            value: 2
          - labels: 'pgwaitprof:aas:by_wait_event{instance="h:9816",target="t",wait_event_type="Client",wait_event="ClientRead"}'
            value: 1
          - labels: 'pgwaitprof:aas:by_wait_event{instance="h:9816",target="t",wait_event_type="IO",wait_event="DataFileSync"}'
            value: 1
          - labels: 'pgwaitprof:aas:by_wait_event{instance="h:9816",target="t",wait_event_type="LWLock",wait_event="WALWrite"}'
            value: 0.5
          - labels: 'pgwaitprof:aas:by_wait_event{instance="h:9816",target="t",wait_event_type="IO",wait_event="WALWrite"}'
            value: 1
          - labels: 'pgwaitprof:aas:by_wait_event{instance="h:9816",target="u",wait_event_type="CPU",wait_event="CPU"}'
            value: 1
          - labels: 'pgwaitprof:aas:by_wait_event{instance="h:9816",target="u",wait_event_type="LWLock",wait_event="WALWrite"}'
            value: 0.75
      - expr: pgwaitprof:aas:by_wait_class
        eval_time: 5m
        exp_samples:
          - labels: 'pgwaitprof:aas:by_wait_class{instance="h:9816",target="t",wait_event_type="CPU"}'
            value: 2
          - labels: 'pgwaitprof:aas:by_wait_class{instance="h:9816",target="t",wait_event_type="Client"}'
            value: 1
          - labels: 'pgwaitprof:aas:by_wait_class{instance="h:9816",target="t",wait_event_type="IO"}'
            value: 2
          - labels: 'pgwaitprof:aas:by_wait_class{instance="h:9816",target="t",wait_event_type="LWLock"}'
            value: 0.5
          - labels: 'pgwaitprof:aas:by_wait_class{instance="h:9816",target="u",wait_event_type="CPU"}'
            value: 1
          - labels: 'pgwaitprof:aas:by_wait_class{instance="h:9816",target="u",wait_event_type="LWLock"}'
            value: 0.75
      - expr: pgwaitprof:aas
        eval_time: 5m
        exp_samples:
          - labels: 'pgwaitprof:aas{instance="h:9816",target="t"}'
            value: 5.5
          - labels: 'pgwaitprof:aas{instance="h:9816",target="u"}'
            value: 1.75
      - expr: pgwaitprof:sampler_achieved_hz
        eval_time: 5m
        exp_samples:
          - labels: 'pgwaitprof:sampler_achieved_hz{instance="h:9816",target="t"}'
            value: 100
      - expr: pgwaitprof:missed_tick_ratio
        eval_time: 5m
        exp_samples:
          - labels: 'pgwaitprof:missed_tick_ratio{instance="h:9816",target="t"}'
            value: 0.2
      - expr: pgwaitprof:snapshot_duration_seconds:p99
        eval_time: 5m
        exp_samples:
          - labels: 'pgwaitprof:snapshot_duration_seconds:p99{instance="h:9816",target="t"}'
            value: 0.00199
    alert_rule_test:
      - eval_time: 4m
        alertname: PgwaitprofMissedTicks
        exp_alerts: []
      - eval_time: 9m
        alertname: PgwaitprofMissedTicks
        exp_alerts:
          - exp_labels: {severity: warning, instance: "h:9816", target: t}
            exp_annotations:
              summary: pgwaitprof misses 20% of ticks for t
              description: >-
                More than 5% of sampling ticks for target t on h:9816 found the previous
                snapshot query still running, for 5 minutes. The achieved rate is below the
                configured hz, so AAS has a wider error band. Lower hz for this target, or look
                at pgwaitprof_snapshot_duration_seconds: the server or the host may be saturated.
  - interval: 1m
    input_series:
      - series: 'pgwaitprof_up{instance="h:9816",job="pgwaitprof",target="t"}'
        values: '1x5 0x20'
      - series: 'pgwaitprof_hidden_backends{instance="h:9816",job="pgwaitprof",target="t"}'
        values: '0x5 2x20'
      - series: 'up{instance="h:9816",job="pgwaitprof"}'
        values: '1x5 0x20'
    alert_rule_test:
      - eval_time: 5m
        alertname: PgwaitprofDown
        exp_alerts: []
      - eval_time: 8m
        alertname: PgwaitprofDown
        exp_alerts:
          - exp_labels: {severity: warning, instance: "h:9816", job: pgwaitprof, target: t}
            exp_annotations:
              summary: pgwaitprof cannot sample target t on h:9816
              description: >-
                The daemon has not been able to take snapshots of target t for 1 minute: the
                server is down or refuses the sampling connection. Wait-event profiles and run
                reports for this target have a gap. The daemon's log has the libpq error.
      - eval_time: 14m
        alertname: PgwaitprofHiddenBackends
        exp_alerts: []
      - eval_time: 16m
        alertname: PgwaitprofHiddenBackends
        exp_alerts:
          - exp_labels: {severity: info, instance: "h:9816", job: pgwaitprof, target: t}
            exp_annotations:
              summary: pgwaitprof cannot see the wait events of 2 backends of t
              description: >-
                The sampling role of target t on h:9816 may not read the wait events of some
                backends (other roles' sessions), so profiles leave them out. Grant it
                pg_read_all_stats (or pg_monitor): GRANT pg_read_all_stats TO <sampling role>;
      - eval_time: 6m
        alertname: PgwaitprofScrapeFailed
        exp_alerts: []
      - eval_time: 8m
        alertname: PgwaitprofScrapeFailed
        exp_alerts:
          - exp_labels: {severity: warning, instance: "h:9816", job: pgwaitprof}
            exp_annotations:
              summary: pgwaitprof on h:9816 cannot be scraped
              description: >-
                Prometheus has failed to scrape the pgwaitprof daemon at h:9816 for 1 minute:
                the daemon is stopped or its listen address changed. Check
                \`systemctl status pgwaitprof\` and \`journalctl -u pgwaitprof\`.
  # A target that is down misses every tick: PgwaitprofDown fires, PgwaitprofMissedTicks does not.
  - interval: 15s
    input_series:
      - series: 'pgwaitprof_up{instance="h:9816",job="pgwaitprof",target="t"}'
        values: '1x4 0x40'
      - series: 'pgwaitprof_snapshots_total{instance="h:9816",job="pgwaitprof",target="t"}'
        values: '0+1500x4 6000x40'
      - series: 'pgwaitprof_missed_ticks_total{instance="h:9816",job="pgwaitprof",target="t"}'
        values: '0x4 0+1500x40'
    alert_rule_test:
      - eval_time: 10m
        alertname: PgwaitprofMissedTicks
        exp_alerts: []
  # A change point: the gauge holds the step from the run that brought it to the next run.
  - interval: 1m
    input_series:
      - series: 'pgwaitprof_change_point{instance="h:9816",job="pgwaitprof",group="nightly",history="results",metric="tps"}'
        values: '0x5 -0.24x10 0x5'
    alert_rule_test:
      - eval_time: 4m
        alertname: PgwaitprofChangePoint
        exp_alerts: []
      - eval_time: 8m
        alertname: PgwaitprofChangePoint
        exp_alerts:
          - exp_labels: {severity: warning, instance: "h:9816", job: pgwaitprof, group: nightly, history: results, metric: tps}
            exp_annotations:
              summary: tps of nightly changed by -24%
              description: >-
                The run history of group nightly (results: data_dir is the data directory's,
                results the results database's, every host's runs) seen by h:9816 has a new
                change point in tps: its level changed by -24% and stayed changed (E-Divisive
                with a permutation test, and an end test for a new level of the last 2 or 3
                runs, at a false-positive probability of 0.01 in all). The daemon's
                log names the first run of the new level and the waits that moved most;
                pgwaitprof trend --label nightly (with --results-dsn for the results database's
                history) explains it.
      - eval_time: 18m
        alertname: PgwaitprofChangePoint
        exp_alerts: []
EOF
check "promtool test rules (AAS excludes idle, alerts fire after their 'for')" \
  promtool test rules "$work_dir/rules_test.yml"

# --- Grafana dashboard -------------------------------------------------------------------------
if output=$(jq empty "$dashboard" 2>&1); then
  pass "dashboard is valid JSON (jq)"
  helper_output=$(promql_helper --check "$dashboard" "$rules" "$work_dir" 2>&1) || true
  while IFS=$'\t' read -r status name detail; do
    case "$status" in
      ok) pass "$name" ;;
      FAIL) fail "$name" "$detail" ;;
      info) printf 'info  %s: %s\n' "$name" "$detail" ;;
      *) fail "PromQL helper" "$status $name $detail" ;;
    esac
  done <<<"$helper_output"
  if [[ -f "$work_dir/dashboard_rules.yml" ]]; then
    check "every dashboard PromQL expression parses (promtool, variables substituted)" \
      promtool check rules "$work_dir/dashboard_rules.yml"
  else
    fail "every dashboard PromQL expression parses" "the helper wrote no expressions"
  fi
else
  fail "dashboard is valid JSON (jq)" "$output"
fi

# --- systemd unit ------------------------------------------------------------------------------
# verify needs the unit's executables to exist: check against a scratch root holding the host's
# unit library, /bin/kill, and a stand-in for /usr/bin/pgwaitprof.
if command -v systemd-analyze >/dev/null; then
  unit_root=$work_dir/unit-root
  unit_library=
  for candidate in /usr/lib/systemd/system /lib/systemd/system; do
    if [[ -f $candidate/multi-user.target ]]; then unit_library=$candidate; break; fi
  done
  if [[ -z $unit_library ]]; then
    fail "systemd-analyze verify pgwaitprof.service" "no multi-user.target in /usr/lib/systemd/system or /lib/systemd/system"
  else
    mkdir -p "$unit_root/usr/lib/systemd" "$unit_root/usr/bin" "$unit_root/etc/systemd/system"
    cp -a "$unit_library" "$unit_root/usr/lib/systemd/system"
    cp "$(command -v kill)" "$unit_root/usr/bin/kill" 2>/dev/null || cp /bin/kill "$unit_root/usr/bin/kill"
    ln -s usr/bin "$unit_root/bin"
    printf '#!/bin/sh\nexit 0\n' >"$unit_root/usr/bin/pgwaitprof"
    chmod 755 "$unit_root/usr/bin/pgwaitprof"
    cp "$unit" "$unit_root/etc/systemd/system/pgwaitprof.service"
    # It only warns (exit 0) about values it ignores, such as "Restart=sometimes": any output fails.
    if output=$(systemd-analyze verify --man=no --root="$unit_root" pgwaitprof.service 2>&1) &&
      [[ -z $output ]]; then
      pass "systemd-analyze verify pgwaitprof.service"
    else
      fail "systemd-analyze verify pgwaitprof.service" "$output"
    fi
  fi
else
  skip "systemd-analyze verify pgwaitprof.service" \
    "systemd-analyze is not installed (Debian package systemd; it need not be running)"
fi
unit_problems=()
# shellcheck disable=SC2016  # $MAINPID is for systemd, not the shell
for setting in "User=pgwaitprof" "Restart=on-failure" 'ExecReload=/bin/kill -HUP $MAINPID' \
  "NoNewPrivileges=yes" "ProtectSystem=strict" "ReadWritePaths=/var/lib/pgwaitprof" \
  "StateDirectory=pgwaitprof" "PrivateTmp=yes" "ProtectHome=yes" "CapabilityBoundingSet=" \
  "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6" \
  "ExecStart=/usr/bin/pgwaitprof daemon -c /etc/pgwaitprof/pgwaitprof.yaml"; do
  grep -qxF -- "$setting" "$unit" || unit_problems+=("missing line: $setting")
done
# /proc/stat must stay readable for the environment section of run reports.
grep -qE '^(ProcSubset=pid|ProtectProc=(invisible|noaccess|ptraceable))' "$unit" &&
  unit_problems+=("ProcSubset/ProtectProc hide /proc files the daemon reads")
if ((${#unit_problems[@]})); then
  fail "unit has the required settings" "$(printf '%s\n' "${unit_problems[@]}")"
else
  pass "unit has the required settings"
fi

# --- the scripts themselves ----------------------------------------------------------------------
scripts=("$install_script" "$deploy_dir/package.sh" "$script_dir/check_static.sh"
  "$script_dir/prometheus_e2e.sh" "$script_dir/package_test.sh" "$script_dir/grafana_schema/check.sh")
# shellcheck disable=SC2016  # expanded by the inner shell
check "bash -n on the deploy scripts" bash -c 'for f; do bash -n "$f" || exit 1; done' _ "${scripts[@]}"
# shellcheck disable=SC2016  # expanded by the inner shell
check "sh -n on the maintainer scripts" sh -c 'for f; do sh -n "$f" || exit 1; done' _ "${maintainer_scripts[@]}"
if command -v shellcheck >/dev/null; then
  check "shellcheck on the deploy scripts" shellcheck -x "${scripts[@]}"
  check "shellcheck on the maintainer scripts (POSIX sh)" shellcheck -s sh "${maintainer_scripts[@]}"
else
  skip "shellcheck on the deploy scripts" "shellcheck is not installed (Debian package shellcheck)"
fi

echo "check_static: $passed passed, $failed failed, $skipped skipped"
if ((failed)); then
  printf 'failed: %s\n' "${failures[@]}"
  exit 1
fi
