#!/usr/bin/env python3
"""Checks the DOM of a pgwaitprof HTML page as headless Chromium left it (--dump-dom), for
browser_check.sh: no error was recorded (exporters/render/web/record_errors.js writes every script
error, exception, failed load and console.error into <html data-errors>), each chart drew its
data (exporters/render/web/charts.js writes the share of the plot area painted in colour into data-ink),
and each chart's legend names the series of the page's embedded data and, with the cursor put
mid-chart by #selftest, shows a value for every one of them; each flame graph (d3-flame-graph,
drawn by charts.js's flame(), which writes the number of frames drawn into data-frames) drew
its root and more, and no more frames than its embedded tree has.

Usage: check_page_dom.py NAME DOM_FILE CHARTS FLAMES [REQUIRED]
REQUIRED: series names, comma-separated, that the timeline chart's legend must have (the page's
fixture has their data, so a renderer that dropped one would otherwise pass).
"""
import json
import sys
from html.parser import HTMLParser

# A chart whose series drew nothing paints its grid and axes only, all grey; the fixture pages'
# stacked areas cover a fifth to two thirds of their plots.
MIN_INK = 0.05


class PageParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.errors = None  # <html data-errors>, None when the recorder never ran
        self.charts = []  # {"id", "ink", "labels", "values"}
        self.flames = []  # {"id", "frames"}
        self.json = {}  # id -> text of <script type="application/json">
        self._capture = None  # ("label"|"value"|"json", key)
        self._text = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "html":
            self.errors = attrs.get("data-errors")
        elif tag == "div" and "uchart" in classes:
            self.charts.append(
                {"id": attrs.get("id"), "ink": attrs.get("data-ink"), "labels": [], "values": []})
        elif tag == "div" and "flame" in classes:
            self.flames.append({"id": attrs.get("id"), "frames": attrs.get("data-frames")})
        elif tag == "div" and "u-label" in classes and self.charts:
            self._start(("label", None))
        elif tag == "td" and "u-value" in classes and self.charts:
            self._start(("value", None))
        elif tag == "script" and attrs.get("type") == "application/json":
            self._start(("json", attrs.get("id")))

    def _start(self, capture):
        self._capture = capture
        self._text = ""

    def handle_data(self, data):
        if self._capture:
            self._text += data

    def handle_endtag(self, tag):
        if not self._capture:
            return
        kind, key = self._capture
        if kind == "label" and tag == "div":
            self.charts[-1]["labels"].append(self._text.strip())
        elif kind == "value" and tag == "td":
            self.charts[-1]["values"].append(self._text.strip())
        elif kind == "json" and tag == "script":
            self.json[key] = self._text
        else:
            return
        self._capture = None


def expected_labels(page, chart):
    """The legend a chart must show: its x series, then every series of the embedded data."""
    if chart["id"] == "timeline-chart":
        data = json.loads(page.json["timeline-data"])
        return ["interval"] + [series["name"] for series in data["series"]]
    if chart["id"].startswith("composition-chart-"):
        data = json.loads(page.json["composition-data"])
        variant = data["variants"][int(chart["id"].rsplit("-", 1)[1])]
        return ["clients"] + [series["name"] for series in variant["series"]]
    return None


def sparse_series(page, chart):
    """The timeline's series without a value in most intervals."""
    if chart["id"] != "timeline-chart":
        return set()
    data = json.loads(page.json["timeline-data"])
    return {series["name"] for series in data["series"]
            if 2 * sum(value is None for value in series["values"]) > len(series["values"])}


def tree_size(node):
    return 1 + sum(tree_size(child) for child in node.get("children", []))


def check_flames(name, page, flames_expected, problems):
    if len(page.flames) != flames_expected:
        problems.append(f"{len(page.flames)} flame graphs, expected {flames_expected}")
    for flame in page.flames:
        nodes = tree_size(json.loads(page.json[flame["id"] + "-data"]))
        frames = flame["frames"]
        if frames is None:
            problems.append(f"{flame['id']}: never drew (no data-frames)")
        elif not 1 < int(frames) <= nodes:
            problems.append(f"{flame['id']}: {frames} frames drawn of a tree of {nodes}")
        print(f"browser_check: {name}: {flame['id']} {frames} frames of {nodes}")


def check(name, dom_path, charts_expected, flames_expected, required=()):
    with open(dom_path, encoding="utf-8") as dom:
        text = dom.read()
    page = PageParser()
    page.feed(text)
    problems = []
    if page.errors is None:
        problems.append("no data-errors on <html>: the error recorder did not run")
    elif page.errors:
        problems.append("errors: " + page.errors.replace("\n", " | "))
    if len(page.charts) != charts_expected:
        problems.append(f"{len(page.charts)} chart elements, expected {charts_expected}")
    for chart in page.charts:
        ink = chart["ink"]
        if ink is None:
            problems.append(f"{chart['id']}: never drew (no data-ink)")
        elif float(ink) < MIN_INK:
            problems.append(f"{chart['id']}: {float(ink):.1%} of the plot in colour, "
                            f"under {MIN_INK:.0%}: the series drew nothing")
        labels = expected_labels(page, chart)
        if chart["labels"] != labels:
            problems.append(f"{chart['id']}: legend {chart['labels']}, expected {labels}")
        # A sparse series (a value only in some intervals, as the server's spread readings)
        # may have none where the cursor stands.
        sparse = sparse_series(page, chart)
        blank = [label for label, value in zip(chart["labels"], chart["values"])
                 if value in ("", "-", "--") and label not in sparse]
        if blank or len(chart["values"]) != len(chart["labels"]):
            problems.append(f"{chart['id']}: no hover value for {blank or 'some series'}")
        if chart["id"] == "timeline-chart":
            missing = [series for series in required if series not in chart["labels"]]
            if missing:
                problems.append(f"{chart['id']}: no {missing} in the legend {chart['labels']}")
        print(f"browser_check: {name}: {chart['id']} ink {float(ink or 0):.1%}, legend "
              + ", ".join(f"{label}={value}" for label, value in
                          zip(chart["labels"], chart["values"])))
    check_flames(name, page, flames_expected, problems)
    for problem in problems:
        print(f"browser_check: {name}: {problem}", file=sys.stderr)
    return not problems


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    wanted = [series for series in (sys.argv[5] if len(sys.argv) == 6 else "").split(",") if series]
    sys.exit(0 if check(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), wanted)
             else 1)
