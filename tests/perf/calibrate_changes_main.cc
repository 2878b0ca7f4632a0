// pgwaitprof_calibrate_changes A.json STEP.json: the figures of tests/perf/calibrate_changes.sh.
// A.json is `runs --format json` of an A/A history (identical runs), STEP.json of a history with
// a real step. For the change points (store/trend_changes.h's series and method) and the MAD
// rule (store/trend.h) side by side, the change points by E-Divisive alone (as before the end
// test of model/end_change.h) and with the end test (trend's default):
//   - false alarms per 100 runs per series, on the A/A history and on block-bootstrap histories
//     resampled from it (blocks of 5 runs, circular), each analysed after every run as the
//     daemon does; an alarm is a change point at a run no earlier analysis of that history had
//     named (the MAD rule: a flagged run);
//   - detection of tps steps of -5, -10 and -20 % (and p99 +5, +10, +20 %) after a random run of
//     resampled histories: the share found within 3 and within 10 runs of the new level, and
//     the median delay (runs of the new level until the first alarm at or after the step);
//     beside them the bound this noise sets (bound_within_3: a test told where the step is);
//   - per series, the smallest step found within 3 runs in 90 % of the resampled histories at
//     the default false-positive probability (a bisection over a grid of step sizes): what this
//     host's noise allows;
//   - the real step (each change point with the three waits whose time a transaction moved
//     most), and the time to analyse 10,000 runs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <vector>

#include "model/change_points.h"
#include "model/statistics.h"
#include "store/run_summary.h"
#include "store/trend.h"
#include "store/trend_changes.h"

