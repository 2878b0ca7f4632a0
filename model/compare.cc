// A/B comparison of runs: which differences are beyond run-to-run noise, and which wait events
// moved (the decisions; exporters/render/compare_render.cc renders them). Used by `pgwaitprof
// compare` on two runs, two sets of runs or two matrix directories.
#include "model/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "model/matrix_aggregate.h"
#include "model/moves.h"
#include "model/run_estimates.h"
#include "model/statistics.h"
#include "model/wait_events.h"

namespace pgwaitprof::model {

namespace {

constexpr size_t kTopWaits = 15;

bool counts(const Run& run) {
  return run.status == RunStatus::kCompleted && run.loadgen.has_value() && run.loadgen->tps > 0;
}

// The figure compared: tps, or a fixed-work run's elapsed seconds.
double figure(const Run& run, Metric metric) { return run_figure(run, metric).value_or(0); }

// Duration when every run that counts did a fixed amount of work.
Metric metric_of(const std::vector<Run>& a, const std::vector<Run>& b) {
  bool any = false;
  for (const auto* side : {&a, &b}) {
    for (const auto& run : *side) {
      if (!counts(run)) continue;
      if (!run_figure(run, Metric::kDuration)) return Metric::kTps;
      any = true;
    }
  }
  return any ? Metric::kDuration : Metric::kTps;
}

// Both sides' runs of one cell.
struct CellRuns {
  std::vector<const Run*> a, b;
  int attempted_a = 0, attempted_b = 0;  // including runs that did not complete
};

// The noise between repeats, pooled over every cell side with two or more runs: what a cell
// with a single run per side is planned with.
std::optional<double> pooled_log_sd(const std::map<std::pair<std::string, int>, CellRuns>& cells,
                                    Metric metric) {
  double squares = 0;
  double degrees = 0;
  for (const auto& [key, runs] : cells) {
    for (const auto* side : {&runs.a, &runs.b}) {
      if (side->size() < 2) continue;
      double mean = 0;
      for (const auto* run : *side) mean += std::log(figure(*run, metric));
      mean /= static_cast<double>(side->size());
      for (const auto* run : *side) {
        squares += std::pow(std::log(figure(*run, metric)) - mean, 2);
      }
      degrees += static_cast<double>(side->size() - 1);
    }
  }
  if (degrees == 0) return std::nullopt;
  return std::sqrt(squares / degrees);
}

struct Words {
  const char* up;    // B above A
  const char* down;  // B below A
};

// The repeats of one metric of one cell, and what a lone run per side offers instead.
struct MetricInput {
  std::vector<double> a, b;
  int attempted_a = 0, attempted_b = 0;
  // With one run a side: each run's steady-state mean from batch means over its timeline
  // (tps only; nullopt when the run has no per-interval tps).
  std::optional<MeanEstimate> within_a, within_b;
  BatchMeansOptions options_a, options_b;  // of those runs' intervals
  // With one run a side, why this metric has no within-run test at all ("" for tps).
  std::string no_within_run;
  // With one run a side: the tps spread of the run whose report has the most earlier
  // comparable runs, and whose it is ("A", "B").
  std::optional<RunToRunFigure> spread;
  size_t spread_runs = 0;
  bool spread_of_b = false;
};

SideFigure repeats_figure(const std::vector<double>& values) {
  const auto mean = geometric_mean_interval(values);
  return {mean.value, mean.low, mean.high, false};
}

SideFigure within_run_figure(const std::vector<double>& values,
                             const std::optional<MeanEstimate>& estimate) {
  if (!estimate || !estimate->reliable) return repeats_figure(values);
  const double half_width = estimate->half_width(0.95);
  return {estimate->mean, estimate->mean - half_width, estimate->mean + half_width, true};
}

// A lone run's figure ± t x the sd between its earlier comparable runs.
SideFigure run_to_run_figure(double value, const RunToRunFigure& spread, size_t runs) {
  const double t = student_t_quantile(0.975, static_cast<double>(runs - 1));
  return {value, value - t * spread.sd, value + t * spread.sd, false, true};
}

// Why a lone run per side cannot be tested within runs: "no within-run error: master's run is
// too short for batch means (12 batches of 1 s, 20 needed)"; "" when both can.
std::string within_run_gap(const MetricInput& input, const std::string& label_a,
                           const std::string& label_b) {
  std::vector<std::string> gaps;
  struct Side {
    const std::optional<MeanEstimate>* estimate;
    const BatchMeansOptions* options;
    const std::string* label;
  };
  for (const auto& [estimate, options, label] :
       {Side{&input.within_a, &input.options_a, &label_a},
        Side{&input.within_b, &input.options_b, &label_b}}) {
    if (!*estimate) {
      gaps.push_back(fmt::format("{}'s run has no per-interval tps", *label));
    } else if (!((*estimate)->mean > 0)) {
      gaps.push_back(fmt::format("{}'s run completed no transaction in its steady state", *label));
    } else if (!(*estimate)->reliable) {
      gaps.push_back(fmt::format("{}'s run is too short for batch means ({})", *label,
                                 unreliable_reason(**estimate, *options)));
    }
  }
  if (gaps.empty()) return "";
  return fmt::format("no within-run error: {}", fmt::join(gaps, "; "));
}

std::string repeats_text(const AbTest& planning) {
  if (planning.repeats_needed_for_observed) {
    return fmt::format("{} + {} repeats; {} per side would test a {:+.1f}% change",
                       planning.repeats_a, planning.repeats_b,
                       *planning.repeats_needed_for_observed, planning.change_percent);
  }
  return fmt::format("{} + {} repeats give no noise estimate: run 3 or more per side",
                     planning.repeats_a, planning.repeats_b);
}

void set_verdict(MetricTest& metric, const Words& words) {
  const auto& test = *metric.test;
  if (!test.significant) {
    metric.verdict = "no significant change";
  } else {
    metric.verdict = test.change_percent > 0 ? words.up : words.down;
  }
}

MetricTest metric_test(MetricInput input, const Words& words, std::optional<double> assumed_log_sd,
                       const std::string& label_a, const std::string& label_b) {
  MetricTest metric;
  metric.a = std::move(input.a);
  metric.b = std::move(input.b);
  metric.median_a = median(metric.a);
  metric.median_b = median(metric.b);
  if (metric.a.empty() || metric.b.empty()) {
    const bool missing_a = metric.a.empty();
    const int attempted = missing_a ? input.attempted_a : input.attempted_b;
    metric.verdict = attempted > 0
                         ? fmt::format("no completed runs in {}", missing_a ? label_a : label_b)
                         : fmt::format("only in {}", missing_a ? label_b : label_a);
    if (!metric.a.empty()) metric.side_a = repeats_figure(metric.a);
    if (!metric.b.empty()) metric.side_b = repeats_figure(metric.b);
    return metric;
  }
  AbTestOptions options;
  options.assumed_log_sd = assumed_log_sd;
  metric.test = welch_log_test(metric.a, metric.b, options);
  metric.side_a = repeats_figure(metric.a);
  metric.side_b = repeats_figure(metric.b);
  if (metric.test->p_value) {
    set_verdict(metric, words);
    return metric;
  }
  const bool single_runs = metric.a.size() == 1 && metric.b.size() == 1;
  if (single_runs && input.spread && input.spread->value > 0) {
    const double log_sd = input.spread->sd / input.spread->value;
    metric.test = run_to_run_log_test(metric.a.front(), metric.b.front(), log_sd,
                                      static_cast<double>(input.spread_runs - 1), options);
    auto& side = input.spread_of_b ? metric.side_b : metric.side_a;
    side = run_to_run_figure(input.spread_of_b ? metric.b.front() : metric.a.front(), *input.spread,
                             input.spread_runs);
    set_verdict(metric, words);
    metric.detail = fmt::format("run-to-run noise from {}'s {} earlier comparable runs",
                                input.spread_of_b ? label_b : label_a, input.spread_runs);
    return metric;
  }
  if (single_runs && input.no_within_run.empty()) {
    metric.side_a = within_run_figure(metric.a, input.within_a);
    metric.side_b = within_run_figure(metric.b, input.within_b);
    const std::string gap = within_run_gap(input, label_a, label_b);
    if (gap.empty()) {
      metric.test = within_run_log_test(*input.within_a, *input.within_b, options);
      set_verdict(metric, words);
      metric.detail = "within-run noise only, blind to run-to-run noise: repeat to trust it";
      return metric;
    }
    metric.verdict = "no verdict";
    metric.detail = gap + "; " + repeats_text(*metric.test);
    return metric;
  }
  metric.verdict = "no verdict";
  metric.detail = repeats_text(*metric.test);
  if (single_runs) metric.detail = input.no_within_run + "; " + metric.detail;
  return metric;
}

// AAS per wait class of a run's steady state.
std::map<std::string, double> class_aas(const Run& run) {
  const auto profile = window_profile(run, steady_window(run));
  std::map<std::string, double> aas;
  if (profile.snapshots() == 0) return aas;
  for (const auto& [wait_class, count] : profile.by_wait_class()) {
    aas[wait_class] = static_cast<double>(count) / static_cast<double>(profile.snapshots());
  }
  return aas;
}

std::vector<ClassShift> class_shifts(const CellRuns& runs) {
  auto mean_of = [](const std::vector<const Run*>& side) {
    std::map<std::string, double> sums;
    size_t sampled = 0;
    for (const auto* run : side) {
      const auto aas = class_aas(*run);
      if (aas.empty()) continue;
      ++sampled;
      for (const auto& [wait_class, value] : aas) sums[wait_class] += value;
    }
    for (auto& [wait_class, value] : sums)
      value /= static_cast<double>(std::max<size_t>(sampled, 1));
    return sums;
  };
  const auto a = mean_of(runs.a);
  const auto b = mean_of(runs.b);
  std::set<std::string> names;
  for (const auto& [name, value] : a) names.insert(name);
  for (const auto& [name, value] : b) names.insert(name);
  std::vector<ClassShift> shifts;
  for (const auto& name : names) {
    shifts.push_back({name, a.contains(name) ? a.at(name) : 0, b.contains(name) ? b.at(name) : 0});
  }
  return shifts;
}

CompareCell make_cell(const std::string& variant, int clients, const CellRuns& runs,
                      std::optional<double> assumed_log_sd, const Comparison& comparison) {
  CompareCell cell;
  cell.variant = variant;
  cell.clients = clients;
  MetricInput tps, p99;
  tps.attempted_a = p99.attempted_a = runs.attempted_a;
  tps.attempted_b = p99.attempted_b = runs.attempted_b;
  std::vector<double> latency_a, latency_b;
  auto collect = [&](const std::vector<const Run*>& side, std::vector<double>& tps_values,
                     std::vector<double>& p99_values, std::vector<double>& latency) {
    for (const auto* run : side) {
      tps_values.push_back(figure(*run, comparison.metric));
      if (std::isfinite(run->loadgen->latency_avg.count()))
        latency.push_back(run->loadgen->latency_avg.count());
      if (run->latency && std::isfinite(run->latency->p99.count()) &&
          run->latency->p99 > base::Milliseconds(0)) {
        p99_values.push_back(run->latency->p99.count());
      }
    }
  };
  collect(runs.a, tps.a, p99.a, latency_a);
  collect(runs.b, tps.b, p99.b, latency_b);
  const bool duration = comparison.metric == Metric::kDuration;
  if (runs.a.size() == 1 && runs.b.size() == 1) {
    if (duration) {
      tps.no_within_run = "single runs: a fixed-work run's elapsed time has no within-run error";
    } else {
      const auto& run_a = *runs.a.front();
      const auto& run_b = *runs.b.front();
      tps.within_a = tps_estimate(run_a, steady_window(run_a));
      tps.within_b = tps_estimate(run_b, steady_window(run_b));
      tps.options_a = batch_options(run_a);
      tps.options_b = batch_options(run_b);
      for (const auto* run : {&run_a, &run_b}) {
        if (!run->run_to_run || run->run_to_run->figures.empty()) continue;
        const auto& spread = *run->run_to_run;
        if (spread.runs <= tps.spread_runs || spread.figures.front().name != "tps") continue;
        tps.spread = spread.figures.front();
        tps.spread_runs = spread.runs;
        tps.spread_of_b = run == &run_b;
      }
    }
  }
  // A run's p99 is a quantile of all its transactions, and report.json keeps per-interval
  // percentiles, not the histograms that batch p99s would be merged from.
  p99.no_within_run = "single runs: p99 has no within-run error";
  cell.tps =
      metric_test(std::move(tps), duration ? Words{"slower", "faster"} : Words{"faster", "slower"},
                  assumed_log_sd, comparison.label_a, comparison.label_b);
  if (!p99.a.empty() || !p99.b.empty()) {
    cell.p99_ms = metric_test(std::move(p99), {"worse", "better"}, std::nullopt, comparison.label_a,
                              comparison.label_b);
  }
  cell.latency_a = base::Milliseconds(median(latency_a));
  cell.latency_b = base::Milliseconds(median(latency_b));
  cell.classes = class_shifts(runs);
  return cell;
}

// ---- wait events ----

// Old and new names of one event match (WALWriteLock and LWLock | WALWrite): the key is the
// canonical name, the label the one the run used.
std::string match_key(const WaitKey& key) {
  if (key.wait_event_type == kCpu) return kCpu;
  if (auto canonical = canonical_wait_event(display_name(key))) {
    return canonical->first + " | " + canonical->second;
  }
  return display_name(key);
}

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
    if (move.aas_a > 0) {
      move.relative_pct = move.delta / move.aas_a * 100;
    } else if (move.aas_b > 0) {
      move.relative_pct = std::numeric_limits<double>::infinity();  // new on side B
    }
    move.significant = significant_move(a, b);
    moves.push_back(std::move(move));
  }
  return moves;
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

// Each side as a matrix (its scalability fitted per variant), the variants paired by name, or
// the only variant of each side with the other's when `cross_variant` names the pair.
std::vector<ScalabilityShift> scalability_shifts(const std::vector<Run>& a,
                                                 const std::vector<Run>& b,
                                                 const std::string& cross_variant) {
  const auto table_a = build_matrix_table(a);
  const auto table_b = build_matrix_table(b);
  std::vector<ScalabilityShift> shifts;
  for (const auto& side_a : table_a.scalability) {
    for (const auto& side_b : table_b.scalability) {
      if (cross_variant.empty() && side_a.variant != side_b.variant) continue;
      if (!side_a.fit.fitted || !side_b.fit.fitted) continue;
      shifts.push_back(
          {.variant = cross_variant.empty() ? side_a.variant : cross_variant,
           .a = side_a.fit,
           .b = side_b.fit,
           .sigma = compare_figures(side_a.fit.sigma, side_b.fit.sigma),
           .kappa = compare_figures(side_a.fit.kappa, side_b.fit.kappa),
           .peak_clients = compare_figures(side_a.fit.peak_clients, side_b.fit.peak_clients)});
    }
  }
  return shifts;
}

}  // namespace

