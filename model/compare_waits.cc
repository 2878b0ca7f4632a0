// A/B comparison of what the runs waited on and ran: the wait events whose AAS moved and the
// functions whose share of the client backends' on-CPU samples moved, each with the spread
// between repeats, or a lone run's batch means; and the two statistics every part of compare
// tests a move with (between_repeats, significant_move).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "model/compare_detail.h"
#include "model/run_estimates.h"
#include "model/statistics.h"
#include "model/wait_events.h"

namespace pgwaitprof::model::compare_detail {

// Old and new names of one event match (WALWriteLock and LWLock | WALWrite): the key is the
// canonical name, the label the one the run used.
std::string match_key(const WaitKey& key) {
  if (key.wait_event_type == kCpu) return kCpu;
  if (auto canonical = canonical_wait_event(display_name(key))) {
    return canonical->first + " | " + canonical->second;
  }
  return display_name(key);
}

double relative_change_pct(double a, double b) {
  if (a > 0) return (b - a) / a * 100;
  if (b > 0) return std::numeric_limits<double>::infinity();  // new on side B
  return 0;
}

namespace {

struct SideWaits {
  std::map<std::string, std::string> labels;       // match key -> label
  std::map<std::string, std::vector<double>> aas;  // match key -> AAS per sampled run
  std::vector<const Run*> runs;                    // the sampled runs
};

SideWaits side_waits(const std::vector<const Run*>& runs) {
  SideWaits side;
  for (const auto* run : runs) {
    const auto profile = window_profile(*run, steady_window(*run));
    if (profile.snapshots() == 0) continue;
    side.runs.push_back(run);
  }
  for (size_t index = 0; index < side.runs.size(); ++index) {
    const auto profile = window_profile(*side.runs[index], steady_window(*side.runs[index]));
    std::map<std::string, uint64_t> counts;
    for (const auto& [key, count] : profile.counts()) {
      if (is_idle(key)) continue;
      const auto match = match_key(key);
      counts[match] += count;
      side.labels.emplace(match, display_name(key));
    }
    for (const auto& [match, count] : counts) {
      auto& values = side.aas[match];
      values.resize(side.runs.size(), 0.0);
      values[index] = static_cast<double>(count) / static_cast<double>(profile.snapshots());
    }
  }
  for (auto& [match, values] : side.aas) values.resize(side.runs.size(), 0.0);
  return side;
}

SideEstimate side_estimate(const SideWaits& side, const std::string& match) {
  const auto found = side.aas.find(match);
  const size_t runs = side.runs.size();
  if (runs == 0) return {};
  const auto repeats =
      between_repeats(found == side.aas.end() ? std::vector<double>(runs, 0.0) : found->second);
  if (runs >= 2) return repeats;
  const double mean = repeats.mean;
  const auto& run = *side.runs.front();
  const auto estimate = estimate_keys(run, steady_window(run), false, [&](const WaitKey& key) {
    return !is_idle(key) && match_key(key) == match;
  });
  if (!estimate.aas.reliable) return {mean};
  return {mean, estimate.aas.standard_error, estimate.aas.degrees_of_freedom};
}

// One side's runs with a CPU profile: each run's client backends' share per function.
struct SideFunctions {
  std::vector<const Run*> runs;
  std::map<std::string, std::vector<double>> shares;  // label -> one value per run
};

SideFunctions side_functions(const std::vector<const Run*>& runs) {
  SideFunctions side;
  for (const Run* run : runs) {
    if (!run->cpu_profile) continue;
    const auto group = run->cpu_profile->groups.find(std::string(kCpuClientBackends));
    if (group == run->cpu_profile->groups.end() || group->second.samples == 0) continue;
    side.runs.push_back(run);
    for (const auto& function : group->second.self) {
      auto& values = side.shares[function_label(function)];
      values.resize(side.runs.size(), 0.0);
      values.back() =
          static_cast<double>(function.samples) / static_cast<double>(group->second.samples);
    }
  }
  for (auto& [label, values] : side.shares) values.resize(side.runs.size(), 0.0);
  return side;
}

// A lone run's share of one function with its batch-means error over the intervals the profile
// kept top functions of. A function that was often outside an interval's top (the intervals
// hold less than 90 % of its samples) has no error: zeros would understate its spread.
SideEstimate lone_run_share(const Run& run, const std::string& label, double mean) {
  std::vector<IntervalCounts> intervals;
  uint64_t counted = 0, samples = 0;
  for (const auto& [index, interval] : run.cpu_profile->intervals) {
    if (interval.client_samples == 0) continue;
    IntervalCounts counts;
    counts.samples = interval.client_samples;
    counts.snapshots = interval.client_samples;
    for (const auto& function : interval.top) {
      if (function_label(function) == label) counts.count += function.samples;
    }
    counted += counts.count;
    samples += counts.samples;
    intervals.push_back(counts);
  }
  if (static_cast<double>(counted) < 0.9 * mean * static_cast<double>(samples)) return {mean};
  const auto estimate = estimate_wait_key(intervals, batch_options(run));
  if (!estimate.share.reliable) return {mean};
  return {mean, estimate.share.standard_error, estimate.share.degrees_of_freedom};
}

SideEstimate function_estimate(const SideFunctions& side, const std::string& label) {
  const auto found = side.shares.find(label);
  const size_t runs = side.runs.size();
  const auto estimate =
      between_repeats(found == side.shares.end() ? std::vector<double>(runs, 0.0) : found->second);
  return runs == 1 ? lone_run_share(*side.runs.front(), label, estimate.mean) : estimate;
}

}  // namespace

std::vector<WaitMove> cell_wait_moves(const std::string& variant, int clients,
                                      const CellRuns& runs) {
  const SideWaits side_a = side_waits(runs.a);
  const SideWaits side_b = side_waits(runs.b);
  if (side_a.runs.empty() || side_b.runs.empty()) return {};
  std::set<std::string> matches;
  for (const auto& [match, values] : side_a.aas) matches.insert(match);
  for (const auto& [match, values] : side_b.aas) matches.insert(match);
  std::vector<WaitMove> moves;
  for (const auto& match : matches) {
    WaitMove move;
    move.variant = variant;
    move.clients = clients;
    move.wait = side_a.labels.contains(match) ? side_a.labels.at(match) : side_b.labels.at(match);
    const auto a = side_estimate(side_a, match);
    const auto b = side_estimate(side_b, match);
    move.aas_a = a.mean;
    move.stderr_a = a.standard_error;
    move.aas_b = b.mean;
    move.stderr_b = b.standard_error;
    move.delta = move.aas_b - move.aas_a;
    move.relative_pct = relative_change_pct(move.aas_a, move.aas_b);
    move.significant = significant_move(a, b);
    moves.push_back(std::move(move));
  }
  return moves;
}

std::vector<FunctionMove> cell_function_moves(const std::string& variant, int clients,
                                              const CellRuns& runs) {
  const SideFunctions side_a = side_functions(runs.a);
  const SideFunctions side_b = side_functions(runs.b);
  if (side_a.runs.empty() || side_b.runs.empty()) return {};
  std::set<std::string> labels;
  for (const auto& [label, values] : side_a.shares) labels.insert(label);
  for (const auto& [label, values] : side_b.shares) labels.insert(label);
  std::vector<FunctionMove> moves;
  for (const auto& label : labels) {
    const auto a = function_estimate(side_a, label);
    const auto b = function_estimate(side_b, label);
    moves.push_back({.variant = variant,
                     .clients = clients,
                     .function = label,
                     .share_a = a.mean,
                     .share_b = b.mean,
                     .stderr_a = a.standard_error,
                     .stderr_b = b.standard_error,
                     .delta = b.mean - a.mean,
                     .significant = significant_move(a, b)});
  }
  return moves;
}

}  // namespace pgwaitprof::model::compare_detail
