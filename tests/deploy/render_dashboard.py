#!/usr/bin/env python3
"""Renders the main panels of the pgwaitprof Grafana dashboard from a real Prometheus into one
self-contained HTML page: inline SVG time series (stacking, overrides, right axes, legends with
mean and max, the "Runs" annotation as shaded regions), stat tiles and the top wait events table.

This is not Grafana (which Debian does not package): it reads deploy/grafana/pgwaitprof.json,
substitutes the template variables as tests/deploy/prometheus_e2e.sh does, asks Prometheus
/api/v1/query_range (one step per second by default) for time series and stats and
/api/v1/query (at --end, $__range = end - start) for tables, and draws what comes back. The page
says so in its first line. The panel layout follows the dashboard's gridPos, with the rows of
panels left out closed up, scaled to --height.

  render_dashboard.py --prometheus URL --dashboard JSON --start T0 --end T1 --out PAGE.html
                      [--set NAME=VALUE]... [--step SECONDS] [--panels ID,...] [--width PX]
                      [--height PX]

T0 and T1 are Unix times (seconds, fractions allowed). Variables not given with --set are taken
from the dashboard's variable queries (label_values), first value, as Grafana does. Python 3
standard library only.
"""
import argparse
import datetime
import json
import math
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

# AAS by wait class; tps and latency; top wait events (table and chart); sampler health (stats,
# sampling rate, snapshot duration, missed ticks). Row panels of these sections come along.
DEFAULT_PANELS = [2, 3, 6, 7, 13, 14, 15, 16, 17, 18, 19, 20]

# Grafana's dark theme and its named colors (those the dashboard uses, and a few more).
def fail(message):
    print(f"render_dashboard: {message}", file=sys.stderr)
    sys.exit(1)


# --- Prometheus ----------------------------------------------------------------------------------
class Prometheus:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def get(self, path, params):
        query = urllib.parse.urlencode(params, doseq=True)
        request = urllib.request.Request(f"{self.url}{path}?{query}")
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                answer = json.load(response)
        except urllib.error.HTTPError as error:
            try:
                answer = json.load(error)
            except ValueError:
                raise RuntimeError(f"{path}: HTTP {error.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise RuntimeError(f"{path}: {error}") from None
        if answer.get("status") != "success":
            raise RuntimeError(f"{path}: {answer.get('error', answer)}")
        return answer["data"]

    def query_range(self, expr, start, end, step):
        data = self.get("/api/v1/query_range",
                        {"query": expr, "start": start, "end": end, "step": step})
        return [(series["metric"], [(float(t), number(v)) for t, v in series["values"]])
                for series in data["result"]]

    def query(self, expr, at):
        data = self.get("/api/v1/query", {"query": expr, "time": at})
        if data["resultType"] != "vector":
            return [({}, number(data["result"][1]))]
        return [(series["metric"], number(series["value"][1])) for series in data["result"]]

    def label_values(self, selector, label, start, end):
        if selector:
            data = self.get("/api/v1/series", {"match[]": selector, "start": start, "end": end})
            return sorted({series[label] for series in data if label in series})
        return sorted(self.get(f"/api/v1/label/{label}/values", {"start": start, "end": end}))


# --- variables: substituted exactly as the deploy checks do ----------------------------------
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from promql_helper import substitute  # noqa: E402
from dashboard_format import number, esc, clock, THEME, FONT  # noqa: E402
from dashboard_panels import timeseries_series, render_timeseries, render_stat, render_table  # noqa: E402


def resolve_variables(dashboard, given, prometheus, start, end, step):
    values = {"datasource": "prometheus", "DS_PROMETHEUS": "prometheus",
              "__range": f"{max(1, round(end - start))}s", "__rate_interval": "15s",
              "__interval": f"{step:g}s"}
    values.update(given)
    for variable in dashboard.get("templating", {}).get("list", []):
        name = variable.get("name")
        if variable.get("type") != "query" or name in values:
            continue
        query = variable.get("query")
        if isinstance(query, dict):
            query = query.get("query", "")
        match = re.fullmatch(r"\s*label_values\(\s*(?:(.*?)\s*,\s*)?(\w+)\s*\)\s*", query, re.S)
        if not match:
            raise ValueError(f"variable {name}: query {query!r} is not label_values(...)")
        selector = substitute(match.group(1), values) if match.group(1) else None
        options = prometheus.label_values(selector, match.group(2), start, end)
        if not options:
            raise ValueError(f"variable {name}: {query} has no values; give it with --set")
        values[name] = options[0]
    return values


def annotation_regions(dashboard, prometheus, variables, start, end, step):
    regions = []
    for annotation in dashboard.get("annotations", {}).get("list", []):
        if not annotation.get("expr") or not annotation.get("enable", True):
            continue
        expr = substitute(annotation["expr"], variables)
        color = annotation.get("iconColor", "#FF9830")
        solid = re.sub(r"rgba\(([^,]+),([^,]+),([^,]+),[^)]*\)", r"rgb(\1,\2,\3)", color)
        for metric, points in prometheus.query_range(expr, start, end, step):
            text = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: metric.get(m.group(1), ""),
                          annotation.get("titleFormat", annotation.get("name", "")))
            present = [t for t, v in points if v is not None]
            run_start = None
            previous = None
            for t in present:
                if run_start is None:
                    run_start = t
                elif t - previous > step * 1.5:
                    regions.append((run_start, previous, text, solid))
                    run_start = t
                previous = t
            if run_start is not None:
                regions.append((run_start, previous, text, solid))
    return regions


