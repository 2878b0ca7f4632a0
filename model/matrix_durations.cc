// A matrix cell's traced wait durations (matrix_durations.h).
#include "model/matrix_durations.h"

#include <algorithm>
#include <map>

#include "model/statistics.h"
#include "model/traced_waits.h"

namespace pgwaitprof::model {

namespace {

// One event's figures in each traced run of the cell.
struct Collected {
  std::string wait_class;
  std::vector<double> waits_per_s, aas;      // one per traced run, 0 where it had none
  std::vector<double> mean_s, p50_s, p99_s;  // one per run with waits of it
  double longest_s = 0;
};

double error_between(const std::vector<double>& values) {
  return values.size() >= 2 ? standard_error_of_mean(values)
                            : std::numeric_limits<double>::quiet_NaN();
}

double mean_of(const std::vector<double>& values) {
  return values.empty() ? 0 : sample_mean(values);
}

}  // namespace

const WaitDurations* CellDurations::find(const std::string& name) const {
  for (const auto& event : events) {
    if (event.name == name) return &event;
  }
  return nullptr;
}

CellDurations cell_durations(const std::vector<const Run*>& runs) {
  CellDurations cell;
  std::map<std::string, Collected> collected;
  for (const auto* run : runs) {
    const auto waits = run_traced_waits(*run, display_name);
    if (!waits) continue;
    ++cell.traced_runs;
    for (const auto& [name, named] : waits->by_name) {
      auto& entry = collected[name];
      entry.wait_class = named.wait_class;
      const auto figures = wait_figures(named.time, waits->wall_s);
      entry.waits_per_s.resize(cell.traced_runs - 1, 0.0);
      entry.aas.resize(cell.traced_runs - 1, 0.0);
      entry.waits_per_s.push_back(figures.waits_per_s);
      entry.aas.push_back(figures.aas);
      if (named.time.waits == 0) continue;
      entry.mean_s.push_back(figures.mean_s);
      entry.p50_s.push_back(figures.p50_s);
      entry.p99_s.push_back(figures.p99_s);
      entry.longest_s = std::max(entry.longest_s, figures.longest_s);
    }
  }
  for (auto& [name, entry] : collected) {
    if (entry.p99_s.empty()) continue;  // time without a blocking wait: no durations
    entry.waits_per_s.resize(cell.traced_runs, 0.0);
    entry.aas.resize(cell.traced_runs, 0.0);
    cell.events.push_back({.name = name,
                           .wait_class = entry.wait_class,
                           .runs = static_cast<int>(entry.p99_s.size()),
                           .waits_per_s = mean_of(entry.waits_per_s),
                           .waits_per_s_error = error_between(entry.waits_per_s),
                           .aas = mean_of(entry.aas),
                           .mean_s = mean_of(entry.mean_s),
                           .p50_s = mean_of(entry.p50_s),
                           .p99_s = mean_of(entry.p99_s),
                           .p99_error = error_between(entry.p99_s),
                           .longest_s = entry.longest_s});
  }
  std::stable_sort(cell.events.begin(), cell.events.end(),
                   [](const WaitDurations& a, const WaitDurations& b) { return a.aas > b.aas; });
  return cell;
}

}  // namespace pgwaitprof::model
