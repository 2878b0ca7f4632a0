// Rendering the history.
#include "exporters/render/history_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

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

std::string render_scaling(const std::vector<store::RunSummary>& runs, const model::Knee& knee) {
  std::vector<const store::RunSummary*> sorted;
  for (const auto& run : runs) sorted.push_back(&run);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto* a, const auto* b) { return a->clients < b->clients; });
  std::vector<std::vector<std::string>> rows = {
      {"clients", "tps", "per client", "CPU", "top waits (share of non-idle samples)", "label"}};
  for (const auto* run : sorted) {
    const double tps = std::isfinite(run->whole_run_tps) ? run->whole_run_tps : run->tps;
    std::string per_client = "-";
    for (const auto& point : knee.efficiency) {
      if (point.clients == run->clients) per_client = fmt::format("{:.2f}", point.efficiency);
    }
    std::vector<std::pair<std::string, double>> waits(run->wait_shares.begin(),
                                                      run->wait_shares.end());
    std::stable_sort(waits.begin(), waits.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string top;
    for (size_t index = 0; index < waits.size() && index < 3; ++index) {
      top += fmt::format("{}{} {:.0f}%", index ? ", " : "", waits[index].first,
                         100 * waits[index].second);
    }
    const auto cpu = run->wait_shares.find("CPU");
    rows.push_back(
        {fmt::format("{}", run->clients), number_or_dash(tps, "{:.1f}"), per_client,
         cpu == run->wait_shares.end() ? "0%" : fmt::format("{:.0f}%", 100 * cpu->second),
         top.empty() ? "-" : top, run->label});
  }
  std::string text = tf::text_table(rows, {true, true, true, true, false, false});
  if (!knee.single_client_measured) {
    text += "scaling: no 1-client run to measure the others against\n";
  } else if (knee.clients) {
    // The last count before the knee that still scaled, when there is one.
    std::optional<int> before;
    for (const auto& point : knee.efficiency) {
      if (point.clients < *knee.clients && point.clients > 1) before = point.clients;
    }
    text +=
        fmt::format("scaling: stops {} {} clients (tps per client under {:.0f} % of 1 client's)\n",
                    before ? fmt::format("between {} and", *before) : std::string("by"),
                    *knee.clients, 100 * knee.threshold);
  } else if (!knee.efficiency.empty()) {
    text += fmt::format(
        "scaling: still scales at {} clients (tps per client at least {:.0f} % of "
        "1 client's)\n",
        knee.efficiency.back().clients, 100 * knee.threshold);
  }
  return text;
}

}  // namespace pgwaitprof::exporters
