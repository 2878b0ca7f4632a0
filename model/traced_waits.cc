// A traced run's waits per name over its steady window (traced_waits.h).
#include "model/traced_waits.h"

#include <cmath>

#include "model/run_estimates.h"

namespace pgwaitprof::model {

bool load_wait(const WaitKey& key) { return !is_idle(key); }

std::optional<RunWaits> run_traced_waits(
    const Run& run, const std::function<std::string(const WaitKey&)>& name_of) {
  const auto profile = window_profile(run, steady_window(run));
  if (!profile.exact() || profile.snapshots() == 0) return std::nullopt;
  RunWaits waits;
  waits.wall_s = static_cast<double>(profile.snapshots()) * 1e-6;
  for (const auto& [key, time] : profile.traced()) {
    if (!load_wait(key)) continue;
    auto& named = waits.by_name[name_of(key)];
    named.time.merge(time);
    if (named.label.empty()) {
      named.label = display_name(key);
      named.wait_class = key.wait_event_type;
    }
  }
  return waits;
}

WaitFigures wait_figures(const TracedTime& time, double wall_s) {
  WaitFigures figures;
  if (wall_s > 0) {
    figures.waits_per_s = static_cast<double>(time.waits) / wall_s;
    figures.aas = time.time_s() / wall_s;
  }
  if (time.waits == 0) return figures;
  figures.mean_s = time.mean_s();
  figures.p50_s = time.percentile_s(0.5);
  figures.p99_s = time.percentile_s(0.99);
  figures.longest_s = time.longest_s();
  return figures;
}

}  // namespace pgwaitprof::model
