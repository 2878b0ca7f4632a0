// Rendering the history.
#include "exporters/render/history_render.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters {
namespace {

namespace tf = exporters::text_format;

std::string started(const std::string& iso) {
  auto text = iso.substr(0, 19);
  if (text.size() > 10 && text[10] == 'T') text[10] = ' ';
  return text;
}

std::string number_or_dash(double value, const char* pattern) {
  return std::isfinite(value) ? fmt::format(fmt::runtime(pattern), value) : "-";
}

std::string tps_cell(const store::RunSummary& run) {
  if (!std::isfinite(run.tps) || (run.tps == 0 && run.status != "completed")) return "-";
  auto text = tf::format_tps(run.tps);
  if (std::isfinite(run.tps_half_width)) text += " ± " + tf::format_tps(run.tps_half_width);
  return text;
}

std::string status_cell(const store::RunSummary& run) {
  return run.status == "completed" ? run.status : run.status + " (!)";
}

std::vector<std::vector<std::string>> runs_rows(const std::vector<store::RunSummary>& runs) {
  std::vector<std::vector<std::string>> rows = {{"id", "label", "started", "status", "workload",
                                                 "clients", "duration", "tps", "latency", "AAS",
                                                 "top wait", "host", "server"}};
  for (const auto& run : runs) {
    rows.push_back({run.id, run.label, started(run.started_at), status_cell(run), run.workload,
                    std::to_string(run.clients), fmt::format("{:.0f} s", run.duration_s),
                    tps_cell(run), number_or_dash(run.latency_ms, "{:.2f} ms"),
                    fmt::format("{:.2f}", run.aas), run.top_wait, run.host, run.server_version});
  }
  return rows;
}

const std::vector<bool> kRunsRight = {false, false, false, false, false, true, true,
                                      true,  true,  true,  false, false, false};

std::string runs_csv(const std::vector<store::RunSummary>& runs) {
  std::string csv = tf::csv_row({"id", "label", "started_at", "status", "workload", "clients",
                                 "duration_s", "tps", "tps_ci95_half_width", "latency_ms", "aas",
                                 "top_wait", "host", "server_version", "dir"});
  const auto num = [](double value) {
    return std::isfinite(value) ? fmt::format("{}", value) : "";
  };
  for (const auto& run : runs) {
    csv += tf::csv_row({run.id, run.label, run.started_at, run.status, run.workload,
                        std::to_string(run.clients), num(run.duration_s), num(run.tps),
                        num(run.tps_half_width), num(run.latency_ms), num(run.aas), run.top_wait,
                        run.host, run.server_version, run.dir});
  }
  return csv;
}

std::string runs_footer(const std::vector<store::RunSummary>& runs) {
  size_t unfinished = 0;
  for (const auto& run : runs) unfinished += run.status != "completed";
  auto footer = fmt::format("{} run{}", runs.size(), runs.size() == 1 ? "" : "s");
  if (unfinished) footer += fmt::format(", {} interrupted or failed (marked (!))", unfinished);
  return footer + "\n";
}

}  // namespace

bool valid_runs_format(const std::string& format) {
  return format == "text" || format == "md" || format == "csv" || format == "json";
}

bool valid_trend_format(const std::string& format) {
  return format == "text" || format == "md" || format == "json" || format == "html";
}

std::string render_runs(const std::vector<store::RunSummary>& runs, const std::string& format) {
  if (format == "json") {
    auto json = nlohmann::json::array();
    for (const auto& run : runs) {
      auto entry = store::to_json(run);
      entry.erase("report_mtime_ns");
      json.push_back(std::move(entry));
    }
    return base::json_text(json, 2) + "\n";
  }
  if (format == "csv") return runs_csv(runs);
  if (format == "md")
    return tf::markdown_table(runs_rows(runs), kRunsRight) + "\n" + runs_footer(runs);
  if (runs.empty()) return "no runs\n";
  return tf::text_table(runs_rows(runs), kRunsRight) + runs_footer(runs);
}

}  // namespace pgwaitprof::exporters