# --- layout and page -----------------------------------------------------------------------------
def layout(dashboard, wanted):
    """The wanted panels and the rows above them, with the vertical gaps of the panels left out
    closed up: [(panel, x, y, w, h)] in grid units."""
    panels = dashboard.get("panels", [])
    chosen = []
    current_row = None
    rows_used = set()
    for panel in sorted(panels, key=lambda p: (p["gridPos"]["y"], p["gridPos"]["x"])):
        if panel.get("type") == "row":
            current_row = panel
            continue
        if panel.get("id") in wanted:
            chosen.append(panel)
            if current_row is not None:
                rows_used.add(current_row["id"])
    chosen += [p for p in panels if p.get("id") in rows_used]
    covered = set()
    for panel in chosen:
        grid = panel["gridPos"]
        covered.update(range(grid["y"], grid["y"] + grid["h"]))
    order = sorted(covered)
    compact = {y: i for i, y in enumerate(order)}
    placed = [(p, p["gridPos"]["x"], compact[p["gridPos"]["y"]], p["gridPos"]["w"],
               p["gridPos"]["h"]) for p in chosen]
    placed.sort(key=lambda item: (item[2], item[1]))
    return placed, len(order)


CSS = """
* { box-sizing: border-box; }
body { margin: 0; background: %(page)s; color: %(text)s; font-family: %(font)s; font-size: 12px; }
.banner { height: 38px; padding: 5px 12px; background: #3d2a05; color: #ffd27f;
  border-bottom: 2px solid #ff9830; font-size: 12.5px; line-height: 14px; overflow: hidden; }
.banner b { color: #fff; }
.banner .sub { color: #d8c49a; font-size: 11px; }
.grid { position: relative; margin: 8px 8px 0 8px; }
.panel { position: absolute; background: %(panel)s; border: 1px solid %(border)s;
  border-radius: 3px; overflow: hidden; }
.panel .title { height: 26px; padding: 6px 10px 0 10px; font-weight: 500; font-size: 13px;
  color: %(text)s; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.panel .body { padding: 0 6px 0 6px; }
.row { position: absolute; font-size: 14px; font-weight: 500; color: %(text)s;
  padding-top: 2px; white-space: nowrap; }
.row::before { content: "\\25BE  "; color: %(muted)s; }
.ts { display: flex; }
.ts.below { flex-direction: column; }
.legend { overflow: hidden; padding: 2px 0 0 4px; }
.legend table { border-collapse: collapse; width: 100%%; font-size: 11px; table-layout: fixed; }
.legend th { color: #6e9fff; font-weight: 500; text-align: right; padding: 1px 4px;
  border-bottom: 1px solid %(border)s; }
.legend td { padding: 0 4px; height: 16px; text-align: right; white-space: nowrap;
  border-bottom: 1px solid #202226; font-variant-numeric: tabular-nums; }
.legend th { height: 16px; }
.legend td.name { text-align: left; overflow: hidden; text-overflow: ellipsis; }
.sw { display: inline-block; width: 14px; height: 4px; border-radius: 2px; margin: 0 6px 2px 0;
  vertical-align: middle; }
.sw.dash { height: 0; border-top: 2px dashed; border-radius: 0; }
.stat { display: flex; align-items: center; justify-content: center; font-weight: 500;
  border-radius: 2px; margin: 0 2px; }
.nodata { display: flex; align-items: center; justify-content: center; color: %(muted)s; }
.table { overflow: hidden; }
.table table { border-collapse: collapse; width: 100%%; font-size: 12px; }
.table th { text-align: left; color: #6e9fff; font-weight: 500; padding: 5px 8px;
  border-bottom: 1px solid %(border)s; }
.table th.num { text-align: right; }
.table td { padding: 4px 8px; border-bottom: 1px solid #24272c; height: 25px; white-space: nowrap; }
.table td.num { text-align: right; font-variant-numeric: tabular-nums; }
.table td.gauge { width: 26%%; }
.gauge .bar { display: inline-block; width: calc(100%% - 52px); height: 12px; background: #2c3038;
  vertical-align: middle; border-radius: 2px; overflow: hidden; }
.gauge .bar div { height: 100%%; }
.gauge span { display: inline-block; width: 48px; text-align: right; font-variant-numeric: tabular-nums; }
.note { color: %(muted)s; font-size: 11px; padding: 3px 8px; }
"""


