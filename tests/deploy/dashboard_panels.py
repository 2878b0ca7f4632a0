"""The panels render_dashboard.py draws, as Grafana would: time series (lines, areas, stacking,
thresholds, legends with calculations), stat and table panels, from their queries' Prometheus
data and the panel's field config and overrides."""
import json
import re

from promql_helper import substitute

from dashboard_format import (  # noqa: F401
    unit_scale, format_value, color_of, legend_name, esc, clock, segments, value_axis, time_ticks, THEME, CLASSIC_PALETTE, FONT)


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
