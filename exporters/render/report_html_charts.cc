// The data of the run report's interactive timeline (drawn by web/charts.js with uPlot) and the
// panel that holds it with its static fallback.
#include "exporters/render/report_html_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "base/json_text.h"
#include "exporters/render/html_assets.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters::report_detail {

namespace {

using text_format::html_escape;

std::optional<double> finite(double value) {
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

// A line of the timeline: one optional measurement per interval.
struct LineSpec {
  std::string_view name;
  std::string_view unit;
  std::string_view scale;
  std::string_view colour;
  bool dashed;
  bool band;  // filled from the axis up, translucent, under the stacked areas' outline
  std::optional<double> (*value)(const TimelineRow&);
};

// The lines, drawn over the stacked areas in this order. p99 latency and run-queue AAS (when
// the model has them) are one entry each; a line with no value in any interval is left out.
const std::array<LineSpec, 6> kLines = {{
    {"tps", "tps", "tps", "#111827", false, false,
     [](const TimelineRow& row) {
       return row.loadgen ? finite(row.loadgen->tps) : std::optional<double>();
     }},
    // The server's count beside the load generator's own (pg_stat_database).
    {"server tps", "tps", "tps", "#6b7280", true, false,
     [](const TimelineRow& row) {
       return row.server_tps_spread ? std::optional<double>() : row.server_tps;
     }},
    // A reading spread over more than one interval (the last stub folded into the one before):
    // its mean, drawn apart so that it reads as a smear, not as the interval's own rate.
    {"server tps, spread", "tps", "tps", "#c4c8cf", true, false,
     [](const TimelineRow& row) {
       return row.server_tps_spread ? row.server_tps : std::optional<double>();
     }},
    {"latency avg", "ms", "ms", "#0f766e", true, false,
     [](const TimelineRow& row) {
       return row.loadgen ? finite(row.loadgen->latency_avg.count()) : std::optional<double>();
     }},
    {"latency p99", "ms", "ms", "#b45309", true, false,
     [](const TimelineRow& row) {
       return row.latency ? finite(row.latency->p99.count()) : std::optional<double>();
     }},
    // Measured, not sampled: client backends waiting for a CPU (server on this host), as a
    // band on the AAS axis so that it reads against the stacked waits it hides in.
    {"run queue", "AAS", "aas", "#7c2d12", true, true,
     [](const TimelineRow& row) { return row.runq_aas; }},
}};

// The y axes, in the order they are set up (the first on the left, the others on the right).
struct AxisSpec {
  std::string_view scale;
  std::string_view label;
  std::string_view side;
};
constexpr std::array<AxisSpec, 3> kAxes = {{
    {"aas", "average active sessions", "left"},
    {"tps", "tps", "right"},
    {"ms", "latency, ms", "right"},
}};

std::vector<ChartSeries> stacked_classes(const std::vector<TimelineRow>& rows) {
  std::vector<std::string> classes;
  for (const auto& row : rows) {
    for (const auto& [wait_class, aas] : row.aas_by_type) {
      if (aas > 0 && std::find(classes.begin(), classes.end(), wait_class) == classes.end()) {
        classes.push_back(wait_class);
      }
    }
  }
  std::sort(classes.begin(), classes.end(), text_format::wait_class_before);
  std::vector<ChartSeries> series;
  for (const auto& wait_class : classes) {
    ChartSeries entry{
        wait_class, "AAS", "aas", std::string(text_format::wait_class_colour(wait_class)),
        true,       false, false, {}};
    for (const auto& row : rows) {
      double aas = 0;
      for (const auto& [name, value] : row.aas_by_type) {
        if (name == wait_class) aas += value;
      }
      entry.values.emplace_back(aas);
    }
    series.push_back(std::move(entry));
  }
  return series;
}

std::string interval_note(const TimelineRow& row) {
  std::string note = fmt::format("AAS {:.2f}", row.aas_total);
  if (!row.dominant_wait.empty()) note += " · dominant: " + row.dominant_wait;
  if (!row.background.empty()) note += " · background: " + row.background;
  if (row.stalled) note += " · STALL";
  if (row.sampler_outage) note += " · sampler disconnected";
  return note;
}

nlohmann::json series_json(const ChartSeries& series) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& value : series.values) {
    values.push_back(value ? nlohmann::json(*value) : nlohmann::json());
  }
  return {{"name", series.name},     {"unit", series.unit},        {"scale", series.scale},
          {"colour", series.colour}, {"stacked", series.stacked},  {"dash", series.dashed},
          {"band", series.band},     {"values", std::move(values)}};
}

