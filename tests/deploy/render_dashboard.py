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
import html
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
THEME = {"page": "#111217", "panel": "#181b1f", "border": "#2a2d33", "text": "#ccccdc",
         "muted": "#8e8e9e", "grid": "#2b2e34", "axis": "#9fa0ab"}
NAMED_COLORS = {
    "green": "#73BF69", "dark-green": "#37872D", "semi-dark-green": "#56A64B",
    "red": "#F2495C", "dark-red": "#C4162A", "semi-dark-red": "#E02F44",
    "blue": "#5794F2", "dark-blue": "#1F60C4", "super-light-blue": "#C0D8FF",
    "yellow": "#FADE2A", "dark-yellow": "#E0B400", "purple": "#B877D9",
    "dark-purple": "#8F3BB8", "orange": "#FF9830", "dark-orange": "#FA6400",
    "gray": "#8E8E8E", "grey": "#8E8E8E", "text": THEME["text"], "transparent": "transparent",
}
# Grafana's "palette-classic".
CLASSIC_PALETTE = ["#7EB26D", "#EAB839", "#6ED0E0", "#EF843C", "#E24D42", "#1F78C1", "#BA43A9",
                   "#705DA0", "#508642", "#CCA300", "#447EBC", "#C15C17", "#890F02", "#0A437C",
                   "#6D1F62", "#584477", "#B7DBAB", "#F4D598", "#70DBED", "#F9BA8F"]

FONT = "Inter, 'Helvetica Neue', Arial, 'Liberation Sans', 'DejaVu Sans', sans-serif"


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


def number(text):
    value = float(text)
    return None if math.isnan(value) or math.isinf(value) else value


# --- variables: substituted exactly as the deploy checks do ----------------------------------
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from promql_helper import substitute  # noqa: E402


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


# --- formatting ----------------------------------------------------------------------------------
def auto_decimals(magnitude):
    if magnitude == 0 or magnitude >= 100:
        return 0
    if magnitude >= 10:
        return 1
    if magnitude >= 1:
        return 2
    return min(6, 2 - math.floor(math.log10(magnitude)))


def unit_scale(unit, magnitude):
    """(divisor, suffix) with which Grafana's `unit` shows numbers of this magnitude."""
    if unit == "percentunit":
        return 0.01, "%"
    if unit == "percent":
        return 1, "%"
    if unit == "s":
        if magnitude == 0:
            return 1, " s"
        return next(((d, x) for d, x in ((86400, " day"), (3600, " hour"), (60, " min"),
                                         (1, " s"), (1e-3, " ms"), (1e-6, " µs"))
                     if magnitude >= d), (1e-9, " ns"))
    if unit == "hertz":
        return next(((d, x) for d, x in ((1e9, " GHz"), (1e6, " MHz"), (1e3, " kHz"))
                     if magnitude >= d), (1, " Hz"))
    if unit in ("short", None, ""):
        return next(((d, x) for d, x in ((1e12, " T"), (1e9, " Bil"), (1e6, " Mil"), (1e3, " K"))
                     if magnitude >= d), (1, ""))
    return 1, ""  # "none", and units this page does not know: the bare number


def format_value(value, unit, decimals=None):
    """Value with Grafana's unit, scaled (K, ms, ...); decimals by magnitude unless given."""
    if value is None:
        return "-"
    divisor, suffix = unit_scale(unit, abs(value))
    if decimals is None:
        decimals = auto_decimals(abs(value) / divisor)
    return f"{value / divisor:.{decimals}f}{suffix}"


def color_of(spec):
    if not spec:
        return None
    return NAMED_COLORS.get(spec, spec)


def legend_name(legend_format, metric):
    if legend_format and legend_format != "__auto":
        return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: metric.get(m.group(1), ""), legend_format)
    labels = ", ".join(f'{k}="{v}"' for k, v in sorted(metric.items()) if k != "__name__")
    return f"{metric.get('__name__', '')}{{{labels}}}"


def esc(text):
    return html.escape(str(text), quote=True)


