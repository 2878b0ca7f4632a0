// A/B comparison of a cell's throughput and p99 latency (Welch's t on the log scale across
// repeats; for lone runs the run-to-run or within-run test) and its wait profile by class: the
// tps/latency part of model/compare.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "model/compare_detail.h"
#include "model/run_estimates.h"
#include "model/statistics.h"

namespace pgwaitprof::model::compare_detail {

namespace {

// The figure compared: tps, or a fixed-work run's elapsed seconds.
double figure(const Run& run, Metric metric) { return run_figure(run, metric).value_or(0); }

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace pgwaitprof::model::compare_detail