namespace pgwaitprof {
namespace {

using store::RunSummary;

constexpr size_t kBlock = 5;
constexpr size_t kResampled = 200;
constexpr size_t kHistory = 40;
constexpr size_t kAfter = 10;

std::vector<RunSummary> load(const char* path) {
  std::ifstream in(path);
  const auto json = nlohmann::json::parse(in);
  std::vector<RunSummary> runs;
  for (const auto& item : json) {
    auto run = store::summary_from_json(item);
    if (run.status == "completed" && run.tps > 0) runs.push_back(run);
  }
  std::sort(runs.begin(), runs.end(),
            [](const RunSummary& a, const RunSummary& b) { return a.started_at < b.started_at; });
  return runs;
}

using Metric = std::pair<std::string, std::function<double(const RunSummary&)>>;

std::vector<Metric> metrics_of(const std::vector<RunSummary>& runs) {
  std::vector<Metric> metrics = {{"tps", [](const RunSummary& run) { return run.tps; }},
                                 {"p99 ms", [](const RunSummary& run) { return run.p99_ms; }}};
  std::map<std::string, double> largest;
  for (const auto& run : runs) {
    for (const auto& [wait, share] : run.wait_shares)
      largest[wait] = std::max(largest[wait], share);
  }
  for (const auto& [wait, share] : largest) {
    if (share < 0.05) continue;
    metrics.push_back(
        {"AAS " + wait, [wait](const RunSummary& run) { return store::wait_aas(run, wait); }});
  }
  return metrics;
}

// The change-point methods compared: E-Divisive alone (before the end test) and with it.
struct Method {
  const char* name;
  bool end_test;
};
constexpr Method kMethods[] = {{"E-Divisive", false}, {"E-Div+end", true}};

// As trend searches them (tps and p99 on the log scale, the end test for a regression).
model::ChangePointOptions options_for(const std::string& metric, const Method& method) {
  model::ChangePointOptions options;
  if (!method.end_test) options.end_runs = 0;
  return store::method_for(metric, options);
}

std::vector<double> values_of(const std::vector<RunSummary>& runs, const Metric& metric) {
  std::vector<double> values;
  for (const auto& run : runs) values.push_back(metric.second(run));
  return values;
}

// Alarms of the change points when the series is analysed after every run: (run index of the
// alarm's analysis, change point index).
std::vector<std::pair<size_t, size_t>> change_alarms(const std::vector<double>& series,
                                                     const model::ChangePointOptions& options) {
  std::set<size_t> named;
  std::vector<std::pair<size_t, size_t>> alarms;
  const size_t first = model::runs_needed_for(options);
  for (size_t length = first; length <= series.size(); ++length) {
    const auto found =
        model::find_change_points(std::span<const double>(series).first(length), options);
    for (const auto& point : found.points) {
      if (named.insert(point.index).second) alarms.emplace_back(length - 1, point.index);
    }
  }
  return alarms;
}

// The MAD rule's flags on the series (as tps: the series' value, no interval of its own).
std::vector<size_t> mad_alarms(const std::vector<double>& series) {
  std::vector<RunSummary> runs;
  for (size_t index = 0; index < series.size(); ++index) {
    RunSummary run;
    run.id = fmt::format("r{:05d}", index);
    run.started_at = run.id;
    run.status = "completed";
    run.tps = series[index];
    run.tps_half_width = 0;
    runs.push_back(run);
  }
  std::vector<size_t> flagged;
  const auto trend = store::build_trend(runs);
  for (size_t index = 0; index < trend.points.size(); ++index) {
    if (!trend.points[index].flag.empty()) flagged.push_back(index);
  }
  return flagged;
}

std::vector<RunSummary> resample(const std::vector<RunSummary>& runs, size_t length,
                                 std::mt19937_64& engine) {
  std::vector<RunSummary> history;
  while (history.size() < length) {
    const size_t start = model::uniform_index(engine, runs.size());
    for (size_t offset = 0; offset < kBlock && history.size() < length; ++offset) {
      history.push_back(runs[(start + offset) % runs.size()]);
    }
  }
  return history;
}

void false_alarms(const std::vector<RunSummary>& runs, const std::vector<Metric>& metrics) {
  fmt::print(
      "\nfalse alarms per 100 runs per series (A/A: {} real runs; resampled: {} histories "
      "of {} runs, blocks of {}), change points: {} | {}\n",
      runs.size(), kResampled, kHistory, kBlock, kMethods[0].name, kMethods[1].name);
  // The series column as wide as its longest name ("AAS Kernel | sleeping (no wait event)").
  size_t width = 6;
  for (const auto& metric : metrics) width = std::max(width, metric.first.size());
  fmt::print("{:<{}} {:>18} {:>10} {:>23} {:>15}\n", "series", width, "real: change", "real: MAD",
             "resampled: change", "resampled: MAD");
  for (const auto& metric : metrics) {
    const auto series = values_of(runs, metric);
    if (std::any_of(series.begin(), series.end(), [](double v) { return !std::isfinite(v); })) {
      fmt::print("{:<{}} (not every run has it)\n", metric.first, width);
      continue;
    }
    double real_change[2], changes[2] = {0, 0};
    for (size_t method = 0; method < 2; ++method) {
      real_change[method] =
          100.0 * change_alarms(series, options_for(metric.first, kMethods[method])).size() /
          series.size();
    }
    const double real_mad = 100.0 * mad_alarms(series).size() / series.size();
    std::mt19937_64 engine(49);
    size_t mads = 0;
    for (size_t history = 0; history < kResampled; ++history) {
      const auto resampled = values_of(resample(runs, kHistory, engine), metric);
      for (size_t method = 0; method < 2; ++method) {
        changes[method] +=
            change_alarms(resampled, options_for(metric.first, kMethods[method])).size();
      }
      mads += mad_alarms(resampled).size();
    }
    const double total = kResampled * kHistory;
    fmt::print("{:<{}} {:>8.2f} | {:>7.2f} {:>10.2f} {:>11.2f} | {:>9.2f} {:>15.2f}\n",
               metric.first, width, real_change[0], real_change[1], real_mad,
               100.0 * changes[0] / total, 100.0 * changes[1] / total, 100.0 * mads / total);
  }
}

// What this noise allows, as a reference bound: the share of the same resampled histories (the
// same seed as detection()'s) whose step a one-sided z-test finds at the third run of the new
// level when told where the step is and the noise's sd (of the whole A/A history, on the scale
// trend searches: logs of tps and p99), at the whole default false-positive probability
// (0.01) in one test, where a real method spends it over every run and every place a step may
// be. The mean of the 3 runs after against the mean of all runs before. (Not a strict bound: a
// method may also find a step at its first or second run, or by the luck of noise near it.)
double bound_within_3(const std::vector<RunSummary>& runs, const Metric& metric, double sign,
                      double step) {
  std::vector<double> all;
  for (const double value : values_of(runs, metric)) all.push_back(std::log(value));
  const double sd = model::sample_sd(all);
  const double critical = model::normal_quantile(1 - 0.01);
  std::mt19937_64 engine(4949);
  size_t found = 0;
  for (size_t history = 0; history < kResampled; ++history) {
    const size_t before = 15 + model::uniform_index(engine, 16);
    auto series = values_of(resample(runs, before + kAfter, engine), metric);
    for (size_t index = before; index < series.size(); ++index) series[index] *= 1 + sign * step;
    double mean_before = 0, mean_after = 0;
    for (size_t index = 0; index < before; ++index) mean_before += std::log(series[index]);
    for (size_t index = before; index < before + 3; ++index) mean_after += std::log(series[index]);
    mean_before /= static_cast<double>(before);
    mean_after /= 3;
    const double z = sign * (mean_after - mean_before) /
                     (sd * std::sqrt(1.0 / 3 + 1.0 / static_cast<double>(before)));
    found += z > critical;
  }
  return static_cast<double>(found) / kResampled;
}

struct Detection {
  size_t within_3 = 0, within_10 = 0;
  std::vector<double> delays;
};

void detection(const std::vector<RunSummary>& runs, const Metric& metric, double sign) {
  fmt::print(
      "\ndetection of steps in {} ({} histories each: 15-30 runs, then {} of the new level)\n",
      metric.first, kResampled, kAfter);
  fmt::print("{:>6} {:>11} {:>24} {:>10} {:>10} {:>16}\n", "step", "method", "found <=3 runs",
             "found <=10", "delay", "MAD: <=3 | <=10 | delay");
  for (const double step : {0.05, 0.10, 0.20}) {
    for (const auto& method : kMethods) {
      const auto options = options_for(metric.first, method);
      std::mt19937_64 engine(4949);
      Detection change, mad;
      for (size_t history = 0; history < kResampled; ++history) {
        const size_t before = 15 + model::uniform_index(engine, 16);
        auto series = values_of(resample(runs, before + kAfter, engine), metric);
        for (size_t index = before; index < series.size(); ++index) {
          series[index] *= 1 + sign * step;
        }
        for (const auto& [at, index] : change_alarms(series, options)) {
          if (index + 2 < before || at < before) continue;  // a false alarm, not the step
          const double delay = static_cast<double>(at - before + 1);
          change.delays.push_back(delay);
          change.within_3 += delay <= 3;
          change.within_10 += 1;
          break;
        }
        for (const size_t flagged : mad_alarms(series)) {
          if (flagged < before) continue;
          const double delay = static_cast<double>(flagged - before + 1);
          mad.delays.push_back(delay);
          mad.within_3 += delay <= 3;
          mad.within_10 += 1;
          break;
        }
      }
      const auto percent = [](size_t count) { return 100.0 * count / kResampled; };
      fmt::print("{:>5.0f}% {:>11} {:>23.1f}% {:>9.1f}% {:>10.1f} {:>6.1f}% | {:.1f}% | {:.1f}\n",
                 100 * step, method.name, percent(change.within_3), percent(change.within_10),
                 change.delays.empty() ? NAN : model::median(change.delays), percent(mad.within_3),
                 percent(mad.within_10), mad.delays.empty() ? NAN : model::median(mad.delays));
    }
    fmt::print(
        "{:>5.0f}% {:>11} {:>23.1f}%   (a z-test told the step's run and the noise's sd: "
        "what this noise allows)\n",
        100 * step, "bound", 100 * bound_within_3(runs, metric, sign, step));
  }
}

// Whether a step applied after run `before` of `series` is found within 3 runs of the new level:
// a change point at or just before the step (as detection() counts it) in one of the analyses
// after 1, 2 and 3 runs of it.
bool found_within_3(const std::vector<double>& series, size_t before,
                    const model::ChangePointOptions& options) {
  for (size_t length = before + 1; length <= before + 3 && length <= series.size(); ++length) {
    const auto found =
        model::find_change_points(std::span<const double>(series).first(length), options);
    for (const auto& point : found.points) {
      if (point.index + 2 >= before) return true;
    }
  }
  return false;
}

// The share of the resampled histories (the same ones for every step) in which a step of
// `step` (relative; a fall when `sign` is -1) is found within 3 runs.
double power_at(const std::vector<RunSummary>& runs, const Metric& metric, double sign, double step,
                const Method& method) {
  const auto options = options_for(metric.first, method);
  std::mt19937_64 engine(4950);
  size_t found = 0;
  for (size_t history = 0; history < kResampled; ++history) {
    const size_t before = 15 + model::uniform_index(engine, 16);
    auto series = values_of(resample(runs, before + 3, engine), metric);
    for (size_t index = before; index < series.size(); ++index) series[index] *= 1 + sign * step;
    found += found_within_3(series, before, options);
  }
  return static_cast<double>(found) / kResampled;
}

// The smallest step of a series found within 3 runs in 90 % of the resampled histories by
// `method`: a bisection over a grid of steps (the share found grows with the step), tps falling
// and the other series rising.
void smallest_step(const std::vector<RunSummary>& runs, const Metric& metric, const Method& method,
                   size_t width) {
  const std::vector<double> falls = {0.01, 0.02, 0.03, 0.05, 0.075, 0.10, 0.15,
                                     0.20, 0.30, 0.40, 0.50, 0.60,  0.75, 0.90};
  const std::vector<double> rises = {0.01, 0.02, 0.03, 0.05, 0.075, 0.10, 0.15, 0.20,
                                     0.30, 0.50, 0.75, 1.00, 1.50,  2.00, 3.00, 5.00};
  const double sign = metric.first == "tps" ? -1 : +1;
  const auto& grid = sign < 0 ? falls : rises;
  std::map<size_t, double> rate;
  const auto rate_at = [&](size_t index) {
    if (!rate.contains(index)) rate[index] = power_at(runs, metric, sign, grid[index], method);
    return rate[index];
  };
  const char* direction = sign < 0 ? "fall" : "rise";
  if (rate_at(grid.size() - 1) < 0.9) {
    fmt::print("{:<{}} {:>11} {:>9} {:>13}% {:>9.1f}%\n", metric.first, width, method.name,
               direction, fmt::format(">{:.0f}", 100 * grid.back()),
               100 * rate_at(grid.size() - 1));
    return;
  }
  size_t low = 0, high = grid.size() - 1;  // rate_at(high) >= 0.9
  if (rate_at(0) >= 0.9) high = 0;
  while (high > low + 1 && high > 0) {
    const size_t middle = (low + high) / 2;
    (rate_at(middle) >= 0.9 ? high : low) = middle;
  }
  const std::string smaller =
      high == 0 ? std::string("-")
                : fmt::format("{:g}%: {:.1f}%", 100 * grid[high - 1], 100 * rate_at(high - 1));
  fmt::print("{:<{}} {:>11} {:>9} {:>13g}% {:>9.1f}% {:>18}\n", metric.first, width, method.name,
             direction, 100 * grid[high], 100 * rate_at(high), smaller);
}

// Per series, the smallest step found within 3 runs in 90 % of the resampled histories at the
// default false-positive probability, by each method.
void power(const std::vector<RunSummary>& runs, const std::vector<Metric>& metrics) {
  size_t width = 6;
  for (const auto& metric : metrics) width = std::max(width, metric.first.size());
  fmt::print(
      "\nsmallest step found within 3 runs in 90% of {} resampled histories (15-30 runs, then "
      "the step) at the default false-positive probability\n",
      kResampled);
  fmt::print("{:<{}} {:>11} {:>9} {:>14} {:>10} {:>18}\n", "series", width, "method", "direction",
             "smallest step", "found", "next smaller step");
  for (const auto& metric : metrics) {
    const auto series = values_of(runs, metric);
    if (std::any_of(series.begin(), series.end(), [](double v) { return !std::isfinite(v); })) {
      fmt::print("{:<{}} (not every run has it)\n", metric.first, width);
      continue;
    }
    for (const auto& method : kMethods) smallest_step(runs, metric, method, width);
  }
}

void real_step(const std::vector<RunSummary>& runs) {
  fmt::print("\nreal step: {} runs", runs.size());
  size_t first_on = runs.size();
  for (size_t index = 0; index < runs.size(); ++index) {
    const auto found = runs[index].settings.find("synchronous_commit");
    if (found == runs[index].settings.end() || found->second != "off") {
      first_on = std::min(first_on, index);
    }
  }
  fmt::print(", synchronous_commit on from run {}\n", first_on + 1);
  const auto tps = values_of(runs, metrics_of(runs)[0]);
  for (const auto& method : kMethods) {
    for (const auto& [at, index] : change_alarms(tps, options_for("tps", method))) {
      fmt::print("  {}: change point of tps at run {} named after run {} (delay {} runs)\n",
                 method.name, index + 1, at + 1,
                 static_cast<long>(at) - static_cast<long>(first_on) + 1);
    }
  }
  for (const size_t flagged : mad_alarms(tps)) {
    fmt::print("  MAD rule flags run {}\n", flagged + 1);
  }
  const auto changes = store::find_trend_changes(runs);
  if (changes) {
    for (const auto& change : changes->groups[0].changes) {
      fmt::print(
          "  trend: {} at run {} ({:+.1f}%), the waits that moved most (ms a transaction, "
          "share of DB time):\n",
          change.metric, change.run + 1, 100 * change.point.relative_change);
      for (const auto& shift : change.waits) {
        fmt::print("    {} {:.3f} -> {:.3f} ms, {:.1f}% -> {:.1f}%{}\n", shift.wait,
                   shift.ms_before, shift.ms_after, 100 * shift.share_before,
                   100 * shift.share_after,
                   shift.significant.value_or(false) ? ", beyond noise" : "");
      }
    }
  }
}

void ten_thousand(const std::vector<RunSummary>& runs) {
  std::mt19937_64 engine(10000);
  auto history = resample(runs, 10000, engine);
  for (size_t index = 0; index < history.size(); ++index) {
    history[index].id = fmt::format("r{:05d}", index);
    history[index].started_at = history[index].id;
    if (index >= 4000) history[index].tps *= 0.9;
    if (index >= 7000) history[index].tps *= 1.2;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto changes = store::find_trend_changes(history);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  size_t found = changes ? changes->groups[0].changes.size() : 0;
  fmt::print(
      "\n10,000 runs (resampled, tps -10 % at run 4001 and +20 % at 7001): trend's "
      "analysis of {} series took {:.2f} s, {} change points\n",
      changes ? changes->groups[0].series.size() : 0, took.count(), found);
  if (changes) {
    for (const auto& change : changes->groups[0].changes) {
      if (change.metric == "tps") fmt::print("  tps at run {}\n", change.run + 1);
    }
  }
}

}  // namespace
}  // namespace pgwaitprof

int main(int argc, char** argv) {
  using namespace pgwaitprof;
  if (argc != 3) {
    std::cerr << "usage: pgwaitprof_calibrate_changes AA.json STEP.json\n";
    return 2;
  }
  const auto aa = load(argv[1]);
  const auto step = load(argv[2]);
  if (aa.size() < 20) {
    std::cerr << "pgwaitprof_calibrate_changes: " << aa.size()
              << " completed A/A runs, 20 needed\n";
    return 1;
  }
  const auto metrics = metrics_of(aa);
  for (const auto& metric : {metrics[0], metrics[1]}) {
    const auto values = values_of(aa, metric);
    const double centre = model::median(values);
    fmt::print(
        "A/A {}: median {:.4g}, robust CV {:.1f}% (1.4826 x MAD / median), range {:.4g} to "
        "{:.4g}\n",
        metric.first, centre,
        100 * 1.4826 * store::median_absolute_deviation(values, centre) / centre,
        *std::min_element(values.begin(), values.end()),
        *std::max_element(values.begin(), values.end()));
  }
  false_alarms(aa, metrics);
  detection(aa, metrics[0], -1);
  if (std::all_of(aa.begin(), aa.end(),
                  [](const auto& run) { return std::isfinite(run.p99_ms); })) {
    detection(aa, metrics[1], +1);
  }
  power(aa, metrics);
  if (!step.empty()) real_step(step);
  ten_thousand(aa);
  return 0;
}