nlohmann::json axes_json(const std::vector<ChartSeries>& series) {
  nlohmann::json axes = nlohmann::json::array();
  for (const auto& axis : kAxes) {
    const bool used = std::any_of(series.begin(), series.end(), [&](const ChartSeries& entry) {
      return entry.scale == axis.scale;
    });
    if (used) axes.push_back({{"scale", axis.scale}, {"label", axis.label}, {"side", axis.side}});
  }
  return axes;
}

}  // namespace

std::vector<ChartSeries> timeline_series(const std::vector<TimelineRow>& rows) {
  std::vector<ChartSeries> series = stacked_classes(rows);
  for (const auto& line : kLines) {
    ChartSeries entry{std::string(line.name),
                      std::string(line.unit),
                      std::string(line.scale),
                      std::string(line.colour),
                      false,
                      line.dashed,
                      line.band,
                      {}};
    for (const auto& row : rows) entry.values.push_back(line.value(row));
    if (std::any_of(entry.values.begin(), entry.values.end(),
                    [](const auto& value) { return value.has_value(); })) {
      series.push_back(std::move(entry));
    }
  }
  return series;
}

std::vector<BackgroundLane> background_lanes(const model::Run& run) {
  struct Kind {
    std::string_view name;
    std::string_view meaning;
    std::string_view colour;
    bool (*on)(const model::Background&);
  };
  static const std::array<Kind, 3> kinds = {{
      {"av", "autovacuum", "#6b4c9a", [](const model::Background& b) { return b.autovacuum; }},
      {"ch", "checkpoint", "#d9730d", [](const model::Background& b) { return b.checkpoint; }},
      {"vac", "manual VACUUM", "#2b8a3e",
       [](const model::Background& b) { return b.manual_vacuum; }},
  }};
  std::vector<BackgroundLane> lanes;
  for (const auto& kind : kinds) {
    BackgroundLane lane{
        std::string(kind.name), std::string(kind.meaning), std::string(kind.colour), {}};
    bool open = false;  // consecutive intervals make one span: abutting ones show seams
    for (const auto& slice : run.timeline) {
      if (!kind.on(slice.background)) {
        open = false;
        continue;
      }
      const double end = (slice.start + slice.duration).count();
      if (open) {
        lane.spans.back().second = end;
      } else {
        lane.spans.emplace_back(slice.start.count(), end);
      }
      open = true;
    }
    if (!lane.spans.empty()) lanes.push_back(std::move(lane));
  }
  // --checkpoint-after: its own band, exactly as long as the CHECKPOINT took.
  if (const auto& checkpoint = run.checkpoint_after) {
    lanes.push_back(
        {"CKPT",
         "checkpoint after the run",
         "#b91c1c",
         {{checkpoint->start.count(), (checkpoint->start + checkpoint->duration).count()}}});
  }
  return lanes;
}

nlohmann::json timeline_chart_data(const model::Run& run, const std::vector<TimelineRow>& rows) {
  using nlohmann::json;
  json x = json::array(), starts = json::array(), ends = json::array(), notes = json::array();
  double end_s = rows.empty() ? 0 : rows.front().start.count();
  for (const auto& row : rows) {
    x.push_back(row.start.count() + row.duration.count() / 2);
    starts.push_back(row.start.count());
    ends.push_back(row.start.count() + row.duration.count());
    notes.push_back(interval_note(row));
    end_s = std::max(end_s, row.start.count() + row.duration.count());
  }
  const auto series = timeline_series(rows);
  json series_list = json::array();
  for (const auto& entry : series) series_list.push_back(series_json(entry));
  json stalls = json::array();
  for (const auto& stall : run.stalls) {
    stalls.push_back({stall.start.count(), (stall.start + stall.duration).count()});
  }
  json outages = json::array();
  for (const auto& outage : run.outages) {  // the sampler's: no samples then
    if (outage.connection != model::kSamplerConnection) continue;
    outages.push_back({outage.start.count(), (outage.start + outage.duration).count()});
  }
  json lanes = json::array();
  for (const auto& lane : background_lanes(run)) {
    lanes.push_back({{"name", lane.name},
                     {"meaning", lane.meaning},
                     {"colour", lane.colour},
                     {"spans", lane.spans}});
  }
  return {{"start_s", rows.empty() ? 0 : rows.front().start.count()},
          {"end_s", end_s},
          {"x", std::move(x)},
          {"starts", std::move(starts)},
          {"ends", std::move(ends)},
          {"notes", std::move(notes)},
          {"axes", axes_json(series)},
          {"series", std::move(series_list)},
          {"stalls", std::move(stalls)},
          {"outages", std::move(outages)},
          {"lanes", std::move(lanes)}};
}

