// The matrix table as data: matrix.csv (one row per cell, two columns per wait class) and
// matrix.json (every cell with its runs' tps and its wait profile, and for traced runs each wait
// event's blocking waits a second and durations).
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "exporters/render/matrix_detail.h"
#include "exporters/render/matrix_table.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters {

using namespace text_format;
using namespace matrix_detail;

namespace {

// "share_lwlock": a column name from a wait class.
std::string share_column(const std::string& wait_class) {
  std::string column = "share_";
  for (const char c : wait_class) {
    column += static_cast<char>(std::isalnum(static_cast<unsigned char>(c))
                                    ? std::tolower(static_cast<unsigned char>(c))
                                    : '_');
  }
  return column;
}

nlohmann::json shares_json(const std::vector<WaitShare>& shares) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& share : shares) {
    list.push_back(
        {{"name", share.name},
         {"wait_class", share.wait_class},
         {"share", share.share},
         {"share_error",
          std::isfinite(share.share_error) ? nlohmann::json(share.share_error) : nlohmann::json()},
         {"aas", share.aas},
         {"aas_error",
          std::isfinite(share.aas_error) ? nlohmann::json(share.aas_error) : nlohmann::json()}});
  }
  return list;
}

nlohmann::json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json();
}

// A traced cell's blocking waits per event (model/matrix_durations.h).
nlohmann::json durations_json(const model::CellDurations& durations) {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& event : durations.events) {
    events.push_back({{"name", event.name},
                      {"wait_class", event.wait_class},
                      {"runs", event.runs},
                      {"waits_per_s", event.waits_per_s},
                      {"waits_per_s_error", number_or_null(event.waits_per_s_error)},
                      {"aas", event.aas},
                      {"mean_s", event.mean_s},
                      {"p50_s", event.p50_s},
                      {"p99_s", event.p99_s},
                      {"p99_error_s", number_or_null(event.p99_error)},
                      {"longest_s", event.longest_s}});
  }
  return {{"traced_runs", durations.traced_runs}, {"events", std::move(events)}};
}

// A figure with its interval; "constrained": false with the note when the data do not pin it
// down (the value is then kept for tools, the note says why no one should quote it).
nlohmann::json figure_json(const model::UslFigure& figure) {
  return {{"value", number_or_null(figure.value)},
          {"low", number_or_null(figure.low)},
          {"high", number_or_null(figure.high)},
          {"constrained", figure.constrained},
          {"note", figure.note}};
}

nlohmann::json growth_json(const std::vector<model::WaitGrowth>& growth) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& entry : growth) {
    list.push_back(
        {{"name", entry.name},
         {"wait_class", entry.wait_class},
         {"share_below", entry.share_below},
         {"share_above", entry.share_above},
         {"share_change", entry.share_change},
         {"share_change_error", number_or_null(entry.share_change_error)},
         {"aas_per_client_below", entry.aas_per_client_below},
         {"aas_per_client_above", entry.aas_per_client_above},
         {"aas_per_client_change", entry.aas_per_client_change},
         {"aas_per_client_change_error", number_or_null(entry.aas_per_client_change_error)}});
  }
  return list;
}

nlohmann::json scalability_json(const MatrixTable& table) {
  using nlohmann::json;
  json variants = json::array();
  for (const auto& variant : table.scalability) {
    const auto& fit = variant.fit;
    json entry = {{"variant", variant.variant}, {"fitted", fit.fitted}, {"reason", fit.reason}};
    if (fit.fitted) {
      entry["lambda"] = figure_json(fit.lambda);
      entry["sigma"] = figure_json(fit.sigma);
      entry["kappa"] = figure_json(fit.kappa);
      entry["peak_clients"] = figure_json(fit.peak_clients);
      entry["peak_tps"] = figure_json(fit.peak_tps);
      entry["interval_method"] = fit.interval_method;
      entry["runs"] = fit.points;
      entry["client_counts"] = fit.client_counts;
      entry["r_squared"] = number_or_null(fit.r_squared);
      entry["rms_relative_error"] = number_or_null(fit.rms_relative_error);
      entry["lack_of_fit_p"] = fit.lack_of_fit_p ? json(*fit.lack_of_fit_p) : json();
      entry["poor_fit"] = fit.poor_fit;
      entry["noisy"] = fit.noisy;
      entry["largest_count_efficiency"] = number_or_null(fit.largest_count_efficiency);
      entry["linear"] = fit.linear;
      entry["verdict"] = fit.verdict;
      json efficiency = json::array();
      for (const auto& point : variant.knee.efficiency) {
        efficiency.push_back({{"clients", point.clients}, {"efficiency", point.efficiency}});
      }
      entry["knee"] = {
          {"threshold", variant.knee.threshold},
          {"single_client_tps", variant.knee.single_client_tps},
          {"single_client_measured", variant.knee.single_client_measured},
          {"clients", variant.knee.clients ? json(*variant.knee.clients) : json()},
          {"departs_from_fit",
           variant.knee.departs_from_fit ? json(*variant.knee.departs_from_fit) : json()},
          {"efficiency", std::move(efficiency)}};
      entry["classes"] = growth_json(variant.classes);
      entry["events"] = growth_json(variant.events);
    }
    entry["headline"] = variant.headline;
    variants.push_back(std::move(entry));
  }
  return variants;
}

}  // namespace

