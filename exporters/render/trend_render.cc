// Rendering trends: tables, JSON, and a page with a uPlot chart of tps and its control limits.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "exporters/render/history_render.h"
#include "exporters/render/html_assets.h"
#include "exporters/render/text_format.h"
#include "exporters/render/trend_format.h"

namespace pgwaitprof::exporters {
namespace {

namespace tf = exporters::text_format;

std::string tps_text(const store::RunSummary& run) {
  if (!std::isfinite(run.tps)) return "-";
  auto text = tf::format_tps(run.tps);
  if (std::isfinite(run.tps_half_width)) text += " ± " + tf::format_tps(run.tps_half_width);
  return text;
}

std::string baseline_text(const store::TrendPoint& point) {
  if (!point.baseline_median) {
    return point.run.status == "completed" ? fmt::format("({} prior)", point.baseline_runs)
                                           : point.run.status;
  }
  return tf::format_tps(*point.baseline_median) + " (" + tf::format_tps(point.lower) + "-" +
         tf::format_tps(point.upper) + ")";
}

std::string flag_text(const store::TrendPoint& point) {
  if (point.flag == "regression") return "REGRESSION";
  if (point.flag == "improvement") return "improvement";
  return "";
}

std::vector<std::vector<std::string>> trend_rows(const store::Trend& trend,
                                                 std::vector<bool>& right) {
  std::vector<std::string> header = {"started", "id", "label", "tps", "baseline", "change"};
  right = {false, false, false, true, true, true};
  if (!trend.group_by.empty()) {
    header.insert(header.begin(), trend.group_by);
    right.insert(right.begin(), false);
  }
  for (const auto& wait_class : trend.wait_classes) {
    header.push_back(wait_class + " AAS");
    right.push_back(true);
  }
  header.push_back("flag");
  right.push_back(false);
  std::vector<std::vector<std::string>> rows = {header};
  for (const auto& point : trend.points) {
    const auto& run = point.run;
    std::vector<std::string> row = {
        run.started_at.substr(0, 16),
        run.id,
        run.label,
        tps_text(run),
        baseline_text(point),
        point.baseline_median ? fmt::format("{:+.1f}%", point.change_pct) : ""};
    if (!trend.group_by.empty()) row.insert(row.begin(), point.group);
    for (const auto& wait_class : trend.wait_classes) {
      const auto found = run.class_aas.find(wait_class);
      row.push_back(fmt::format("{:.2f}", found == run.class_aas.end() ? 0.0 : found->second));
    }
    row.push_back(flag_text(point));
    rows.push_back(std::move(row));
  }
  return rows;
}

size_t flagged(const store::Trend& trend) {
  size_t count = 0;
  for (const auto& point : trend.points) count += !point.flag.empty();
  return count;
}

nlohmann::json trend_json(const store::Trend& trend) {
  nlohmann::json json{{"rule", trend.rule},
                      {"group_by", trend.group_by},
                      {"wait_classes", trend.wait_classes},
                      {"points", nlohmann::json::array()}};
  for (const auto& point : trend.points) {
    auto run = store::to_json(point.run);
    run.erase("report_mtime_ns");
    json["points"].push_back(
        {{"run", run},
         {"group", point.group},
         {"baseline_runs", point.baseline_runs},
         {"baseline_median",
          point.baseline_median ? nlohmann::json(*point.baseline_median) : nlohmann::json(nullptr)},
         {"lower", point.lower},
         {"upper", point.upper},
         {"change_pct", point.change_pct},
         {"flag", point.flag}});
  }
  return json;
}

std::string trend_html(const store::Trend& trend, const std::string& table) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>pgwaitprof "
      "trend</title>\n" +
      exporters::html_assets::head_assets() +
      "<style>body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse}"
      "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}"
      ".flag{color:#c00;font-weight:bold}</style></head><body>\n<h1>tps trend</h1>\n<p>" +
      tf::html_escape("Rule: " + trend.rule) + "</p>\n<div id=\"trend-chart\"></div>\n" + table +
      "<script type=\"application/json\" id=\"trend-data\">" +
      exporters::html_assets::script_safe_json(base::json_text(trend_json(trend))) + "</script>\n" +
      exporters::html_assets::body_scripts();
  html += R"(<script>
(function () {
  const data = JSON.parse(document.getElementById('trend-data').textContent);
  const pts = data.points;
  const x = pts.map((p, i) => i + 1);
  const tps = pts.map(p => p.run.tps);
  const med = pts.map(p => p.baseline_median);
  const lo = pts.map(p => p.baseline_median === null ? null : p.lower);
  const hi = pts.map(p => p.baseline_median === null ? null : p.upper);
  new uPlot({width: 900, height: 320, scales: {x: {time: false}},
    series: [{label: 'run'}, {label: 'tps', stroke: '#1f77b4', width: 2, points: {show: true}},
             {label: 'baseline median', stroke: '#888', dash: [4, 4]},
             {label: 'lower limit', stroke: '#d62728', dash: [2, 4]},
             {label: 'upper limit', stroke: '#2ca02c', dash: [2, 4]}]},
    [x, tps, med, lo, hi], document.getElementById('trend-chart'));
})();
</script>
</body></html>
)";
  return html;
}

}  // namespace

std::string render_trend(const store::Trend& trend, const std::string& format) {
  TrendParts parts;
  parts.rows = trend_rows(trend, parts.right);
  parts.json = [&] { return trend_json(trend); };
  parts.page = [&](const std::string& table) { return trend_html(trend, table); };
  parts.emphasised = {"REGRESSION", "improvement"};
  const auto summary = fmt::format("{} runs, {} flagged\n", trend.points.size(), flagged(trend));
  parts.markdown_head = "Rule: " + tf::markdown_escape(trend.rule) + ".\n\n";
  parts.markdown_tail = "\n" + summary;
  parts.text_head = "rule: " + tf::text_escape(trend.rule) + "\n\n";
  parts.text_tail = summary;
  if (trend.points.empty()) parts.text_instead = "no runs\n";
  return render_trend_parts(parts, format);
}

}  // namespace pgwaitprof::exporters