std::string html_timeline_panel(const model::Run& run, const std::vector<TimelineRow>& rows) {
  const auto series = timeline_series(rows);
  const auto lanes = background_lanes(run);
  std::string help =
      "Drag across the chart to zoom, double-click to zoom out; click a legend entry "
      "to hide or show its series.";
  if (!run.stalls.empty()) help += " Shaded: stalls.";
  if (std::any_of(run.outages.begin(), run.outages.end(), [](const model::Outage& outage) {
        return outage.connection == model::kSamplerConnection;
      })) {
    help += " Grey: the sampler lost its connection.";
  }
  for (const auto& lane : lanes) {
    help += fmt::format(" {} = {}.", lane.name, lane.meaning);
  }
  std::string html = "<div class=\"panel\">\n";
  html += "<div class=\"uchart\" id=\"timeline-chart\" data-chart=\"timeline\"></div>\n";
  html += "<div class=\"chart-info js-only\" id=\"timeline-info\"></div>\n";
  html += "<p class=\"chart-help js-only\">" + html_escape(help) + "</p>\n";
  html += "<div class=\"fallback\">\n" + svg_timeline(run, rows, series, lanes) + "</div>\n";
  html += "<script type=\"application/json\" id=\"timeline-data\">" +
          html_assets::script_safe_json(base::json_text(timeline_chart_data(run, rows))) +
          "</script>\n";
  return html + "</div>\n";
}

namespace {

struct FlameNode {
  uint64_t value = 0;
  std::map<std::string, FlameNode> children;
};

nlohmann::json flame_json(const std::string& name, const FlameNode& node,
                          std::vector<std::string>& path, const FlameStyler& style) {
  const FlameStyle look = style(path);
  nlohmann::json json = {{"name", name}, {"value", node.value}, {"colour", look.colour}};
  if (!look.link.empty()) json["link"] = look.link;
  if (node.children.empty()) return json;
  json["children"] = nlohmann::json::array();
  for (const auto& [child_name, child] : node.children) {
    path.push_back(child_name);
    json["children"].push_back(flame_json(child_name, child, path, style));
    path.pop_back();
  }
  return json;
}

}  // namespace

nlohmann::json flame_tree(std::string_view root,
                          const std::map<std::vector<std::string>, uint64_t>& stacks,
                          const FlameStyler& style) {
  FlameNode top;
  for (const auto& [frames, count] : stacks) {
    FlameNode* node = &top;
    node->value += count;
    for (const auto& frame : frames) {
      node = &node->children[frame];
      node->value += count;
    }
  }
  std::vector<std::string> path;
  return flame_json(std::string(root), top, path, style);
}

FlameStyler wait_flame_style(std::string cpu_link) {
  return [cpu_link = std::move(cpu_link)](const std::vector<std::string>& path) {
    // path: backend type, wait class, wait event.
    if (path.size() < 2) return FlameStyle{"#c9ced6", ""};
    FlameStyle look{std::string(text_format::wait_class_colour(path[1])), ""};
    if (path[1] == model::kCpu) look.link = cpu_link;
    return look;
  };
}

FlameStyler cpu_flame_style() {
  return [](const std::vector<std::string>& path) {
    if (path.empty()) return FlameStyle{"#c9ced6", ""};
    const std::string& frame = path.back();
    // A stable shade per name (FNV-1a), which moves the CPU green's lightness.
    uint32_t hash = 2166136261u;
    for (const char character : frame) {
      hash = (hash ^ static_cast<unsigned char>(character)) * 16777619u;
    }
    const auto shade = static_cast<int>(hash % 40);
    const bool kernel = model::is_kernel_frame(frame);
    // CPU is #2ca02c: user frames around it and lighter, kernel frames darker.
    const int red = kernel ? 20 + shade / 2 : 44 + shade;
    const int green = kernel ? 110 + shade : 160 + shade;
    const int blue = kernel ? 30 + shade / 2 : 44 + shade;
    return FlameStyle{fmt::format("#{:02x}{:02x}{:02x}", red, green, blue), ""};
  };
}

std::string html_flame_panel(const std::string& id, const nlohmann::json& tree,
                             const std::string& help, const std::string& fallback) {
  std::string html = "<div class=\"panel\">\n";
  html += "<div class=\"flame\" id=\"" + id + "\"></div>\n";
  html += "<p class=\"chart-help js-only\">" + html_escape(help) + "</p>\n";
  html += "<p class=\"fallback\">" + html_escape(fallback) + "</p>\n";
  html += "<script type=\"application/json\" id=\"" + id + "-data\">" +
          html_assets::script_safe_json(base::json_text(tree)) + "</script>\n";
  return html + "</div>\n";
}

}  // namespace pgwaitprof::exporters::report_detail
