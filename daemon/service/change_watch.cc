// Change points after the daemon's runs, in the data directory's history and the results
// database's.
#include "daemon/service/change_watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "base/logging.h"
#include "store/results_db.h"
#include "store/run_index.h"
#include "store/trend_changes.h"

namespace pgwaitprof::service {
namespace {

auto change_watch_log() {
  static auto logger = base::component_logger("changes");
  return logger;
}

using GroupKey = std::tuple<std::string, std::string, std::string>;  // label, workload, command

GroupKey key_of(const store::RunSummary& run) { return {run.label, run.workload, run.command}; }

bool older_first(const store::RunSummary& a, const store::RunSummary& b) {
  return store::newer_first(b, a);
}

// The group's runs up to the newest of those just done, oldest first: the history as it stood
// when the daemon's run ended (a later run of another host is that host's to report).
std::vector<store::RunSummary> group_runs(const std::vector<store::RunSummary>& history,
                                          const GroupKey& key,
                                          const std::set<std::string>& just_done) {
  std::vector<store::RunSummary> runs;
  for (const auto& run : history) {
    if (key_of(run) == key) runs.push_back(run);
  }
  std::stable_sort(runs.begin(), runs.end(), older_first);
  while (!runs.empty() && !just_done.contains(runs.back().id)) runs.pop_back();
  return runs;
}

// "IO | WALSync +0.21 ms, ...": the waits whose time a transaction moved most, with the move.
std::string waits_moved(const store::TrendChange& change) {
  std::string text;
  for (const auto& shift : change.waits) {
    text += fmt::format("{}{} {:+.3g} ms", text.empty() ? "" : ", ", shift.wait,
                        shift.ms_after - shift.ms_before);
  }
  return text;
}

// The change points the runs `just_done` brought to `history`'s groups: logged and exported
// with history=`name`.
void report_changes(const std::vector<store::RunSummary>& history, const std::string& name,
                    const std::set<std::string>& just_done, exporters::MetricsServer* metrics) {
  std::set<GroupKey> groups;
  for (const auto& run : history) {
    if (just_done.contains(run.id)) groups.insert(key_of(run));
  }
  for (const auto& key : groups) {
    const auto& [label, workload, command] = key;
    const std::string group = label.empty() ? workload : label;
    const auto brought = store::new_change_points(group_runs(history, key, just_done));
    if (!brought) {
      change_watch_log()->warn(
          "could not analyse the group's history group=\"{}\" history={} error=\"{}\"", group, name,
          brought.error().message);
      continue;
    }
    std::map<std::string, double> steps;
    for (const auto& change : *brought) {
      const double step = change.point.relative_change;
      steps[change.metric] = std::isfinite(step) ? step : 1.0;
      change_watch_log()->warn(
          "change point group=\"{}\" metric=\"{}\" from_run={} step={:+.1f}% before={:.4g} "
          "after={:.4g} p={:.3f} waits_moved=\"{}\" history={}",
          group, change.metric, change.run_id, 100 * step, change.point.mean_before,
          change.point.mean_after, change.point.p_value, waits_moved(change), name);
    }
    if (metrics != nullptr) metrics->set_change_points(group, name, steps);
  }
}

// The results database's history, with the runs just done that it does not hold yet (their
// upload may be in flight, or the database was down when they ended).
std::optional<std::vector<store::RunSummary>> shared_history(
    const std::string& dsn, const std::vector<store::RunSummary>& local,
    const std::set<std::string>& just_done) {
  auto db = store::ResultsDb::connect(dsn);
  auto listed = db ? db->list({}) : base::Expected<std::vector<store::RunSummary>>(db.error());
  if (!listed) {
    change_watch_log()->warn("could not read the results database's history error=\"{}\"",
                             listed.error().message);
    return std::nullopt;
  }
  std::set<std::string> held;
  for (const auto& run : *listed) held.insert(run.id);
  for (const auto& run : local) {
    if (just_done.contains(run.id) && !held.contains(run.id)) listed->push_back(run);
  }
  return std::move(*listed);
}

}  // namespace

void watch_changes(const std::filesystem::path& data_dir, const std::string& results_dsn,
                   const std::function<bool(const store::RunSummary&)>& just_done,
                   exporters::MetricsServer* metrics) {
  std::vector<std::string> warnings;
  const auto history = store::load_history(data_dir, &warnings);
  for (const auto& warning : warnings) change_watch_log()->warn("{}", warning);
  std::set<std::string> done;
  for (const auto& run : history) {
    if (just_done(run)) done.insert(run.id);
  }
  if (done.empty()) return;
  report_changes(history, "data_dir", done, metrics);
  if (results_dsn.empty()) return;
  if (const auto shared = shared_history(results_dsn, history, done)) {
    report_changes(*shared, "results", done, metrics);
  }
}

}  // namespace pgwaitprof::service
