// A/B comparison of the traced source's waits (compare.h: TracedWaitMove): per cell and wait
// event, how many blocking waits a second, how much time, and their p99 duration on each side,
// with the spread between repeats (compare's own statistics: between_repeats,
// significant_move), or for a lone run batch means over its timeline's intervals for the
// count and the time.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "model/compare_detail.h"
#include "model/run_estimates.h"
#include "model/statistics.h"
#include "model/traced_waits.h"

namespace pgwaitprof::model::compare_detail {

namespace {

// One side's traced runs: each run's waits by match key.
struct SideTraced {
  std::vector<const Run*> runs;
  std::vector<RunWaits> waits;               // one per run
  std::map<std::string, NamedWaits> pooled;  // match key -> every run's waits merged
};

SideTraced side_traced(const std::vector<const Run*>& runs) {
  SideTraced side;
  for (const auto* run : runs) {
    auto waits = run_traced_waits(*run, match_key);
    if (!waits) continue;
    for (const auto& [match, named] : waits->by_name) {
      auto& pooled = side.pooled[match];
      pooled.time.merge(named.time);
      if (pooled.label.empty()) {
        pooled.label = named.label;
        pooled.wait_class = named.wait_class;
      }
    }
    side.runs.push_back(run);
    side.waits.push_back(std::move(*waits));
  }
  return side;
}

enum class Rate { kWaits, kTime };

// A lone run's waits or time per second of its window with the batch-means error over its
// intervals (NaN when the run is too short for one).
SideEstimate lone_run_rate(const Run& run, const std::string& match, Rate rate, double mean) {
  std::vector<double> amounts, seconds;
  for (size_t index = steady_window(run).first_interval; index < run.timeline.size(); ++index) {
    const auto& profile = run.timeline[index].profile;
    if (profile.snapshots() == 0) continue;  // the source was not reading
    double amount = 0;
    for (const auto& [key, time] : profile.traced()) {
      if (!load_wait(key) || match_key(key) != match) continue;
      amount += rate == Rate::kWaits ? static_cast<double>(time.waits) : time.time_s();
    }
    amounts.push_back(amount);
    seconds.push_back(static_cast<double>(profile.snapshots()) * 1e-6);
  }
  const auto estimate = estimate_ratio(amounts, seconds, batch_options(run));
  if (!estimate.reliable) return {mean};
  return {mean, estimate.standard_error, estimate.degrees_of_freedom};
}

SideEstimate rate_estimate(const SideTraced& side, const std::string& match, Rate rate) {
  std::vector<double> values;
  for (const auto& waits : side.waits) {
    const auto found = waits.by_name.find(match);
    const auto figures = wait_figures(
        found == waits.by_name.end() ? TracedTime{} : found->second.time, waits.wall_s);
    values.push_back(rate == Rate::kWaits ? figures.waits_per_s : figures.aas);
  }
  const auto repeats = between_repeats(values);
  if (values.size() != 1) return repeats;
  return lone_run_rate(*side.runs.front(), match, rate, repeats.mean);
}

// The mean of the runs' p99 over the runs that had waits of the event; NaN without any.
SideEstimate p99_estimate(const SideTraced& side, const std::string& match) {
  std::vector<double> values;
  for (const auto& waits : side.waits) {
    const auto found = waits.by_name.find(match);
    if (found == waits.by_name.end() || found->second.time.waits == 0) continue;
    values.push_back(wait_figures(found->second.time, waits.wall_s).p99_s);
  }
  if (values.empty()) return {std::numeric_limits<double>::quiet_NaN()};
  return between_repeats(values);
}

TracedFigure figure_move(const SideEstimate& a, const SideEstimate& b) {
  return {.a = a.mean,
          .b = b.mean,
          .stderr_a = a.standard_error,
          .stderr_b = b.standard_error,
          .relative_pct = relative_change_pct(a.mean, b.mean),
          .significant = significant_move(a, b)};
}

}  // namespace

std::vector<TracedWaitMove> cell_traced_moves(const std::string& variant, int clients,
                                              const CellRuns& runs) {
  const SideTraced side_a = side_traced(runs.a);
  const SideTraced side_b = side_traced(runs.b);
  if (side_a.runs.empty() || side_b.runs.empty()) return {};
  std::set<std::string> matches;
  for (const auto* side : {&side_a, &side_b}) {
    for (const auto& [match, named] : side->pooled) {
      if (named.time.waits > 0) matches.insert(match);
    }
  }
  std::vector<TracedWaitMove> moves;
  for (const auto& match : matches) {
    TracedWaitMove move;
    move.variant = variant;
    move.clients = clients;
    const auto in_a = side_a.pooled.find(match);
    const auto& named = in_a != side_a.pooled.end() ? in_a->second : side_b.pooled.at(match);
    move.wait = named.label;
    move.wait_class = named.wait_class;
    move.waits_a = in_a != side_a.pooled.end() ? in_a->second.time.waits : 0;
    const auto in_b = side_b.pooled.find(match);
    move.waits_b = in_b != side_b.pooled.end() ? in_b->second.time.waits : 0;
    move.waits_per_s = figure_move(rate_estimate(side_a, match, Rate::kWaits),
                                   rate_estimate(side_b, match, Rate::kWaits));
    move.aas = figure_move(rate_estimate(side_a, match, Rate::kTime),
                           rate_estimate(side_b, match, Rate::kTime));
    move.p99_s = figure_move(p99_estimate(side_a, match), p99_estimate(side_b, match));
    for (const auto& [figure, name] :
         {std::pair{&move.waits_per_s, "waits"}, std::pair{&move.aas, "time"},
          std::pair{&move.p99_s, "p99"}}) {
      if (figure->significant.value_or(false)) move.moved.emplace_back(name);
    }
    moves.push_back(std::move(move));
  }
  return moves;
}

}  // namespace pgwaitprof::model::compare_detail
