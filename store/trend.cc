// Trends and the control-limit rule.
#include "store/trend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "model/statistics.h"

namespace pgwaitprof::store {
namespace {

using model::median;

constexpr double kMadToSigma = 1.4826;

std::vector<std::string> top_classes(const std::vector<RunSummary>& runs, size_t count) {
  std::map<std::string, double> totals;
  for (const auto& run : runs) {
    for (const auto& [wait_class, aas] : run.class_aas) totals[wait_class] += aas;
  }
  std::vector<std::pair<std::string, double>> sorted(totals.begin(), totals.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> classes;
  for (size_t i = 0; i < sorted.size() && i < count; ++i) classes.push_back(sorted[i].first);
  return classes;
}

void judge(TrendPoint& point, const std::vector<double>& previous, const TrendOptions& options) {
  const size_t first = previous.size() > options.window ? previous.size() - options.window : 0;
  const std::vector<double> baseline(previous.begin() + static_cast<std::ptrdiff_t>(first),
                                     previous.end());
  point.baseline_runs = baseline.size();
  if (baseline.size() < options.min_baseline) return;
  std::vector<double> logs;
  for (const double tps : baseline) logs.push_back(std::log(tps));
  const double centre = median(logs);
  const double limit = options.sigmas * kMadToSigma * median_absolute_deviation(logs, centre);
  point.baseline_median = std::exp(centre);
  point.lower = std::exp(centre - limit);
  point.upper = std::exp(centre + limit);
  const double tps = point.run.tps;
  const double own = std::isfinite(point.run.tps_half_width) ? point.run.tps_half_width : 0;
  point.change_pct = 100 * (tps / *point.baseline_median - 1);
  if (tps + own < point.lower) point.flag = "regression";
  if (tps - own > point.upper) point.flag = "improvement";
}

}  // namespace

double median_absolute_deviation(const std::vector<double>& values, double centre) {
  std::vector<double> deviations;
  for (const double value : values) deviations.push_back(std::abs(value - centre));
  return median(deviations);
}

bool valid_group_by(const std::string& group_by) {
  static const std::vector<std::string> names = {"",      "server_version", "kernel",
                                                 "label", "host",           "workload"};
  if (group_by.rfind("setting:", 0) == 0) return group_by.size() > 8;
  return std::find(names.begin(), names.end(), group_by) != names.end();
}

std::string group_of(const RunSummary& run, const std::string& group_by) {
  if (group_by == "server_version") return run.server_version;
  if (group_by == "kernel") return run.kernel;
  if (group_by == "label") return run.label;
  if (group_by == "host") return run.host;
  if (group_by == "workload") return run.workload;
  if (group_by.rfind("setting:", 0) == 0) {
    const auto found = run.settings.find(group_by.substr(8));
    return found == run.settings.end() ? "(unset)" : found->second;
  }
  return "";
}

Trend build_trend(std::vector<RunSummary> runs, const TrendOptions& options) {
  Trend trend;
  trend.group_by = options.group_by;
  trend.rule = fmt::format(
      "a run is flagged when its tps +- its 95% CI lies outside exp(median +- {} x 1.4826 x MAD) "
      "of the log tps of the previous {} completed runs{} (at least {} needed)",
      options.sigmas, options.window, options.group_by.empty() ? "" : " of its group",
      options.min_baseline);
  trend.wait_classes = top_classes(runs, options.wait_classes);
  std::stable_sort(runs.begin(), runs.end(), [&](const RunSummary& a, const RunSummary& b) {
    const auto group_a = group_of(a, options.group_by);
    const auto group_b = group_of(b, options.group_by);
    if (group_a != group_b) return group_a < group_b;
    return a.started_at != b.started_at ? a.started_at < b.started_at : a.id < b.id;
  });
  std::map<std::string, std::vector<double>> previous;  // per group, completed runs' tps
  for (auto& run : runs) {
    TrendPoint point;
    point.group = group_of(run, options.group_by);
    point.run = std::move(run);
    auto& history = previous[point.group];
    const bool usable =
        point.run.status == "completed" && std::isfinite(point.run.tps) && point.run.tps > 0;
    if (usable) {
      judge(point, history, options);
      history.push_back(point.run.tps);
    }
    trend.points.push_back(std::move(point));
  }
  return trend;
}

}  // namespace pgwaitprof::store
