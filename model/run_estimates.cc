// Steady state, tps and wait-key estimates of a run.
#include "model/run_estimates.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace pgwaitprof::model {
namespace {

bool has_tps(const TimelineSlice& slice) {
  return slice.loadgen && std::isfinite(slice.loadgen->tps) && slice.duration > base::Seconds(0);
}

}  // namespace

std::string SteadyWindow::description() const {
  if (kept > base::Seconds(0)) {
    return fmt::format("warm-up of {:g} s kept: the run is shorter than 3 times it", kept.count());
  }
  if (excluded <= base::Seconds(0)) return "";
  return fmt::format("first {:g} s trimmed as warm-up (MSER-5{})", excluded.count(),
                     at_search_limit ? "; it may last longer" : "");
}

SteadyWindow steady_window(const Run& run, bool trim) {
  SteadyWindow window;
  window.trimmed = trim;
  if (!trim) return window;
  std::vector<double> tps;
  std::vector<size_t> index_of;
  for (size_t index = 0; index < run.timeline.size(); ++index) {
    if (!has_tps(run.timeline[index])) continue;
    tps.push_back(run.timeline[index].loadgen->tps);
    index_of.push_back(index);
  }
  if (tps.size() < 10) return window;  // too short to tell a warm-up from noise
  const auto steady = mser5_steady_state(tps);
  if (steady.drop_intervals == 0 || steady.drop_intervals >= index_of.size()) return window;
  const auto first = index_of[steady.drop_intervals];
  const base::Seconds warm_up = run.timeline[first].start;
  const auto& last = run.timeline[index_of.back()];
  if (last.start + last.duration < 3 * warm_up) {
    window.kept = warm_up;
    return window;
  }
  window.first_interval = first;
  window.excluded = warm_up;
  window.at_search_limit = steady.at_search_limit;
  return window;
}

Profile window_profile(const Run& run, const SteadyWindow& window) {
  if (window.first_interval == 0) return run.profile;
  Profile profile;
  for (size_t index = window.first_interval; index < run.timeline.size(); ++index) {
    profile.merge(run.timeline[index].profile);
  }
  return profile;
}

BatchMeansOptions batch_options(const Run& run) {
  BatchMeansOptions options;
  options.interval = run.interval > base::Seconds(0) ? run.interval : base::Seconds(1);
  return options;
}

std::optional<MeanEstimate> tps_estimate(const Run& run, const SteadyWindow& window) {
  std::vector<double> tps;
  std::vector<double> weights;
  for (size_t index = window.first_interval; index < run.timeline.size(); ++index) {
    const auto& slice = run.timeline[index];
    if (!has_tps(slice)) continue;
    tps.push_back(slice.loadgen->tps);
    weights.push_back(slice.duration.count());
  }
  if (tps.empty()) return std::nullopt;
  return estimate_weighted_mean(tps, weights, batch_options(run));
}

TpsFigures tps_figures(const Run& run, const SteadyWindow& window) {
  TpsFigures figures;
  if (run.loadgen && std::isfinite(run.loadgen->tps) && run.loadgen->tps > 0) {
    figures.whole_run = run.loadgen->tps;
    figures.whole_run_from = run.throughput_source.empty() || run.throughput_source == "pgbench"
                                 ? "pgbench"
                             : run.throughput_source == "server" ? "the server"
                                                                 : run.throughput_source;
    figures.whole_run_scope = "whole run";
    // The server's count is over the time its readings covered, which the run's connection
    // being down cuts (readings start and stop a moment inside the run: more than an interval
    // or a twentieth of it missing is more than that).
    const auto covered = run.loadgen->duration;
    const bool lost = std::any_of(run.outages.begin(), run.outages.end(),
                                  [](const Outage& o) { return o.connection == kRunConnection; });
    const base::Seconds slack = std::max(run.interval, 0.05 * run.duration);
    if (run.throughput_source == "server" && covered && run.duration > base::Seconds(0) &&
        (lost || *covered < run.duration - slack)) {
      figures.whole_run_scope =
          fmt::format("{:.1f} s of the {:.1f} s run", covered->count(), run.duration.count());
    }
  }
  figures.steady = tps_estimate(run, window);
  for (size_t index = window.first_interval; index < run.timeline.size(); ++index) {
    const auto& slice = run.timeline[index];
    if (!has_tps(slice)) continue;
    if (figures.steady_to <= base::Seconds(0)) figures.steady_from = slice.start;
    figures.steady_to = slice.start + slice.duration;
  }
  return figures;
}

WaitKeyEstimate estimate_keys(const Run& run, const SteadyWindow& window, bool include_idle,
                              const std::function<bool(const WaitKey&)>& selected) {
  std::vector<IntervalCounts> intervals;
  for (size_t index = window.first_interval; index < run.timeline.size(); ++index) {
    const auto& profile = run.timeline[index].profile;
    IntervalCounts counts;
    counts.snapshots = profile.snapshots();
    for (const auto& [key, count] : profile.counts()) {
      if (!include_idle && is_idle(key)) continue;
      counts.samples += count;
      if (selected(key)) counts.count += count;
    }
    // An interval without a snapshot (the sampler was disconnected) says nothing.
    if (counts.snapshots > 0) intervals.push_back(counts);
  }
  return estimate_wait_key(intervals, batch_options(run));
}

std::string error_method_note() {
  return "± is one standard error from batch means over the timeline's intervals (batches grown "
         "until their means are uncorrelated), not the binomial formula: consecutive snapshots "
         "of one backend are not independent; \"-\" means the run is too short to estimate it";
}

}  // namespace pgwaitprof::model