def nice_step(span, count):
    """A 1-2-5 step that cuts `span` into about `count` intervals."""
    if span <= 0:
        return 1
    raw = span / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def clock(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%H:%M:%S")


# --- field config: defaults plus overrides, per series ------------------------------------------
def field_config(panel, ref_id, name):
    """The effective field config of one series: defaults with matching overrides applied."""
    config = json.loads(json.dumps(panel.get("fieldConfig", {}).get("defaults", {})))
    config.setdefault("custom", {})
    for override in panel.get("fieldConfig", {}).get("overrides", []):
        matcher = override.get("matcher", {})
        kind, option = matcher.get("id"), matcher.get("options")
        if not ((kind == "byFrameRefID" and option == ref_id) or
                (kind == "byName" and option == name)):
            continue
        for prop in override.get("properties", []):
            path = prop["id"].split(".")
            target = config
            for key in path[:-1]:
                target = target.setdefault(key, {})
            target[path[-1]] = prop.get("value")
    return config


# --- time series panel ---------------------------------------------------------------------------
class Series:
    def __init__(self, name, ref_id, config, values, color):
        self.name, self.ref_id, self.config, self.values = name, ref_id, config, values
        custom = config.get("custom", {})
        self.color = color
        self.fill = (custom.get("fillOpacity") or 0) / 100
        self.line_width = custom.get("lineWidth", 1)
        dash = custom.get("lineStyle", {})
        self.dash = dash.get("dash") if dash.get("fill") == "dash" else None
        self.stacked = custom.get("stacking", {}).get("mode", "none") == "normal"
        self.stack_group = custom.get("stacking", {}).get("group", "A")
        self.right = custom.get("axisPlacement") == "right"
        self.axis_label = custom.get("axisLabel")
        self.unit = config.get("unit", "short")
        self.decimals = config.get("decimals")
        present = [v for v in values if v is not None]
        self.mean = sum(present) / len(present) if present else None
        self.max = max(present) if present else None


def timeseries_series(panel, prometheus, variables, times, start, end, step):
    series = []
    palette_index = 0
    for target in panel.get("targets", []):
        if not target.get("expr") or target.get("hide"):
            continue
        expr = substitute(target["expr"], variables)
        for metric, points in prometheus.query_range(expr, start, end, step):
            by_time = {round(t): v for t, v in points}
            values = [by_time.get(round(t)) for t in times]
            name = legend_name(target.get("legendFormat"), metric)
            config = field_config(panel, target.get("refId", ""), name)
            color_spec = config.get("color", {})
            if color_spec.get("mode") == "fixed":
                color = color_of(color_spec.get("fixedColor"))
            else:
                color = CLASSIC_PALETTE[palette_index % len(CLASSIC_PALETTE)]
            palette_index += 1
            series.append(Series(name, target.get("refId", ""), config, values, color))
    return series


def segments(values):
    """Index ranges [i, j) where values are not None."""
    result, begin = [], None
    for i, value in enumerate(values):
        if value is not None and begin is None:
            begin = i
        elif value is None and begin is not None:
            result.append((begin, i))
            begin = None
    if begin is not None:
        result.append((begin, len(values)))
    return result


def value_axis(low, high, count):
    """(ticks, step, top): the axis ends at the first tick at or above `high`, unless that
    wastes more than a quarter of the height; then just above `high`."""
    step = nice_step(high - low, count)
    top = math.ceil(high / step - 1e-9) * step
    if top - high > 0.25 * (top - low):
        top = low + (high - low) * 1.05
    ticks = []
    value = math.ceil(low / step - 1e-9) * step
    while value <= top + step * 1e-6:
        ticks.append(round(value, 12))
        value += step
    return ticks, step, top


def time_ticks(start, end, width):
    span = end - start
    wanted = max(2, width // 75)
    for step in (1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600):
        if span / step <= wanted:
            break
    first = math.ceil(start / step) * step
    return [t for t in range(int(first), int(end) + 1, step)]


LEGEND_ROW = 16  # px per legend table row
CALC_W = 54  # px per legend value column


def legend_width(series, calcs):
    longest = max((len(s.name) for s in series), default=4)
    return 44 + longest * 6.6 + len(calcs) * CALC_W  # swatch, name, value columns


def render_timeseries(panel, series, regions, times, width, height):
    """SVG of the plot plus an HTML legend table on the right, as the dashboard's legend says."""
    legend_options = panel.get("options", {}).get("legend", {})
    show_legend = legend_options.get("showLegend", True) and series
    calcs = [c for c in legend_options.get("calcs", []) if c in ("mean", "max")]
    if not series:
        return f'<div class="nodata" style="height:{height}px">No data</div>'
    # The dashboard puts table legends on the right, which would squeeze the plot of a narrow
    # panel to a strip: there the legend goes below the plot instead.
    legend_w = min(legend_width(series, calcs), 0.42 * width) if show_legend else 0
    below = show_legend and width < 600
    if below:
        legend_w = width
        legend_h = min(height // 2, LEGEND_ROW * (len(series) + 1) + 4)
        plot_w, plot_h = width, height - legend_h
    else:
        legend_h = height
        plot_w, plot_h = width - legend_w, height
    height = plot_h

    left = [s for s in series if not s.right]
    right = [s for s in series if s.right]
    # Stacks: running totals per time, in series order (first at the bottom).
    bases = {}
    stack_tops = {}
    for s in series:
        if s.stacked:
            base = stack_tops.setdefault(s.stack_group, [0.0] * len(times))
            bases[id(s)] = list(base)
            for i, v in enumerate(s.values):
                if v is not None:
                    base[i] += v

    def extent(group):
        highs = []
        for s in group:
            for i, v in enumerate(s.values):
                if v is not None:
                    highs.append(bases[id(s)][i] + v if s.stacked else v)
        high = max(highs, default=1)
        low = min(0, min(highs, default=0))
        minimum = group[0].config.get("min") if group else None
        if minimum is not None:
            low = minimum
        if high <= low:
            high = low + 1
        return low, high

    margin_left = 56 if left else 12
    margin_right = 60 if right else 14
    margin_top, margin_bottom = 8, 22
    inner_w = plot_w - margin_left - margin_right
    inner_h = height - margin_top - margin_bottom
    t0, t1 = times[0], times[-1]

    def x_of(t):
        return margin_left + (t - t0) / max(1e-9, t1 - t0) * inner_w

    parts = [f'<svg width="{plot_w:.0f}" height="{height}" viewBox="0 0 {plot_w:.0f} {height}" '
             f'xmlns="http://www.w3.org/2000/svg" font-family="{esc(FONT)}" font-size="10.5">']
    axes = {}
    for side, group in (("left", left), ("right", right)):
        if not group:
            continue
        low, high = extent(group)
        ticks, step, high = value_axis(low, high, max(3, inner_h // 38))
        axes[side] = (low, high, ticks)
        unit = group[0].unit
        for tick in ticks:
            y = margin_top + inner_h - (tick - low) / (high - low) * inner_h
            if side == "left":
                parts.append(f'<line x1="{margin_left}" x2="{margin_left + inner_w:.1f}" '
                             f'y1="{y:.1f}" y2="{y:.1f}" stroke="{THEME["grid"]}"/>')
            label = format_tick(tick, unit, step)
            x = margin_left - 6 if side == "left" else margin_left + inner_w + 6
            anchor = "end" if side == "left" else "start"
            parts.append(f'<text x="{x:.1f}" y="{y + 3.5:.1f}" text-anchor="{anchor}" '
                         f'fill="{THEME["axis"]}">{esc(label)}</text>')
        axis_label = next((s.axis_label for s in group if s.axis_label), None)
        if axis_label:
            x = 11 if side == "left" else plot_w - 5
            y = margin_top + inner_h / 2
            parts.append(f'<text x="{x}" y="{y:.1f}" text-anchor="middle" fill="{THEME["axis"]}" '
                         f'transform="rotate(-90 {x} {y:.1f})">{esc(axis_label)}</text>')
    if "left" not in axes:  # grid lines from the right axis
        low, high, ticks = axes["right"]
        for tick in ticks:
            y = margin_top + inner_h - (tick - low) / (high - low) * inner_h
            parts.append(f'<line x1="{margin_left}" x2="{margin_left + inner_w:.1f}" '
                         f'y1="{y:.1f}" y2="{y:.1f}" stroke="{THEME["grid"]}"/>')
    for tick in time_ticks(t0, t1, inner_w):
        x = x_of(tick)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{margin_top}" '
                     f'y2="{margin_top + inner_h}" stroke="{THEME["grid"]}"/>')
        if 24 <= x <= plot_w - 24:  # a label that would be cut at the edge is left out
            parts.append(f'<text x="{x:.1f}" y="{height - 6}" text-anchor="middle" '
                         f'fill="{THEME["axis"]}">{clock(tick)}</text>')

    # Annotation regions (the dashboard's "Runs"), under the data; the text only where it fits.
    clip = f"clip{panel.get('id')}"
    parts.append(f'<clipPath id="{clip}"><rect x="{margin_left}" y="{margin_top - 1}" '
                 f'width="{inner_w:.1f}" height="{inner_h + 2}"/></clipPath>'
                 f'<g clip-path="url(#{clip})">')
    for region_start, region_end, text, color in regions:
        if region_end < t0 or region_start > t1:
            continue
        x0, x1 = x_of(max(t0, region_start)), x_of(min(t1, region_end))
        parts.append(f'<rect x="{x0:.1f}" y="{margin_top}" width="{max(1, x1 - x0):.1f}" '
                     f'height="{inner_h}" fill="{color}" fill-opacity="0.10"/>')
        parts.append(f'<rect x="{x0:.1f}" y="{margin_top + inner_h - 3}" '
                     f'width="{max(1, x1 - x0):.1f}" height="3" fill="{color}"/>')
        if x1 - x0 > len(text) * 5.6 + 8:
            parts.append(f'<text x="{x0 + 4:.1f}" y="{margin_top + 11}" fill="{color}" '
                         f'font-size="10">{esc(text)}</text>')
    parts.append("</g>")

    parts.append(f'<g clip-path="url(#{clip})">')
    for s in series:
        low, high, _ = axes["right" if s.right else "left"]

        def y_of(v, low=low, high=high):
            return margin_top + inner_h - (v - low) / (high - low) * inner_h

        base = bases.get(id(s))
        for begin, finish in segments(s.values):
            idx = range(begin, finish)
            tops = [(x_of(times[i]), y_of((base[i] if base else 0) + s.values[i])) for i in idx]
            line = " ".join(f"{x:.1f},{y:.1f}" for x, y in tops)
            if s.fill > 0:
                bottoms = [(x_of(times[i]), y_of(base[i] if base else max(low, 0)))
                           for i in reversed(idx)]
                outline = line + " " + " ".join(f"{x:.1f},{y:.1f}" for x, y in bottoms)
                parts.append(f'<polygon points="{outline}" fill="{s.color}" '
                             f'fill-opacity="{s.fill:.2f}" stroke="none"/>')
            dash = f' stroke-dasharray="{",".join(str(d) for d in s.dash)}"' if s.dash else ""
            if finish - begin == 1:
                x, y = tops[0]
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="1.5" fill="{s.color}"/>')
            else:
                parts.append(f'<polyline points="{line}" fill="none" stroke="{s.color}" '
                             f'stroke-width="{s.line_width}"{dash} stroke-linejoin="round"/>')
    parts.append("</g></svg>")

    legend = ""
    if show_legend:
        head = "".join(f"<th>{esc(c.capitalize())}</th>" for c in calcs)
        rows = []
        for s in series:
            cells = "".join(
                f"<td>{esc(format_value(getattr(s, c), s.unit, s.decimals))}</td>" for c in calcs)
            swatch = (f'<span class="sw" style="background:{s.color}"></span>' if not s.dash else
                      f'<span class="sw dash" style="border-color:{s.color}"></span>')
            rows.append(f'<tr><td class="name">{swatch}{esc(s.name)}</td>{cells}</tr>')
        name_w = legend_w - len(calcs) * CALC_W - 4
        legend = (f'<div class="legend" style="width:{legend_w:.0f}px;height:{legend_h}px">'
                  f'<table><colgroup><col style="width:{name_w:.0f}px">'
                  f'{"".join(f"<col style=width:{CALC_W}px>" for _ in calcs)}</colgroup>'
                  f'<tr><th></th>{head}</tr>{"".join(rows)}</table></div>')
    layout_class = "ts below" if below else "ts"
    return f'<div class="{layout_class}">{"".join(parts)}{legend}</div>'


def format_tick(value, unit, step):
    """Axis labels, as Grafana: each tick's own scale, decimals from the step ("500", "1.5 K")."""
    if value == 0:
        return format_value(0, unit, 0)
    divisor, _ = unit_scale(unit, abs(value))
    scaled_step = step / divisor
    decimals = next((d for d in range(5)
                     if abs(round(scaled_step, d) - scaled_step) <= 1e-9 * scaled_step), 4)
    text = format_value(value, unit, decimals)
    return re.sub(r"^(-?\d+)\.0+(?!\d)", r"\1", text)


# --- stat panel ----------------------------------------------------------------------------------
def threshold_color(config, value):
    steps = config.get("thresholds", {}).get("steps", [])
    color = None
    for step in steps:
        if step.get("value") is None or (value is not None and value >= step["value"]):
            color = step.get("color")
    return color_of(color) or THEME["text"]


def render_stat(panel, prometheus, variables, start, end, step, width, height):
    options = panel.get("options", {})
    color_mode = options.get("colorMode", "value")
    text_mode = options.get("textMode", "auto")
    items = []
    for target in panel.get("targets", []):
        expr = substitute(target["expr"], variables)
        for metric, points in prometheus.query_range(expr, start, end, step):
            present = [v for _, v in points if v is not None]
            value = present[-1] if present else None  # lastNotNull
            name = legend_name(target.get("legendFormat"), metric)
            config = field_config(panel, target.get("refId", ""), name)
            text = format_value(value, config.get("unit", "short"), config.get("decimals"))
            color = threshold_color(config, value)
            for mapping in config.get("mappings", []):
                if mapping.get("type") == "value" and value is not None:
                    hit = mapping.get("options", {}).get(format(value, "g"))
                    if hit:
                        text = hit.get("text", text)
                        color = color_of(hit.get("color")) or color
            items.append((name, text, color))
    if not items:
        return f'<div class="nodata" style="height:{height}px">No data</div>'
    cells = []
    for name, text, color in items:
        shown = name if text_mode == "name" else text
        size = min(height * 0.42, width / max(4, len(shown)) * 1.55, 34)
        style = f"font-size:{size:.0f}px;"
        box = ""
        if color_mode == "background":
            box = f"background:{color};color:#fff;"
        elif color_mode == "value":
            style += f"color:{color};"
        cells.append(f'<div class="stat" style="{box}height:{height}px">'
                     f'<span style="{style}">{esc(shown)}</span></div>')
    return "".join(cells)


# --- table panel ---------------------------------------------------------------------------------
def render_table(panel, prometheus, variables, end, width, height):
    """Instant queries in table format, then the panel's merge, organize and sortBy."""
    columns = ["Time"]
    rows = {}
    for target in panel.get("targets", []):
        expr = substitute(target["expr"], variables)
        value_column = f"Value #{target.get('refId', '')}"
        columns.append(value_column)
        for metric, value in prometheus.query(expr, end):
            labels = tuple(sorted((k, v) for k, v in metric.items() if k != "__name__"))
            for k, _ in labels:
                if k not in columns:
                    columns.insert(len(columns) - 1, k)
            row = rows.setdefault(labels, dict(labels, Time=end))
            row[value_column] = value
    organize, sort = {}, []
    for transformation in panel.get("transformations") or []:
        if transformation.get("id") == "organize":
            organize = transformation.get("options", {})
        elif transformation.get("id") == "sortBy":
            sort = transformation.get("options", {}).get("sort", [])
    excluded = organize.get("excludeByName", {})
    index = organize.get("indexByName", {})
    rename = organize.get("renameByName", {})
    shown = [c for c in columns if not excluded.get(c)]
    shown.sort(key=lambda c: (index.get(c, 1000), columns.index(c)))
    table = [{rename.get(c, c): row.get(c) for c in shown} for row in rows.values()]
    names = [rename.get(c, c) for c in shown]
    for key in reversed(sort):  # stable sorts, last key first; empty cells last
        field = key.get("field")
        present = [r for r in table if r.get(field) is not None]
        present.sort(key=lambda r, f=field: r[f], reverse=bool(key.get("desc")))
        table = present + [r for r in table if r.get(field) is None]
    if not table:
        return f'<div class="nodata" style="height:{height}px">No data</div>'

    configs = {name: field_config(panel, "", name) for name in names}
    row_h = 25
    fit = max(1, (height - row_h - 18) // row_h)
    hidden = max(0, len(table) - fit)
    head = "".join(f'<th class="{"num" if i > 1 else ""}">{esc(n)}</th>'
                   for i, n in enumerate(names))
    body = []
    for row in table[:fit]:
        cells = []
        for name in names:
            value = row.get(name)
            config = configs[name]
            if not isinstance(value, float):
                cells.append(f"<td>{esc(value if value is not None else '')}</td>")
                continue
            text = format_value(value, config.get("unit", "none"), config.get("decimals"))
            cell = config.get("custom", {}).get("cellOptions", {})
            if cell.get("type") == "gauge":
                low, high = config.get("min", 0), config.get("max", 100)
                share = max(0.0, min(1.0, (value - low) / ((high - low) or 1)))
                color = threshold_color(config, value)
                cells.append(f'<td class="gauge"><div class="bar"><div style="width:'
                             f'{share * 100:.1f}%;background:{color}"></div></div>'
                             f'<span>{esc(text)}</span></td>')
            else:
                cells.append(f'<td class="num">{esc(text)}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    note = (f'<div class="note">{hidden} more row{"s" if hidden != 1 else ""} '
            f'(Grafana scrolls the table)</div>' if hidden else "")
    return (f'<div class="table" style="height:{height}px"><table><tr>{head}</tr>'
            f'{"".join(body)}</table>{note}</div>')


# --- annotations ---------------------------------------------------------------------------------
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
