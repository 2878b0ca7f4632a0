// Rendering the history's change points: a table of change points with their explanations,
// CSV and JSON of the same, and a page with each group's tps and p99 series, the segments'
// means and the change points marked (uPlot).
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

std::string figure(double value) {
  if (!std::isfinite(value)) return "-";
  if (std::abs(value) >= 100) return fmt::format("{:.0f}", value);
  if (std::abs(value) >= 1) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3f}", value);
}

std::string step_text(const store::TrendChange& change) {
  const auto& point = change.point;
  std::string text = std::isfinite(point.relative_change)
                         ? fmt::format("{:+.1f}%", 100 * point.relative_change)
                         : std::string("new");
  if (change.test && change.test->ci_low_percent && change.test->ci_high_percent) {
    text += fmt::format(" [{:+.1f}%, {:+.1f}%]", *change.test->ci_low_percent,
                        *change.test->ci_high_percent);
  }
  return text;
}

std::string wait_text(const store::WaitShift& shift) {
  const char* noise = !shift.significant   ? "noise unknown"
                      : *shift.significant ? "beyond noise"
                                           : "within noise";
  return fmt::format("{} {} -> {} ms a transaction, {:.0f}% -> {:.0f}% of DB time ({})", shift.wait,
                     figure(shift.ms_before), figure(shift.ms_after), 100 * shift.share_before,
                     100 * shift.share_after, noise);
}

std::string changed_text(const store::TrendChange& change) {
  std::string text;
  for (const auto& attribute : change.changed) {
    text += (text.empty() ? "" : "; ") +
            fmt::format("{} {} -> {}", attribute.name, attribute.before, attribute.after);
  }
  return text;
}

std::string waits_text(const store::TrendChange& change) {
  std::string text;
  for (const auto& shift : change.waits) text += (text.empty() ? "" : "; ") + wait_text(shift);
  return text;
}

std::vector<std::vector<std::string>> change_rows(const store::TrendChanges& changes,
                                                  std::vector<bool>& right) {
  std::vector<std::vector<std::string>> rows = {{"group", "run", "id", "started", "metric",
                                                 "before", "after", "step [95% CI]", "p", "runs",
                                                 "waits that moved", "changed at run"}};
  right = {false, true, false, false, false, true, true, true, true, true, false, false};
  for (const auto& group : changes.groups) {
    for (const auto& change : group.changes) {
      const auto& run = group.runs[change.run];
      rows.push_back({group.group, std::to_string(change.run + 1), run.id,
                      run.started_at.substr(0, 16), change.metric, figure(change.point.mean_before),
                      figure(change.point.mean_after), step_text(change),
                      fmt::format("{:.3f}", change.point.p_value),
                      fmt::format("{}|{}", change.runs_before, change.runs_after),
                      waits_text(change), changed_text(change)});
    }
  }
  return rows;
}

std::string group_line(const store::GroupChanges& group) {
  std::string line = group.group.empty() ? "history" : "group " + group.group;
  if (!group.runs.empty()) line += ", workload " + group.runs.front().workload;
  line += fmt::format(": {} completed runs", group.runs.size());
  if (!group.runs.empty()) {
    line += fmt::format(" ({} to {})", group.runs.front().started_at.substr(0, 16),
                        group.runs.back().started_at.substr(0, 16));
  }
  if (group.more_runs_needed() > 0) {
    line += fmt::format("; change points need {} runs: {} more", group.runs_needed,
                        group.more_runs_needed());
  }
  size_t found = group.changes.size();
  if (group.more_runs_needed() == 0) line += fmt::format("; {} change points", found);
  if (!group.skipped.empty()) {
    line += "; kept out: ";
    for (size_t index = 0; index < group.skipped.size(); ++index) {
      line += (index ? ", " : "") + group.skipped[index];
    }
  }
  return line;
}

nlohmann::json change_json(const store::GroupChanges& group, const store::TrendChange& change) {
  nlohmann::json json{{"metric", change.metric},
                      {"run", change.run + 1},
                      {"run_id", group.runs[change.run].id},
                      {"started_at", group.runs[change.run].started_at},
                      {"mean_before", change.point.mean_before},
                      {"mean_after", change.point.mean_after},
                      {"relative_change", std::isfinite(change.point.relative_change)
                                              ? nlohmann::json(change.point.relative_change)
                                              : nlohmann::json(nullptr)},
                      {"p_value", change.point.p_value},
                      {"runs_before", change.runs_before},
                      {"runs_after", change.runs_after},
                      {"waits", nlohmann::json::array()},
                      {"changed", nlohmann::json::array()}};
  if (change.test && change.test->ci_low_percent) {
    json["change_percent"] = change.test->change_percent;
    json["ci_low_percent"] = *change.test->ci_low_percent;
    json["ci_high_percent"] = *change.test->ci_high_percent;
    json["welch_p_value"] =
        change.test->p_value ? nlohmann::json(*change.test->p_value) : nlohmann::json(nullptr);
  }
  for (const auto& shift : change.waits) {
    json["waits"].push_back({{"wait", shift.wait},
                             {"before", shift.before},
                             {"after", shift.after},
                             {"share_before", shift.share_before},
                             {"share_after", shift.share_after},
                             {"ms_before", shift.ms_before},
                             {"ms_after", shift.ms_after},
                             {"significant", shift.significant ? nlohmann::json(*shift.significant)
                                                               : nlohmann::json(nullptr)}});
  }
  for (const auto& attribute : change.changed) {
    json["changed"].push_back(
        {{"name", attribute.name}, {"before", attribute.before}, {"after", attribute.after}});
  }
  return json;
}

