// Run-to-run spread from comparable runs of the history (run_to_run.h).
#include "store/run_to_run.h"

#include <algorithm>
#include <cmath>

#include "model/statistics.h"

namespace pgwaitprof::store {
namespace {

model::RunToRunFigure figure(std::string name, double value, const std::vector<double>& others) {
  const double sd = model::sample_sd(others);
  const double t = model::student_t_quantile(0.975, static_cast<double>(others.size() - 1));
  return {std::move(name), value, sd, t * std::sqrt(2.0) * sd};
}

}  // namespace

bool comparable(const RunSummary& run, const RunSummary& other) {
  return other.id != run.id && other.status == "completed" && other.workload == run.workload &&
         other.command == run.command && other.clients == run.clients && other.host == run.host &&
         other.server_version == run.server_version && other.settings == run.settings &&
         std::isfinite(other.tps) && other.tps > 0;
}

std::vector<RunSummary> comparable_runs(const RunSummary& run, std::span<const RunSummary> history,
                                        const RunToRunOptions& options) {
  std::vector<RunSummary> found;
  for (const auto& other : history) {
    if (found.size() == options.window) break;
    if (comparable(run, other)) found.push_back(other);
  }
  return found;
}

model::RunToRun run_to_run(const RunSummary& run, std::span<const RunSummary> history,
                           const RunToRunOptions& options) {
  const auto others = comparable_runs(run, history, options);
  model::RunToRun spread;
  spread.runs = others.size();
  spread.needed = std::max<size_t>(options.needed, 2);
  if (others.size() < spread.needed) return spread;
  std::vector<double> values;
  for (const auto& other : others) values.push_back(other.tps);
  spread.figures.push_back(figure("tps", run.tps, values));
  // The run's largest waits; a comparable run without one had none of its samples.
  std::vector<std::pair<double, std::string>> waits;
  for (const auto& [name, share] : run.wait_shares) waits.emplace_back(share, name);
  std::sort(waits.rbegin(), waits.rend());
  if (waits.size() > options.waits) waits.resize(options.waits);
  for (const auto& [share, name] : waits) {
    values.clear();
    for (const auto& other : others) {
      const auto found = other.wait_shares.find(name);
      values.push_back(found == other.wait_shares.end() ? 0.0 : found->second);
    }
    spread.figures.push_back(figure(name, share, values));
  }
  return spread;
}

}  // namespace pgwaitprof::store
