// The figures of a run's timeline that the integration tests set side by side: the load
// generator's tps and the server's per interval, and their sums over several.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pgwaitprof::testing {

inline double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// The timeline's figures of `key` ("server_tps", or the load generator's "tps"), leaving out
// the first and the last interval (start-up, and a last interval that may be short). An
// interval without one (its "loadgen" null, no "server_tps": the schema allows both) has none.
inline std::vector<double> timeline_figures(const nlohmann::json& report, const std::string& key) {
  std::vector<double> figures;
  const auto& timeline = report["timeline"];
  for (size_t index = 1; index + 1 < timeline.size(); ++index) {
    const auto& slice = timeline[index];
    const auto& holder = key == "server_tps" ? slice : slice.value("loadgen", nlohmann::json());
    const auto field = key == "server_tps" ? "server_tps" : "tps";
    if (holder.is_object() && holder.contains(field) && holder[field].is_number()) {
      figures.push_back(holder[field].get<double>());
    }
  }
  return figures;
}

// The load generator's transactions and the server's over the intervals from `first` on that
// have both figures (each a rate over the load generator's own interval): backends hand their
// counts over at most once a second, so one interval may hold two hand-overs of a backend and
// the next none, while the sum holds each once.
inline std::pair<double, double> interval_sums(const nlohmann::json& report, size_t first) {
  const double interval_s = report.value("interval_s", 1.0);
  double own = 0, server = 0;
  const auto& timeline = report["timeline"];
  for (size_t index = first; index < timeline.size(); ++index) {
    const auto& slice = timeline[index];
    const auto loadgen = slice.value("loadgen", nlohmann::json());
    if (!slice.contains("server_tps") || !slice["server_tps"].is_number() || !loadgen.is_object() ||
        !loadgen.contains("tps") || !loadgen["tps"].is_number()) {
      continue;
    }
    own += loadgen["tps"].get<double>() * interval_s;
    server += slice["server_tps"].get<double>() * interval_s;
  }
  return {own, server};
}

// Interval by interval, the server's rate (pg_stat_database, read ten times an interval, each
// increase placed in the second before it was seen, counted over the load generator's own
// interval) against the load generator's own: none differs by more than 25 % unless the load
// generator's own rate moved as much between that interval and a neighbour. The first and the
// last interval count too: pgbench's clock starts after the run's, its clients connect in its
// first interval and hand their counts over together once a second from their first
// transaction, and the last ones at their exit, after pgbench's end; CI's sanitizer lane saw
// 1,777 against 2,227 in the first and 1,536 against 903 in the last when the server was read
// once a second. sysbench's first interval is left out (`first` 1): its threads connect and
// prepare their statements in it, each a transaction to the server and none to sysbench (145
// against sysbench's 80 for 80 events of 8 threads). Returns the intervals that do, with their
// figures.
inline std::string server_rate_departures(const nlohmann::json& report, std::string* table,
                                          size_t first = 0) {
  const auto& timeline = report["timeline"];
  std::vector<std::optional<double>> loadgen, server;
  const auto number = [](const nlohmann::json& object, const char* key) {
    return object.is_object() && object.contains(key) && object[key].is_number()
               ? std::optional<double>(object[key].get<double>())
               : std::nullopt;
  };
  for (const auto& slice : timeline) {
    loadgen.push_back(slice.contains("loadgen") ? number(slice["loadgen"], "tps") : std::nullopt);
    server.push_back(number(slice, "server_tps"));
  }
  std::string departures;
  for (size_t index = 0; index < timeline.size(); ++index) {
    *table +=
        fmt::format("{} {}/{}{} ", index, loadgen[index].value_or(NAN), server[index].value_or(NAN),
                    timeline[index].value("server_tps_spread", false) ? "~" : "");
    if (index < first || !loadgen[index] || !server[index] || *loadgen[index] <= 0) continue;
    const double own = *loadgen[index];
    const double departure = std::fabs(*server[index] - own) / own;
    if (departure <= 0.25) continue;
    double moved = 0;
    for (const size_t neighbour : {index - 1, index + 1}) {
      if (neighbour < loadgen.size() && loadgen[neighbour]) {
        moved = std::max(moved, std::fabs(*loadgen[neighbour] - own) / own);
      }
    }
    if (moved >= departure) continue;
    departures += fmt::format("interval {}: load generator {:.1f}, server {:.1f}; ", index, own,
                              *server[index]);
  }
  return departures;
}

}  // namespace pgwaitprof::testing