def render_page(args, dashboard, prometheus, variables):
    start, end, step = math.floor(args.start), math.ceil(args.end), args.step
    times = list(range(start, end + 1, int(step))) if step == int(step) else None
    if times is None:
        count = int((end - start) / step)
        times = [start + i * step for i in range(count + 1)]
    placed, units = layout(dashboard, set(args.panels))
    if not placed:
        raise ValueError("none of the wanted panels is in the dashboard")
    regions = annotation_regions(dashboard, prometheus, variables, start, end, step)

    banner_h, gap, page_pad = 40, 8, 16
    grid_w = args.width - 16
    row_unit = max(16, (args.height - banner_h - page_pad - gap * units) / units)
    col_w = (grid_w + gap) / 24

    blocks = []
    for panel, x, y, w, h in placed:
        left, top = x * col_w, y * (row_unit + gap)
        width, height = w * col_w - gap, h * row_unit + (h - 1) * gap
        title = esc(substitute(panel.get("title", ""), variables))
        if panel.get("type") == "row":
            blocks.append(f'<div class="row" style="left:{left:.0f}px;top:{top:.0f}px;'
                          f'width:{width:.0f}px;height:{height:.0f}px">{title}</div>')
            continue
        body_w, body_h = width - 14, int(height - 26 - 6)
        kind = panel.get("type")
        if kind == "timeseries":
            series = timeseries_series(panel, prometheus, variables, times, start, end, step)
            body = render_timeseries(panel, series, regions, times, body_w, body_h)
        elif kind == "stat":
            body = render_stat(panel, prometheus, variables, start, end, step, body_w, body_h)
        elif kind == "table":
            body = render_table(panel, prometheus, variables, end, body_w, body_h)
        else:
            body = (f'<div class="nodata" style="height:{body_h}px">panel type {esc(kind)} '
                    f'is not drawn here</div>')
        blocks.append(f'<div class="panel" style="left:{left:.0f}px;top:{top:.0f}px;'
                      f'width:{width:.0f}px;height:{height:.0f}px"><div class="title">{title}</div>'
                      f'<div class="body">{body}</div></div>')

    grid_h = units * (row_unit + gap)
    shown_vars = ", ".join(f"{k}={variables[k]}" for k in ("instance", "target", "wait_event_type",
                                                           "wait_event") if k in variables)
    started = datetime.datetime.fromtimestamp(start, datetime.timezone.utc)
    banner = (
        f'<div class="banner"><b>Rendered by tests/deploy/render_dashboard.py from Prometheus '
        f'query_range data, not Grafana.</b> Dashboard “{esc(dashboard.get("title", ""))}” '
        f'(deploy/grafana/pgwaitprof.json), its main panels and layout.<br>'
        f'<span class="sub">{started:%Y-%m-%d} {clock(start)} to {clock(end)} UTC '
        f'({end - start} s, step {step:g} s; tables: instant queries at the end over '
        f'$__range = {esc(variables.get("__range", ""))}) · {esc(shown_vars)} · '
        f'shaded: the “Runs” annotation</span></div>')
    css = CSS % dict(THEME, font=FONT)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>{esc(dashboard.get("title", "dashboard"))}: rendered from Prometheus, '
            f'not Grafana</title><style>{css}</style></head><body>{banner}'
            f'<div class="grid" style="height:{grid_h:.0f}px">{"".join(blocks)}</div>'
            f'</body></html>\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prometheus", required=True, help="Prometheus base URL")
    parser.add_argument("--dashboard", required=True, help="Grafana dashboard JSON")
    parser.add_argument("--start", type=float, required=True, help="Unix time")
    parser.add_argument("--end", type=float, required=True, help="Unix time")
    parser.add_argument("--step", type=float, default=1.0, help="query_range step, seconds")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a dashboard variable (repeatable)")
    parser.add_argument("--panels", default=",".join(map(str, DEFAULT_PANELS)),
                        help="panel ids to draw, comma-separated")
    parser.add_argument("--width", type=int, default=1400, help="page width, px")
    parser.add_argument("--height", type=int, default=1300, help="page height, px")
    parser.add_argument("--out", required=True, help="the HTML page to write")
    args = parser.parse_args()
    try:
        args.panels = [int(p) for p in args.panels.split(",") if p.strip()]
    except ValueError:
        fail("--panels takes panel ids, comma-separated")
    if args.end <= args.start or args.step <= 0:
        fail("need --start < --end and --step > 0")
    given = {}
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep or not name:
            fail(f"--set {item!r}: expected NAME=VALUE")
        given[name] = value
    try:
        with open(args.dashboard, encoding="utf-8") as f:
            dashboard = json.load(f)
    except (OSError, ValueError) as error:
        fail(f"{args.dashboard}: {error}")
    prometheus = Prometheus(args.prometheus)
    try:
        variables = resolve_variables(dashboard, given, prometheus, args.start, args.end,
                                      args.step)
        page = render_page(args, dashboard, prometheus, variables)
    except (RuntimeError, ValueError) as error:
        fail(str(error))
    temporary = args.out + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(temporary, args.out)


if __name__ == "__main__":
    main()
