// The charts of the run report's HTML page (report_html.cc): the data of the interactive
// timeline that web/charts.js draws with uPlot (report_html_charts.cc), its static SVG fallback
// and the top-waits bar chart (report_html_svg.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exporters/render/report_common.h"
#include "exporters/render/report_render.h"
#include "model/run.h"

namespace pgwaitprof::exporters::report_detail {

// One series of the timeline chart. The C++ side decides what is drawn and how; the script only
// draws it, so adding a series (p99 latency, run-queue AAS) is one entry in
// report_html_charts.cc.
struct ChartSeries {
  std::string name;      // legend label: "CPU", "tps", "latency avg"
  std::string unit;      // "AAS", "tps", "ms": how legend values read
  std::string scale;     // the y axis it is read on: "aas", "tps", "ms"
  std::string colour;    // "#rrggbb"
  bool stacked = false;  // stacked on the other stacked series, bottom first
  bool dashed = false;
  bool band = false;  // an unstacked series filled translucently down to its axis
  std::vector<std::optional<double>> values;  // one per timeline row; nullopt: not measured
};

// The stacked AAS per wait class (those that occur, in kWaitClassOrder), then each line that
// has at least one value (tps, average latency).
std::vector<ChartSeries> timeline_series(const std::vector<TimelineRow>& rows);

// Background activity shown as marks above the timeline, for the kinds that occur in the run.
struct BackgroundLane {
  std::string name;                              // "av", "ch", "vac"
  std::string meaning;                           // "autovacuum", ...
  std::string colour;                            // "#rrggbb"
  std::vector<std::pair<double, double>> spans;  // [start, end) seconds, consecutive merged
};
std::vector<BackgroundLane> background_lanes(const model::Run& run);

// What web/charts.js draws the timeline from: interval midpoints (x), bounds and notes per
// interval, the axes in use, the series, stalls and background lanes.
nlohmann::json timeline_chart_data(const model::Run& run, const std::vector<TimelineRow>& rows);

// The timeline panel: the chart's element, its data, and the static SVG shown without
// JavaScript (or when the chart fails).
std::string html_timeline_panel(const model::Run& run, const std::vector<TimelineRow>& rows);

// The static timeline: stacked AAS areas, tps line, stall bands and background lanes, with its
// legend.
std::string svg_timeline(const model::Run& run, const std::vector<TimelineRow>& rows,
                         const std::vector<ChartSeries>& series,
                         const std::vector<BackgroundLane>& lanes);

// The largest waits as horizontal bars of their share with 95% intervals, with tooltips.
std::string svg_top_waits(const ProfileTable& waits, const RenderOptions& options);

// A flame graph (web/charts.js draws it with d3-flame-graph): its frames' colour and, for a
// frame a click should lead on from, the id of the element it leads to.
struct FlameStyle {
  std::string colour;  // "#rrggbb"
  std::string link;    // "" for none
};
using FlameStyler = std::function<FlameStyle(const std::vector<std::string>& path)>;

// The tree of `stacks` (frames root first) under one root frame, each frame as `style` says
// for its path: {name, value (its samples and its children's), colour, link, children}.
nlohmann::json flame_tree(std::string_view root,
                          const std::map<std::vector<std::string>, uint64_t>& stacks,
                          const FlameStyler& style);

// The wait stacks' style: a wait class's frames in its colour (text_format::wait_class_colour),
// backend types in grey; the CPU frame leads to `cpu_link` when the run has a CPU profile.
FlameStyler wait_flame_style(std::string cpu_link);

// The CPU stacks' style: every frame in a shade of the CPU row's colour (the frame's name picks
// the shade, as flame graphs vary theirs), kernel functions darker.
FlameStyler cpu_flame_style();

// A flame graph's panel: its element `id`, a line of help, its data (`id`-data) and what shows
// without JavaScript. The page calls pgwaitprof.draw('flame', id, id + '-data').
std::string html_flame_panel(const std::string& id, const nlohmann::json& tree,
                             const std::string& help, const std::string& fallback);

}  // namespace pgwaitprof::exporters::report_detail
