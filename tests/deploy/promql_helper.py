#!/usr/bin/env python3
"""The PromQL helper of the deploy checks: extracts expressions from the Grafana dashboard,
substitutes Grafana variables, lists the metric and label names an expression uses, and checks
them against the metric contract. check_static.sh and prometheus_e2e.sh run it as a program;
render_dashboard.py imports its variable substitution."""
import json
import re
import sys

# DESIGN.md "Prometheus metrics", plus the collector wrapper's gauges (STYLE.md, node_exporter
# pattern). Keep in step with the daemon's exposition; prometheus_e2e.sh checks the real one.
COUNTERS = ["pgwaitprof_snapshots_total", "pgwaitprof_wait_samples_total",
            "pgwaitprof_missed_ticks_total", "pgwaitprof_wait_seconds_total",
            "pgwaitprof_waits_total"]
HISTOGRAMS = ["pgwaitprof_wait_duration_seconds", "pgwaitprof_snapshot_duration_seconds"]
GAUGES = ["pgwaitprof_up", "pgwaitprof_hidden_backends", "pgwaitprof_run_active",
          "pgwaitprof_loadgen_tps", "pgwaitprof_loadgen_latency_seconds",
          "pgwaitprof_build_info", "pgwaitprof_collector_duration_seconds",
          "pgwaitprof_collector_success", "pgwaitprof_kernel_check_active_sessions",
          "pgwaitprof_kernel_check_within_bounds", "pgwaitprof_change_point"]
EXPORTED = set(COUNTERS) | set(GAUGES) | {
    h + suffix for h in HISTOGRAMS for suffix in ("_bucket", "_sum", "_count")}
# Series Prometheus itself adds for every scrape target.
PROMETHEUS_SERIES = {"up"}
LABELS = {"target", "backend_type", "state", "wait_event_type", "wait_event", "run_id",
          "workload", "version", "revision", "collector", "le", "instance", "job", "view", "part",
          "group", "metric"}
STATES = {"active", "idle", "idle in transaction", "background"}

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "bool", "offset", "inf", "nan"}
GRAFANA_BUILTINS = {"__range": "1h", "__rate_interval": "1m", "__interval": "15s"}


def substitute(expr, values):
    """Replaces $name, ${name} and ${name:format} with values[name]; unknown names are errors."""
    unknown = []

    def replace(match):
        name = match.group(1) or match.group(2)
        if name not in values:
            unknown.append(name)
            return match.group(0)
        return values[name]

    result = re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", replace, expr)
    if unknown:
        raise ValueError("unknown variable(s) " + ", ".join("$" + n for n in sorted(set(unknown))))
    return result


def label_values_query(query):
    """label_values(SELECTOR, LABEL) -> (SELECTOR, LABEL); label_values(LABEL) -> (None, LABEL)."""
    match = re.fullmatch(r"\s*label_values\(\s*(.*?)\s*,\s*(\w+)\s*\)\s*", query, re.S)
    if match:
        return match.group(1), match.group(2)
    match = re.fullmatch(r"\s*label_values\(\s*(\w+)\s*\)\s*", query)
    if match:
        return None, match.group(1)
    raise ValueError(f"variable query {query!r} is not label_values(...)")


def dashboard_exprs(dashboard):
    """Every PromQL expression of the dashboard: panel targets, annotations, variable queries."""
    found = []

    def walk_panels(panels):
        for panel in panels:
            for target in panel.get("targets", []):
                if target.get("expr"):
                    found.append({"kind": "panel",
                                  "where": f'panel "{panel.get("title", "")}" {target.get("refId", "")}',
                                  "expr": target["expr"]})
            walk_panels(panel.get("panels", []))

    walk_panels(dashboard.get("panels", []))
    for annotation in dashboard.get("annotations", {}).get("list", []):
        if annotation.get("expr"):
            found.append({"kind": "annotation", "where": f'annotation "{annotation.get("name")}"',
                          "expr": annotation["expr"]})
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") != "query":
            continue
        query = variable.get("query")
        if isinstance(query, dict):
            query = query.get("query", "")
        selector, label = label_values_query(query)
        found.append({"kind": "variable", "where": f'variable "{variable["name"]}"',
                      "expr": selector or "", "label": label})
    return found


