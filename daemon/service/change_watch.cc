// Change points after the daemon's runs.
#include "daemon/service/change_watch.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "base/logging.h"
#include "store/run_index.h"
#include "store/trend_changes.h"

namespace pgwaitprof::service {
namespace {

auto log() {
  static auto logger = base::component_logger("changes");
  return logger;
}

using GroupKey = std::tuple<std::string, std::string, std::string>;  // label, workload, command

GroupKey key_of(const store::RunSummary& run) { return {run.label, run.workload, run.command}; }

}  // namespace

void watch_changes(const std::filesystem::path& data_dir,
                   const std::function<bool(const store::RunSummary&)>& just_done,
                   exporters::MetricsServer* metrics) {
  std::vector<std::string> warnings;
  const auto history = store::load_history(data_dir, &warnings);
  for (const auto& warning : warnings) log()->warn("{}", warning);
  std::set<GroupKey> groups;
  for (const auto& run : history) {
    if (just_done(run)) groups.insert(key_of(run));
  }
  for (const auto& key : groups) {
    std::vector<store::RunSummary> runs;
    for (const auto& run : history) {
      if (key_of(run) == key) runs.push_back(run);
    }
    const auto& [label, workload, command] = key;
    const std::string group = label.empty() ? workload : label;
    const auto brought = store::new_change_points(std::move(runs));
    if (!brought) {
      log()->warn("could not analyse the group's history group=\"{}\" error=\"{}\"", group,
                  brought.error().message);
      continue;
    }
    std::map<std::string, double> steps;
    for (const auto& change : *brought) {
      const double step = change.point.relative_change;
      steps[change.metric] = std::isfinite(step) ? step : 1.0;
      log()->warn(
          "change point group=\"{}\" metric=\"{}\" from_run={} step={:+.1f}% before={:.4g} "
          "after={:.4g} p={:.3f} top_wait=\"{}\"",
          group, change.metric, change.run_id, 100 * step, change.point.mean_before,
          change.point.mean_after, change.point.p_value,
          change.waits.empty() ? std::string() : change.waits.front().wait);
    }
    if (metrics != nullptr) metrics->set_change_points(group, steps);
  }
}

}  // namespace pgwaitprof::service
