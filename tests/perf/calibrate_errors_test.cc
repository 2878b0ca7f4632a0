// The A/A calibration's pure parts on synthetic data: the 3 + 3 splits, coverage counting (by
// hand on three runs, and on simulated AR(1) runs where batch means must cover and the
// independent-samples formula must not), the dispersion ratio and the targets' outcomes.
#include "tests/perf/calibrate_errors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "model/statistics.h"
#include "store/run_to_run.h"

namespace pgwaitprof::calibration {
namespace {

const double kZ = model::normal_quantile(0.975);
constexpr double kInfinity = std::numeric_limits<double>::infinity();

TEST(CalibrationSplits, SubsetsAreEveryChoiceInOrder) {
  const auto all = subsets(5, 3);
  ASSERT_EQ(all.size(), 10u);
  EXPECT_EQ(all.front(), (Subset{0, 1, 2}));
  EXPECT_EQ(all[1], (Subset{0, 1, 3}));
  EXPECT_EQ(all.back(), (Subset{2, 3, 4}));
  EXPECT_EQ(std::set<Subset>(all.begin(), all.end()).size(), 10u);
  EXPECT_TRUE(subsets(2, 3).empty());
  EXPECT_EQ(subsets(4, 4).size(), 1u);
}

TEST(CalibrationSplits, EveryUnorderedPairOfDisjointTriplesOnce) {
  const auto pairs = disjoint_pairs(10, 3);
  ASSERT_EQ(pairs.size(), 2100u);  // C(10,3) C(7,3) / 2
  std::set<std::pair<Subset, Subset>> seen;
  for (const auto& [first, second] : pairs) {
    for (const size_t index : first) {
      EXPECT_EQ(std::count(second.begin(), second.end(), index), 0);
    }
    EXPECT_LT(first.front(), second.front());
    EXPECT_TRUE(seen.insert({first, second}).second);
    EXPECT_FALSE(seen.contains({second, first}));
  }
  EXPECT_EQ(disjoint_pairs(6, 3).size(), 10u);  // C(6,3) / 2: a triple and its complement
  EXPECT_EQ(disjoint_pairs(9, 3).size(), 840u);
  EXPECT_TRUE(disjoint_pairs(5, 3).empty());
}

TEST(CalibrationCoverage, CountsEachOrderedPairFromAnEstimableRun) {
  // Run 0's interval is 0 ± 1.2 (half-width z sqrt(2) se), run 2's 3 ± 2.5; run 1 has none.
  const std::vector<Estimate> estimates{
      {0, 1.2 / (kZ * std::sqrt(2.0)), kInfinity},
      {1, std::nan(""), kInfinity},
      {3, 2.5 / (kZ * std::sqrt(2.0)), kInfinity},
  };
  const auto coverage = prediction_coverage(estimates);
  EXPECT_EQ(coverage.estimable_runs, 2u);
  EXPECT_EQ(coverage.unestimable_runs, 1u);
  EXPECT_EQ(coverage.checks, 4u);
  EXPECT_EQ(coverage.inside, 2u);  // 1 in run 0's, 1 in run 2's; 3 and 0 outside
  EXPECT_FALSE(coverage.rate());   // two runs with an interval are too few to say anything

  std::vector<Estimate> four(estimates);
  four[1].error = 0.1 / (kZ * std::sqrt(2.0));                  // 1 ± 0.1: neither 0 nor 3
  four.push_back({2, 1.5 / (kZ * std::sqrt(2.0)), kInfinity});  // 2 ± 1.5: 1 and 3
  const auto measured = prediction_coverage(four);
  EXPECT_EQ(measured.checks, 12u);
  // From run 0: 1; from run 1: none; from run 2: 1 and 2; from run 3: 1 and 3.
  EXPECT_EQ(measured.inside, 1u + 0u + 2u + 2u);
  ASSERT_TRUE(measured.rate());
  EXPECT_DOUBLE_EQ(*measured.rate(), 5.0 / 12);
}

TEST(CalibrationCoverage, TQuantileOfTheRunsDegreesOfFreedom) {
  // 1.5 is outside 0 ± z sqrt(2) 0.5 (1.386) but inside with 5 degrees of freedom (1.818).
  const std::vector<Estimate> normal{{0, 0.5, kInfinity}, {1.5}, {1.5}};
  const std::vector<Estimate> five{{0, 0.5, 5}, {1.5}, {1.5}};
  EXPECT_EQ(prediction_coverage(normal).inside, 0u);
  EXPECT_EQ(prediction_coverage(five).inside, 2u);
}

// Simulated runs of one configuration: the mean of an AR(1) series (phi 0.7) of 400 intervals
// per run. Batch means must cover about 95 %; the independent-samples formula, too narrow by
// sqrt((1 + phi) / (1 - phi)) = 2.4, about 58 %.
TEST(CalibrationCoverage, SeparatesHonestErrorsFromNaiveOnes) {
  std::mt19937_64 random(11);
  std::normal_distribution<double> noise(0, 1);
  std::vector<Estimate> batch, naive;
  for (int run = 0; run < 60; ++run) {
    std::vector<double> series(400);
    double level = noise(random) / std::sqrt(1 - 0.49);
    for (auto& value : series) {
      level = 0.7 * level + noise(random);
      value = 100 + level;
    }
    const auto estimate = model::estimate_mean(series);
    batch.push_back({estimate.mean, estimate.reliable ? estimate.standard_error : std::nan(""),
                     estimate.degrees_of_freedom});
    double squares = 0;
    for (const double value : series) squares += std::pow(value - estimate.mean, 2);
    naive.push_back({estimate.mean, std::sqrt(squares / 399 / 400), 399});
  }
  const auto honest = prediction_coverage(batch).rate();
  const auto narrow = prediction_coverage(naive).rate();
  ASSERT_TRUE(honest && narrow);
  EXPECT_GT(*honest, 0.88);
  EXPECT_LT(*honest, 0.99);
  EXPECT_LT(*narrow, 0.75);
  ASSERT_TRUE(dispersion_ratio(naive));
  EXPECT_GT(*dispersion_ratio(naive), 1.8);
  EXPECT_LT(*dispersion_ratio(batch), 1.3);
}

TEST(CalibrationCoverage, PairwiseIntervalsCountOnlyWhereTheyExist) {
  const std::vector<double> values = {10, 11, 14};
  // Run 0 has intervals of 2 (11 inside, 14 not); run 1 none; run 2 one only towards run 0.
  const auto coverage = pairwise_coverage(values, [](size_t from, size_t to) {
    if (from == 0) return 2.0;
    if (from == 2 && to == 0) return 5.0;
    return std::nan("");
  });
  EXPECT_EQ(coverage.checks, 3u);
  EXPECT_EQ(coverage.inside, 2u);
  EXPECT_EQ(coverage.estimable_runs, 2u);
  EXPECT_EQ(coverage.unestimable_runs, 1u);
}

// Runs whose figures vary between runs by more than any run's own error (a level drawn per
// run): the run-to-run interval a report states, from the other runs but the two compared,
// covers 95 %; an interval from within-run errors a tenth as wide covers far less.
TEST(CalibrationCoverage, RunToRunIntervalsCoverRepeatsOfOneConfiguration) {
  std::mt19937_64 random(5);
  std::normal_distribution<double> between(1000, 50);
  size_t inside = 0, checks = 0, within_inside = 0, within_checks = 0;
  for (int set = 0; set < 400; ++set) {
    std::vector<store::RunSummary> runs;
    std::vector<double> values;
    std::vector<Estimate> within;
    for (int index = 0; index < 10; ++index) {
      store::RunSummary run;
      run.id = std::to_string(index);
      run.status = "completed";
      run.tps = between(random);
      runs.push_back(run);
      values.push_back(run.tps);
      within.push_back({run.tps, 5, 40});
    }
    const auto coverage = pairwise_coverage(values, [&](size_t from, size_t to) {
      std::vector<store::RunSummary> others;
      for (size_t index = 0; index < runs.size(); ++index) {
        if (index != from && index != to) others.push_back(runs[index]);
      }
      const auto spread = store::run_to_run(runs[from], others);
      return spread.figures.empty() ? std::nan("") : spread.figures.front().half_width;
    });
    inside += coverage.inside;
    checks += coverage.checks;
    const auto narrow = prediction_coverage(within);
    within_inside += narrow.inside;
    within_checks += narrow.checks;
  }
  ASSERT_EQ(checks, 400u * 90);
  EXPECT_NEAR(static_cast<double>(inside) / static_cast<double>(checks), 0.95, 0.015);
  EXPECT_LT(static_cast<double>(within_inside) / static_cast<double>(within_checks), 0.3);
}

TEST(CalibrationCoverage, DispersionRatio) {
  EXPECT_DOUBLE_EQ(*dispersion_ratio(std::vector<Estimate>{{1, 0.5}, {2, 0.5}, {3, 0.5}}), 2.0);
  EXPECT_FALSE(dispersion_ratio(std::vector<Estimate>{{1, 0.5}}));
  EXPECT_FALSE(dispersion_ratio(std::vector<Estimate>{{1}, {2}}));
}

TEST(CalibrationTargets, PassMissedOrNotMeasured) {
  EXPECT_EQ(judge({"coverage", 0.9, 0.85}), Outcome::kPass);
  EXPECT_EQ(judge({"coverage", 0.85, 0.85}), Outcome::kPass);
  EXPECT_EQ(judge({"coverage", 0.8, 0.85}), Outcome::kMissed);
  EXPECT_EQ(judge({"false positives", 0.04, 0.05, false}), Outcome::kPass);
  EXPECT_EQ(judge({"false positives", 0.06, 0.05, false}), Outcome::kMissed);
  EXPECT_EQ(judge({"power", std::nullopt, 0.8}), Outcome::kNotMeasured);
  EXPECT_EQ(judge({"power", std::nan(""), 0.8}), Outcome::kNotMeasured);
  EXPECT_EQ(outcome_text(Outcome::kMissed), "MISSED");
  // A missed target is a result; a figure that could not be measured is an error.
  EXPECT_EQ(exit_status(std::vector{Outcome::kPass, Outcome::kMissed}), 0);
  EXPECT_EQ(exit_status(std::vector{Outcome::kPass, Outcome::kNotMeasured}), 1);
}

}  // namespace
}  // namespace pgwaitprof::calibration