def names_in(expr):
    """(metric names, label names) an expression uses. Not a full parser: strings are removed
    first, then label matchers, ranges and grouping lists; what is left that is not a function
    call or keyword is a metric name."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    labels = set()
    for matchers in re.findall(r"\{([^}]*)\}", expr):
        labels.update(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)", matchers))
    expr = re.sub(r"\{[^}]*\}", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    for words in re.findall(
            r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", expr):
        labels.update(w for w in re.split(r"[\s,]+", words) if w)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    metrics = set()
    for match in re.finditer(r"(?<![\w.])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?", expr):
        word, call = match.group(1), match.group(2)
        if call or word.lower() in KEYWORDS or re.fullmatch(r"\d", word[0]):
            continue
        metrics.add(word)
    return metrics, labels


def state_values(expr):
    return set(re.findall(r'\bstate\s*=\s*"([^"]*)"', expr)) | set(
        re.findall(r'\bstate\s*!=\s*"([^"]*)"', expr))


def load_rules(path):
    import yaml  # Debian: python3-yaml
    with open(path) as f:
        document = yaml.safe_load(f)
    return [rule for group in document["groups"] for rule in group["rules"]]


def mode_exprs(argv):
    path, values = argv[0], dict(GRAFANA_BUILTINS)
    rest = argv[1:]
    while rest:
        if rest[0] != "--set" or len(rest) < 2 or "=" not in rest[1]:
            sys.exit("usage: --exprs DASHBOARD [--set NAME=VALUE]...")
        name, value = rest[1].split("=", 1)
        values[name] = value
        rest = rest[2:]
    with open(path) as f:
        dashboard = json.load(f)
    for item in dashboard_exprs(dashboard):
        item["expr"] = substitute(item["expr"], values)
        print(json.dumps(item))


def mode_metric_names(argv):
    used = set()
    for path in argv:
        if path.endswith(".json"):
            with open(path) as f:
                exprs = [i["expr"] for i in dashboard_exprs(json.load(f))]
        else:
            exprs = [rule["expr"] for rule in load_rules(path)]
        for expr in exprs:
            used |= names_in(expr)[0]
    print("\n".join(sorted(used)))


def mode_check(argv):
    """Prints "ok|FAIL<TAB>check<TAB>detail" lines; writes OUTDIR/dashboard_rules.yml."""
    dashboard_path, rules_path, out_dir = argv
    results = []

    def report(ok, check, detail=""):
        results.append(ok)
        print(f"{'ok' if ok else 'FAIL'}\t{check}\t{detail}")

    with open(dashboard_path) as f:
        dashboard = json.load(f)
    rules = load_rules(rules_path)
    recorded = {rule["record"] for rule in rules if "record" in rule}

    # Importable shape: schema, datasource input and variable, the variables the panels need.
    problems = []
    if not 36 <= dashboard.get("schemaVersion", 0) <= 41:
        problems.append(f"schemaVersion {dashboard.get('schemaVersion')} is not 36..41")
    if not any(i.get("type") == "datasource" and i.get("pluginId") == "prometheus"
               for i in dashboard.get("__inputs", [])):
        problems.append("no prometheus datasource in __inputs")
    variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
    datasource = variables.get("datasource", {})
    if datasource.get("type") != "datasource" or datasource.get("query") != "prometheus":
        problems.append('no variable "datasource" of type datasource/prometheus')
    target_query = variables.get("target", {}).get("query", {})
    if isinstance(target_query, dict):
        target_query = target_query.get("query", "")
    if not re.fullmatch(r"label_values\(pgwaitprof_up(\{.*\})?,\s*target\)", target_query or ""):
        problems.append(f'variable "target" is not label_values(pgwaitprof_up, target): {target_query!r}')
    ids = []

    def walk(panels):
        for panel in panels:
            ids.append(panel.get("id"))
            sources = [panel.get("datasource")] + [t.get("datasource") for t in panel.get("targets", [])]
            for source in sources:
                if panel.get("type") != "row" and (not isinstance(source, dict) or
                                                   source.get("uid") != "${datasource}"):
                    problems.append(f'panel "{panel.get("title")}" datasource is not ${{datasource}}: {source}')
            walk(panel.get("panels", []))

    walk(dashboard.get("panels", []))
    if len(ids) != len(set(ids)) or None in ids:
        problems.append(f"panel ids are missing or repeated: {ids}")
    if not any("pgwaitprof_run_active" in (a.get("expr") or "")
               for a in dashboard.get("annotations", {}).get("list", [])):
        problems.append("no annotation query on pgwaitprof_run_active")
    report(not problems, "dashboard is importable", "; ".join(problems))

    # Every expression, with variables substituted, as a recording rule promtool can parse.
    values = dict(GRAFANA_BUILTINS)
    values.update({name: "x" for name in variables})
    values["instance"] = "127.0.0.1:9816"
    exprs = dashboard_exprs(dashboard)
    with open(f"{out_dir}/dashboard_rules.yml", "w") as f:
        f.write("groups:\n  - name: dashboard\n    rules:\n")
        for number, item in enumerate(exprs):
            try:
                expr = substitute(item["expr"], values) if item["expr"] else "vector(0)"
            except ValueError as error:
                report(False, f"dashboard {item['where']}", str(error))
                continue
            f.write(f"      # {item['where']}\n      - record: dashboard_expr_{number}\n"
                    f"        expr: {json.dumps(expr)}\n")
    print(f"info\tdashboard expressions\t{len(exprs)}")

    # Metric names, label names and state values against the contract.
    allowed = EXPORTED | recorded | PROMETHEUS_SERIES
    used_anywhere = set()
    sources = [(item["where"], item["expr"], "dashboard") for item in exprs]
    sources += [(f'rule "{r.get("record") or r.get("alert")}"', r["expr"], "rules") for r in rules]
    unknown_metrics, unknown_labels, bad_states = [], [], []
    for where, expr, origin in sources:
        metrics, labels = names_in(expr)
        used_anywhere |= metrics
        unknown_metrics += [f"{origin} {where}: {m}" for m in sorted(metrics - allowed)]
        unknown_labels += [f"{origin} {where}: {l}" for l in sorted(labels - LABELS)]
        bad_states += [f"{origin} {where}: {s!r}" for s in sorted(state_values(expr) - STATES)]
        if not metrics and origin == "dashboard" and expr:
            unknown_metrics.append(f"{origin} {where}: uses no metric at all")
    report(not unknown_metrics, "only exported metrics and recording rules are used",
           "; ".join(unknown_metrics))
    report(not unknown_labels, "only exported label names are used", "; ".join(unknown_labels))
    report(not bad_states, "state matchers use the daemon's state values", "; ".join(bad_states))
    unused = sorted(m for m in set(COUNTERS) | set(GAUGES) if m not in used_anywhere)
    unused += sorted(h for h in HISTOGRAMS if h + "_bucket" not in used_anywhere)
    report(not unused, "every exported metric is on the dashboard or in the rules",
           "unused: " + ", ".join(unused))
    unused_rules = sorted(r for r in recorded if r not in used_anywhere)
    report(not unused_rules, "every recording rule is used by the dashboard or an alert",
           "unused: " + ", ".join(unused_rules))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    modes = {"--exprs": mode_exprs, "--metric-names": mode_metric_names, "--check": mode_check}
    if len(sys.argv) < 2 or sys.argv[1] not in modes:
        sys.exit("usage: --exprs | --metric-names | --check")
    modes[sys.argv[1]](sys.argv[2:])