Comparison compare_runs(const std::vector<Run>& a, const std::vector<Run>& b, std::string label_a,
                        std::string label_b) {
  Comparison comparison;
  comparison.label_a = std::move(label_a);
  comparison.label_b = std::move(label_b);
  comparison.metric = metric_of(a, b);

  // Comparing the "master" matrix with the "patched" one: the variant names differ by
  // construction, so cells are matched by client count alone.
  std::set<std::string> variants_a, variants_b;
  for (const auto& run : a) variants_a.insert(run.variant);
  for (const auto& run : b) variants_b.insert(run.variant);
  const bool cross_variant = variants_a.size() == 1 && variants_b.size() == 1 &&
                             *variants_a.begin() != *variants_b.begin();
  auto variant_text = [](const std::string& variant) {
    return variant.empty() ? "(none)" : variant;
  };
  const std::string cross_text = cross_variant
                                     ? fmt::format("{} vs {}", variant_text(*variants_a.begin()),
                                                   variant_text(*variants_b.begin()))
                                     : "";

  std::vector<std::string> variant_order;
  std::map<std::pair<std::string, int>, CellRuns> cells;
  auto add = [&](const Run& run, bool side_a) {
    const std::string variant = cross_variant ? cross_text : run.variant;
    if (std::find(variant_order.begin(), variant_order.end(), variant) == variant_order.end()) {
      variant_order.push_back(variant);
    }
    auto& runs = cells[{variant, run.clients}];
    ++(side_a ? runs.attempted_a : runs.attempted_b);
    if (counts(run)) (side_a ? runs.a : runs.b).push_back(&run);
  };
  for (const auto& run : a) add(run, true);
  for (const auto& run : b) add(run, false);

  const auto assumed = pooled_log_sd(cells, comparison.metric);
  for (const auto& variant : variant_order) {
    for (const auto& [key, runs] : cells) {  // map order: clients ascending within a variant
      if (key.first != variant) continue;
      comparison.cells.push_back(make_cell(variant, key.second, runs, assumed, comparison));
      auto moves = cell_wait_moves(variant, key.second, runs);
      comparison.waits.insert(comparison.waits.end(), moves.begin(), moves.end());
      auto functions = cell_function_moves(variant, key.second, runs);
      comparison.functions.insert(comparison.functions.end(), functions.begin(), functions.end());
    }
  }
  std::stable_sort(comparison.functions.begin(), comparison.functions.end(),
                   [](const FunctionMove& x, const FunctionMove& y) {
                     return std::abs(x.delta) > std::abs(y.delta);
                   });
  if (comparison.functions.size() > kTopWaits) comparison.functions.resize(kTopWaits);
  std::stable_sort(
      comparison.waits.begin(), comparison.waits.end(),
      [](const WaitMove& x, const WaitMove& y) { return std::abs(x.delta) > std::abs(y.delta); });
  if (comparison.waits.size() > kTopWaits) comparison.waits.resize(kTopWaits);
  if (comparison.metric == Metric::kTps) {
    comparison.scalability = scalability_shifts(a, b, cross_variant ? cross_text : "");
  }
  return comparison;
}

SplitSides split_by_attribute(std::vector<Run> runs, const std::string& attribute) {
  std::vector<std::string> values;
  for (const auto& run : runs) {
    const auto value = run_attribute(run, attribute);
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  if (values.size() != 2) {
    throw std::invalid_argument(
        fmt::format("--split-by {} needs runs with exactly two values of {}, found {}{}", attribute,
                    attribute, values.size(),
                    values.empty() ? "" : fmt::format(" (\"{}\")", fmt::join(values, "\", \""))));
  }
  SplitSides sides;
  sides.label_a = fmt::format("{} {}", attribute, values[0].empty() ? "?" : values[0]);
  sides.label_b = fmt::format("{} {}", attribute, values[1].empty() ? "?" : values[1]);
  for (auto& run : runs) {
    (run_attribute(run, attribute) == values[0] ? sides.a : sides.b).push_back(std::move(run));
  }
  return sides;
}

}  // namespace pgwaitprof::model
