"""Value formatting, colours and axes of render_dashboard.py, as Grafana draws them: unit
scaling and decimals, legend names, colours by name or the classic palette, nice tick steps
and time ticks."""
import datetime
import html
import math
import re

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


def number(text):
    value = float(text)
    return None if math.isnan(value) or math.isinf(value) else value


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


