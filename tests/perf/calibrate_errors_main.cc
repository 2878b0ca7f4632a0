// A/A calibration of pgwaitprof's error bars and verdicts (issue 11), from the matrix directory
// of tests/perf/calibration/aa.yaml (tests/perf/calibrate_errors.sh): ten identical runs
// (variants A and A2) and five with synchronous_commit off. It measures, against the issue's
// targets:
//   - coverage: how often another A/A run's estimate falls inside the 95 % interval made from
//     one run, for the largest wait event's share and for tps: the run-to-run interval a
//     report states (history/run_to_run.h, from the other A/A runs but the one checked), and
//     beside it the within-run batch-means interval and the binomial (for tps the
//     independent-intervals) one;
//   - false positives: how many 3 + 3 A vs A' comparisons `compare` calls faster or slower;
//   - power: how many 3 A/A vs 3 synchronous_commit=off comparisons it calls faster.
// Prints PASS or MISSED per target; exits 1 when a figure cannot be measured, 2 on bad input.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exporters/render/compare.h"
#include "model/run_estimates.h"
#include "store/run_directory.h"
#include "store/run_to_run.h"
#include "tests/perf/calibrate_errors.h"

namespace {

using namespace pgwaitprof;
using calibration::Estimate;
namespace fs = std::filesystem;

constexpr size_t kSplitSize = 3;
constexpr double kCoverageTarget = 0.85;
constexpr double kFalsePositiveTarget = 0.05;
// The issue asks that the real effect "must still be called" at 3 + 3; 80 % of the splits is
// the conventional power.
constexpr double kPowerTarget = 0.80;
const std::string kEffectVariant = "sync-off";

struct Runs {
  std::vector<model::Run> aa;                   // variants A and A2: one configuration
  std::vector<model::Run> effect;               // synchronous_commit off
  std::vector<store::RunSummary> aa_summaries;  // of aa, as the run history holds them
};

// Completed runs with a load generator summary, in run id (start time) order.
Runs load_runs(const fs::path& matrix) {
  std::vector<fs::path> dirs;
  std::error_code error;
  for (fs::directory_iterator entry(matrix / "runs", error), end; !error && entry != end;
       entry.increment(error)) {
    dirs.push_back(entry->path());
  }
  if (error) {
    throw std::runtime_error(fmt::format("could not read matrix directory \"{}\": {}",
                                         (matrix / "runs").string(), error.message()));
  }
  std::sort(dirs.begin(), dirs.end());
  Runs runs;
  for (const auto& dir : dirs) {
    auto run = store::read_run(dir);
    if (!run) throw std::runtime_error(run.error().message);
    if (run->status != model::RunStatus::kCompleted || !run->loadgen || run->loadgen->tps <= 0) {
      fmt::print("skipped run {}: {}\n", run->id, model::to_string(run->status));
      continue;
    }
    if (run->variant != kEffectVariant) runs.aa_summaries.push_back(store::summarize(*run, dir));
    (run->variant == kEffectVariant ? runs.effect : runs.aa).push_back(std::move(*run));
  }
  return runs;
}

struct RunEstimates {
  Estimate batch;  // batch means over the steady state (NaN when not reliable)
  Estimate naive;  // binomial over samples (shares), independent intervals (tps)
};

RunEstimates share_of(const model::Run& run, const std::string& wait) {
  const auto window = model::steady_window(run);
  const auto estimate = model::estimate_keys(run, window, false, [&](const model::WaitKey& key) {
    return model::display_name(key) == wait;
  });
  RunEstimates result;
  result.batch.value = result.naive.value = estimate.share.mean;
  if (estimate.share.reliable) {
    result.batch.error = estimate.share.standard_error;
    result.batch.degrees_of_freedom = estimate.share.degrees_of_freedom;
  }
  const auto samples = static_cast<double>(model::window_profile(run, window).total(false));
  if (samples > 0) {
    result.naive.error = std::sqrt(estimate.share.mean * (1 - estimate.share.mean) / samples);
  }
  return result;
}

RunEstimates tps_of(const model::Run& run) {
  RunEstimates result;
  const auto window = model::steady_window(run);
  const auto tps = model::tps_estimate(run, window);
  if (!tps) return result;
  result.batch.value = result.naive.value = tps->mean;
  if (tps->reliable) {
    result.batch.error = tps->standard_error;
    result.batch.degrees_of_freedom = tps->degrees_of_freedom;
  }
  // As if the per-interval tps were independent: sd / sqrt(n).
  std::vector<double> values;
  for (size_t index = window.first_interval; index < run.timeline.size(); ++index) {
    const auto& slice = run.timeline[index];
    if (slice.loadgen && std::isfinite(slice.loadgen->tps)) values.push_back(slice.loadgen->tps);
  }
  if (values.size() >= 2) {
    double mean = 0;
    for (double value : values) mean += value;
    mean /= static_cast<double>(values.size());
    double squares = 0;
    for (double value : values) squares += (value - mean) * (value - mean);
    const auto n = static_cast<double>(values.size());
    result.naive.error = std::sqrt(squares / (n - 1) / n);
    result.naive.degrees_of_freedom = n - 1;
  }
  return result;
}

std::string percent(std::optional<double> rate) {
  return rate ? fmt::format("{:.1f}%", 100 * *rate) : "-";
}

std::string ratio_text(std::optional<double> ratio) {
  return ratio ? fmt::format("{:.2f}", *ratio) : "-";
}

// Run-to-run intervals of `figure` ("tps" or a wait's display name): run i's as its report
// would state it had the A/A runs but i and j been its history.
calibration::Coverage run_to_run_coverage(const std::vector<store::RunSummary>& runs,
                                          const std::string& figure) {
  std::vector<double> values;
  for (const auto& run : runs) {
    const auto share = run.wait_shares.find(figure);
    values.push_back(figure == "tps"                  ? run.tps
                     : share == run.wait_shares.end() ? 0.0
                                                      : share->second);
  }
  return calibration::pairwise_coverage(values, [&](size_t from, size_t to) {
    std::vector<store::RunSummary> others;
    for (size_t index = runs.size(); index-- > 0;) {  // newest first, as load_history gives
      if (index != from && index != to) others.push_back(runs[index]);
    }
    for (const auto& spread : store::run_to_run(runs[from], others).figures) {
      if (spread.name == figure) return spread.half_width;
    }
    return std::nan("");
  });
}

// One coverage line; returns the run-to-run coverage (nullopt: not measured).
std::optional<double> print_coverage(const std::string& what, const Runs& runs,
                                     const std::string& figure,
                                     const std::vector<RunEstimates>& estimates,
                                     const char* naive_name) {
  std::vector<Estimate> batch, naive;
  for (const auto& estimate : estimates) {
    batch.push_back(estimate.batch);
    naive.push_back(estimate.naive);
  }
  const auto spread_coverage = run_to_run_coverage(runs.aa_summaries, figure);
  const auto batch_coverage = calibration::prediction_coverage(batch);
  const auto naive_coverage = calibration::prediction_coverage(naive);
  fmt::print(
      "  {:<46} run to run {} ({} of {} checks); within-run: batch means {} ({} of {} runs "
      "estimable), {} {}; sd between runs / error: {} (batch means), {} ({})\n",
      what, percent(spread_coverage.rate()), spread_coverage.inside, spread_coverage.checks,
      percent(batch_coverage.rate()), batch_coverage.estimable_runs, estimates.size(), naive_name,
      percent(naive_coverage.rate()), ratio_text(calibration::dispersion_ratio(batch)),
      ratio_text(calibration::dispersion_ratio(naive)), naive_name);
  return spread_coverage.rate();
}

// The largest non-idle wait events of the A/A runs' steady states, largest first.
std::vector<std::string> major_waits(const std::vector<model::Run>& runs, size_t count) {
  std::map<std::string, uint64_t> totals;
  for (const auto& run : runs) {
    // Named: a range-for over a member of a temporary would use it after its end.
    const auto profile = model::window_profile(run, model::steady_window(run));
    for (const auto& [key, samples] : profile.counts()) {
      if (!model::is_idle(key)) totals[model::display_name(key)] += samples;
    }
  }
  std::vector<std::pair<uint64_t, std::string>> ranked;
  for (const auto& [name, samples] : totals) ranked.emplace_back(samples, name);
  std::sort(ranked.rbegin(), ranked.rend());
  std::vector<std::string> names;
  for (size_t rank = 0; rank < std::min(count, ranked.size()); ++rank) {
    names.push_back(ranked[rank].second);
  }
  return names;
}

void print_runs(const std::vector<model::Run>& runs, const std::string& wait) {
  fmt::print("runs (steady state after MSER-5; tps and {} share with batch-means errors):\n", wait);
  for (const auto& run : runs) {
    const auto window = model::steady_window(run);
    const auto tps = model::tps_estimate(run, window);
    const auto share = model::estimate_keys(run, window, false, [&](const model::WaitKey& key) {
      return model::display_name(key) == wait;
    });
    const std::string tps_text =
        !tps            ? "no per-interval tps"
        : tps->reliable ? fmt::format("{:.1f} ± {:.1f}", tps->mean, tps->standard_error)
                        : fmt::format("{:.1f} ± - ({})", tps->mean,
                                      model::unreliable_reason(*tps, model::batch_options(run)));
    const std::string share_text =
        share.share.reliable
            ? fmt::format("{:.2f}% ± {:.2f}", 100 * share.share.mean,
                          100 * share.share.standard_error)
            : fmt::format("{:.2f}% ± - ({})", 100 * share.share.mean,
                          model::unreliable_reason(share.share, model::batch_options(run)));
    fmt::print("  {:<40} {:<8} {:>4.0f} s excluded  tps {:<40} share {}\n", run.id, run.variant,
               window.excluded.count(), tps_text, share_text);
  }
}

std::vector<model::Run> pick(const std::vector<model::Run>& runs,
                             const calibration::Subset& which) {
  std::vector<model::Run> picked;
  for (const size_t index : which) {
    picked.push_back(runs[index]);
    picked.back().variant = "A";  // one cell on both sides
  }
  return picked;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// Every unordered pair of disjoint triples of the A/A runs, compared as `compare` does.
std::optional<double> false_positives(const std::vector<model::Run>& runs) {
  const auto pairs = calibration::disjoint_pairs(runs.size(), kSplitSize);
  size_t called = 0, waits_listed = 0, waits_called = 0;
  std::vector<double> detectable;
  for (const auto& [first, second] : pairs) {
    const auto comparison = exporters::compare_runs(pick(runs, first), pick(runs, second));
    const auto& tps = comparison.cells.at(0).tps;
    if (tps.verdict == "faster" || tps.verdict == "slower") ++called;
    if (tps.test && tps.test->min_detectable_percent) {
      detectable.push_back(*tps.test->min_detectable_percent);
    }
    for (const auto& move : comparison.waits) {
      if (!move.significant) continue;
      ++waits_listed;
      if (*move.significant) ++waits_called;
    }
  }
  if (pairs.empty()) {
    fmt::print("false positives: - (fewer than {} A/A runs)\n", 2 * kSplitSize);
    return std::nullopt;
  }
  const double rate = static_cast<double>(called) / static_cast<double>(pairs.size());
  fmt::print(
      "false positives: {} of {} A vs A' comparisons called faster or slower: {}\n"
      "  (every unordered pair of disjoint triples of the {} A/A runs, C({},3) C({},3) / 2; they "
      "share runs, so the rate is noisier than that many independent comparisons would give)\n"
      "  smallest detectable change at 3 + 3, median over the splits: ±{:.1f}%\n"
      "  wait events that moved (informational): {} of {} tested moves called significant "
      "({})\n",
      called, pairs.size(), percent(rate), runs.size(), runs.size(), runs.size() - kSplitSize,
      median_of(detectable), waits_called, waits_listed,
      percent(waits_listed ? std::optional(static_cast<double>(waits_called) /
                                           static_cast<double>(waits_listed))
                           : std::nullopt));
  return rate;
}

// Run i with the run-to-run spread its report would state had the A/A runs but i and `also`
// been its history; nothing from the reports' own spreads (written with whatever history the
// data directory had then).
model::Run with_spread(const Runs& runs, size_t i, std::optional<size_t> also) {
  std::vector<store::RunSummary> others;
  for (size_t index = runs.aa_summaries.size(); index-- > 0;) {
    if (index != i && index != also) others.push_back(runs.aa_summaries[index]);
  }
  model::Run run = runs.aa[i];
  run.variant = "A";
  run.run_to_run = store::run_to_run(runs.aa_summaries[i], others);
  return run;
}

model::Run without_spread(model::Run run) {
  run.variant = "A";
  run.run_to_run.reset();
  return run;
}

// `compare RUN_A RUN_B` of single runs once A's report has a run-to-run spread: every ordered
// pair of A/A runs (false positives), and every A/A run against every sync-off run (power).
void single_run_verdicts(const Runs& runs) {
  size_t pairs = 0, called = 0, tested = 0;
  for (size_t i = 0; i < runs.aa.size(); ++i) {
    for (size_t j = 0; j < runs.aa.size(); ++j) {
      if (i == j) continue;
      const auto comparison =
          exporters::compare_runs({with_spread(runs, i, j)}, {without_spread(runs.aa[j])});
      const auto& tps = comparison.cells.at(0).tps;
      ++pairs;
      if (tps.test && tps.test->run_to_run) ++tested;
      if (tps.verdict == "faster" || tps.verdict == "slower") ++called;
    }
  }
  size_t effect_pairs = 0, effect_called = 0;
  for (size_t i = 0; i < runs.aa.size(); ++i) {
    for (const auto& effect : runs.effect) {
      auto b = without_spread(effect);
      const auto comparison = exporters::compare_runs({with_spread(runs, i, std::nullopt)}, {b});
      ++effect_pairs;
      if (comparison.cells.at(0).tps.verdict == "faster") ++effect_called;
    }
  }
  auto rate = [](size_t part, size_t whole) {
    return whole ? std::optional(static_cast<double>(part) / static_cast<double>(whole))
                 : std::nullopt;
  };
  fmt::print(
      "single runs (informational), compare RUN_A RUN_B with A's run-to-run spread from the "
      "other A/A runs:\n"
      "  A/A pairs called faster or slower: {} of {} ({}; {} tested against the spread)\n"
      "  A/A vs {} called faster: {} of {} ({})\n",
      called, pairs, percent(rate(called, pairs)), tested, kEffectVariant, effect_called,
      effect_pairs, percent(rate(effect_called, effect_pairs)));
}

// Every triple of A/A runs against every triple of synchronous_commit=off runs.
std::optional<double> power(const std::vector<model::Run>& aa,
                            const std::vector<model::Run>& effect) {
  const auto sides_a = calibration::subsets(aa.size(), kSplitSize);
  const auto sides_b = calibration::subsets(effect.size(), kSplitSize);
  size_t called = 0, comparisons = 0;
  std::vector<double> changes;
  for (const auto& side_a : sides_a) {
    for (const auto& side_b : sides_b) {
      const auto comparison =
          exporters::compare_runs(pick(aa, side_a), pick(effect, side_b), "A", kEffectVariant);
      const auto& tps = comparison.cells.at(0).tps;
      ++comparisons;
      if (tps.verdict == "faster") ++called;
      if (tps.test) changes.push_back(tps.test->change_percent);
    }
  }
  if (comparisons == 0) {
    fmt::print("power: - ({} A/A and {} {} runs; {} of each needed)\n", aa.size(), effect.size(),
               kEffectVariant, kSplitSize);
    return std::nullopt;
  }
  const double rate = static_cast<double>(called) / static_cast<double>(comparisons);
  fmt::print(
      "power: {} of {} comparisons of 3 A/A runs vs 3 {} runs called faster: {} (median change "
      "{:+.1f}%)\n",
      called, comparisons, kEffectVariant, percent(rate), median_of(changes));
  return rate;
}

int calibrate(const fs::path& matrix) {
  const Runs runs = load_runs(matrix);
  fmt::print("A/A calibration of {}: {} A/A runs (variants A and A2), {} {} runs\n",
             matrix.string(), runs.aa.size(), runs.effect.size(), kEffectVariant);
  const auto waits = major_waits(runs.aa, 3);
  const std::string major = waits.empty() ? "" : waits.front();
  if (!major.empty()) print_runs(runs.aa, major);

  fmt::print(
      "\ncoverage: another run's estimate inside the 95% interval made from one run (every ordered "
      "pair i, j of A/A runs):\n"
      "  run to run: x_i ± t·√2·sd, sd between the A/A runs but i and j (as run i's report states "
      "it with those runs in its history); within-run: x_i ± t·√2·se_i\n");
  std::vector<calibration::Target> targets;
  for (size_t rank = 0; rank < waits.size(); ++rank) {
    std::vector<RunEstimates> shares;
    for (const auto& run : runs.aa) shares.push_back(share_of(run, waits[rank]));
    const std::string what =
        fmt::format("share of {}{}", waits[rank], rank == 0 ? "" : " (informational)");
    const auto rate = print_coverage(what, runs, waits[rank], shares, "binomial");
    if (rank == 0)
      targets.push_back({"coverage (run to run), share of " + waits[rank], rate, kCoverageTarget});
  }
  if (waits.empty())
    targets.push_back({"coverage (run to run), share of the largest wait", {}, kCoverageTarget});
  std::vector<RunEstimates> tps;
  for (const auto& run : runs.aa) tps.push_back(tps_of(run));
  targets.push_back({"coverage (run to run), steady-state tps",
                     print_coverage("steady-state tps", runs, "tps", tps, "independent intervals"),
                     kCoverageTarget});

  fmt::print("\n");
  targets.push_back({"false positives of compare at 3 + 3", false_positives(runs.aa),
                     kFalsePositiveTarget, false});
  targets.push_back({"power of compare at 3 + 3 (" + kEffectVariant + ")",
                     power(runs.aa, runs.effect), kPowerTarget});
  single_run_verdicts(runs);

  fmt::print("\ntargets (issue 11):\n");
  std::vector<calibration::Outcome> outcomes;
  for (const auto& target : targets) {
    outcomes.push_back(calibration::judge(target));
    fmt::print("  {:<54} {:>7} {} {:.0f}%  {}\n", target.name, percent(target.value),
               target.at_least ? ">=" : "<=", 100 * target.threshold,
               calibration::outcome_text(outcomes.back()));
  }
  return calibration::exit_status(outcomes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr,
               "usage: pgwaitprof_calibrate MATRIX_DIR (of tests/perf/calibration/aa.yaml)\n");
    return 2;
  }
  try {
    return calibrate(argv[1]);
  } catch (const std::exception& error) {
    fmt::print(stderr, "pgwaitprof_calibrate: {}\n", error.what());
    return 2;
  }
}