std::string render_matrix_csv(const MatrixTable& table) {
  // The wait profile as two columns per wait class that occurs anywhere in the table: its
  // share and the share's standard error (share_error says where that comes from).
  const auto classes = table_wait_classes(table);
  std::string out =
      "variant,clients,repeats,tps_median,tps_min,tps_max,latency_median_ms,p99_median_ms,"
      "dominant_wait,"
      "dominant_class,dominant_share,failed_runs,profile_runs,share_error,aas_total";
  for (const auto& wait_class : classes) {
    out += "," + csv_field(share_column(wait_class)) + "," +
           csv_field(share_column(wait_class) + "_se");
  }
  out += "\n";
  for (const auto& cell : table.cells) {
    const bool tps = !cell.tps.empty();
    const bool profile = cell.profile_runs > 0;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", csv_field(cell.variant), cell.clients,
        cell.tps.size(), tps ? fmt::format("{:.2f}", cell.tps_median) : "",
        tps ? fmt::format("{:.2f}", cell.tps_min) : "",
        tps ? fmt::format("{:.2f}", cell.tps_max) : "",
        tps ? fmt::format("{:.3f}", cell.latency_median.count()) : "",
        std::isfinite(cell.p99_median.count()) ? fmt::format("{:.3f}", cell.p99_median.count())
                                               : "",
        csv_field(cell.dominant_wait), csv_field(cell.dominant_class),
        cell.dominant_wait.empty() ? "" : fmt::format("{:.4f}", cell.dominant_share),
        cell.failed_runs, cell.profile_runs, error_source_name(cell.error_source),
        profile ? fmt::format("{:.4f}", cell.aas_total) : "");
    for (const auto& wait_class : classes) {
      const WaitShare* share = cell.find_class(wait_class);
      if (!profile) {
        out += ",,";
      } else if (share == nullptr) {
        out += ",0,0";
      } else {
        out += fmt::format(",{:.4f},{}", share->share,
                           std::isfinite(share->share_error)
                               ? fmt::format("{:.4f}", share->share_error)
                               : std::string());
      }
    }
    out += "\n";
  }
  return out;
}

std::string render_matrix_json(const MatrixTable& table) {
  using nlohmann::json;
  json cells = json::array();
  for (const auto& cell : table.cells) {
    const bool tps = !cell.tps.empty();
    cells.push_back(
        {{"variant", cell.variant},
         {"clients", cell.clients},
         {"tps", cell.tps},
         {"tps_median", tps ? json(cell.tps_median) : json()},
         {"tps_min", tps ? json(cell.tps_min) : json()},
         {"tps_max", tps ? json(cell.tps_max) : json()},
         {"latency_median_ms", tps ? json(cell.latency_median.count()) : json()},
         {"p99_median_ms",
          std::isfinite(cell.p99_median.count()) ? json(cell.p99_median.count()) : json()},
         {"checkpoint_median_s", std::isfinite(cell.checkpoint_median.count())
                                     ? json(cell.checkpoint_median.count())
                                     : json()},
         {"dominant_wait", cell.dominant_wait},
         {"dominant_class", cell.dominant_class},
         {"dominant_share", cell.dominant_share},
         {"failed_runs", cell.failed_runs},
         {"profile_runs", cell.profile_runs},
         {"share_error", error_source_name(cell.error_source)},
         {"aas_total", cell.aas_total},
         {"classes", shares_json(cell.classes)},
         {"events", shares_json(cell.events)}});
    // Only cells of runs with CPU profiles carry the key.
    if (!cell.functions.empty()) cells.back()["functions"] = shares_json(cell.functions);
    // Only cells of traced runs (--source trace) carry the key.
    if (cell.durations.traced_runs > 0) cells.back()["durations"] = durations_json(cell.durations);
  }
  json builds = json::array();
  for (const auto& build : table.builds) {
    builds.push_back({{"variant", build.variant},
                      {"server_version", build.server_version},
                      {"major", build.major},
                      {"configure", build.configure}});
  }
  const json document = {{"schema_version", kMatrixSchemaVersion},
                         {"name", table.name},
                         {"metric", to_string(table.metric)},
                         {"split_by", table.split_by},
                         {"variants", table.variants},
                         {"clients", table.clients},
                         {"cells", std::move(cells)},
                         {"scalability", scalability_json(table)},
                         {"builds", std::move(builds)},
                         {"mixed_majors", table.mixed_majors}};
  return base::json_text(document, 2) + "\n";
}

}  // namespace pgwaitprof::exporters