nlohmann::json series_json(const store::GroupChanges& group, const store::MetricSeries& series) {
  nlohmann::json json{{"metric", series.metric},
                      {"runs", series.runs},
                      {"values", series.values},
                      {"too_short", series.found.too_short},
                      {"segments", nlohmann::json::array()}};
  for (const auto& segment : series.found.segments) {
    if (segment.end == segment.begin) continue;
    json["segments"].push_back({{"first_run", series.runs[segment.begin] + 1},
                                {"last_run", series.runs[segment.end - 1] + 1},
                                {"mean", segment.mean}});
  }
  (void)group;
  return json;
}

nlohmann::json changes_json(const store::TrendChanges& changes) {
  nlohmann::json json{{"method", changes.method},
                      {"group_by", changes.group_by},
                      {"groups", nlohmann::json::array()}};
  for (const auto& group : changes.groups) {
    nlohmann::json item{{"group", group.group},
                        {"runs", nlohmann::json::array()},
                        {"skipped", group.skipped},
                        {"runs_needed", group.runs_needed},
                        {"more_runs_needed", group.more_runs_needed()},
                        {"series", nlohmann::json::array()},
                        {"change_points", nlohmann::json::array()}};
    for (const auto& run : group.runs) {
      item["runs"].push_back(
          {{"id", run.id}, {"started_at", run.started_at}, {"label", run.label}});
    }
    for (const auto& series : group.series) item["series"].push_back(series_json(group, series));
    for (const auto& change : group.changes) {
      item["change_points"].push_back(change_json(group, change));
    }
    json["groups"].push_back(std::move(item));
  }
  return json;
}

std::string changes_html(const store::TrendChanges& changes, const std::string& table) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>pgwaitprof "
      "change points</title>\n" +
      html_assets::head_assets() +
      "<style>body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse}"
      "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left}</style></head><body>\n"
      "<h1>Change points</h1>\n<p>" +
      tf::html_escape("Method: " + changes.method) + "</p>\n<ul>\n";
  for (const auto& group : changes.groups)
    html += "<li>" + tf::html_escape(group_line(group)) + "</li>\n";
  html += "</ul>\n<div id=\"charts\"></div>\n" + table +
          "<script type=\"application/json\" id=\"changes-data\">" +
          html_assets::script_safe_json(base::json_text(changes_json(changes))) + "</script>\n" +
          html_assets::body_scripts();
  html += R"(<script>
(function () {
  const data = JSON.parse(document.getElementById('changes-data').textContent);
  const root = document.getElementById('charts');
  for (const group of data.groups) {
    for (const series of group.series) {
      if (series.metric !== 'tps' && series.metric !== 'p99 ms') continue;
      if (series.values.length === 0) continue;
      const title = document.createElement('h2');
      title.textContent = (group.group ? group.group + ': ' : '') + series.metric;
      root.appendChild(title);
      const x = series.runs.map(r => r + 1);
      const means = x.map(run => {
        const s = series.segments.find(seg => run >= seg.first_run && run <= seg.last_run);
        return s ? s.mean : null;
      });
      const marks = x.map(run => group.change_points.some(
          c => c.metric === series.metric && c.run === run) ? series.values[x.indexOf(run)] : null);
      const div = document.createElement('div');
      root.appendChild(div);
      new uPlot({width: 900, height: 280, scales: {x: {time: false}},
        series: [{label: 'run'},
                 {label: series.metric, stroke: '#1f77b4', width: 1, points: {show: true}},
                 {label: 'segment mean', stroke: '#555', width: 2, paths: uPlot.paths.stepped({align: 1})},
                 {label: 'change point', stroke: '#d62728', width: 0,
                  points: {show: true, size: 12, fill: '#d62728'}}]},
        [x, series.values, means, marks], div);
    }
  }
})();
</script>
</body></html>
)";
  return html;
}

}  // namespace

std::string render_trend_changes(const store::TrendChanges& changes, const std::string& format) {
  TrendParts parts;
  parts.rows = change_rows(changes, parts.right);
  parts.json = [&] { return changes_json(changes); };
  parts.page = [&](const std::string& table) { return changes_html(changes, table); };
  parts.table_when_empty = false;
  std::string text_groups, markdown_groups;
  for (const auto& group : changes.groups) {
    const auto line = group_line(group);
    text_groups += tf::text_escape(line) + "\n";
    markdown_groups += "- " + tf::markdown_escape(line) + "\n";
  }
  if (changes.groups.empty()) text_groups = markdown_groups = "no runs\n";
  parts.markdown_head =
      "Method: " + tf::markdown_escape(changes.method) + ".\n\n" + markdown_groups + "\n";
  parts.text_head = "method: " + tf::text_escape(changes.method) + "\n" + text_groups +
                    (parts.rows.size() > 1 ? "\n" : "");
  return render_trend_parts(parts, format);
}

}  // namespace pgwaitprof::exporters
