// The parts of statistics_ab.cc that compare gives single runs and each side's figure: the
// within-run test of two runs' batch-means estimates (closed form, and its false-positive rate
// on simulated autocorrelated runs), the geometric mean's interval, and why an estimate is not
// reliable.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "model/statistics.h"

namespace pgwaitprof::model {
namespace {

MeanEstimate estimate(double mean, double standard_error, double degrees_of_freedom) {
  MeanEstimate result;
  result.mean = mean;
  result.standard_error = standard_error;
  result.degrees_of_freedom = degrees_of_freedom;
  result.reliable = true;
  return result;
}

TEST(WithinRun, ClosedForm) {
  // 1 % relative error a side: the log difference has error sqrt(2) %, with 30 + 30 df.
  const AbTest test = within_run_log_test(estimate(1000, 10, 30), estimate(1100, 11, 30));
  EXPECT_TRUE(test.within_run);
  EXPECT_EQ(test.repeats_a, 1u);
  EXPECT_NEAR(test.change_percent, 10, 1e-9);
  ASSERT_TRUE(test.degrees_of_freedom && test.p_value && test.ci_low_percent);
  EXPECT_NEAR(*test.degrees_of_freedom, 60, 1e-9);
  const double error = std::sqrt(2e-4);
  const double quantile = student_t_quantile(0.975, 60);
  EXPECT_NEAR(*test.ci_low_percent, 100 * std::expm1(std::log(1.1) - quantile * error), 1e-9);
  EXPECT_NEAR(*test.ci_high_percent, 100 * std::expm1(std::log(1.1) + quantile * error), 1e-9);
  EXPECT_NEAR(*test.p_value, 2 * student_t_upper_tail(std::log(1.1) / error, 60), 1e-15);
  EXPECT_LT(*test.p_value, 1e-6);
  EXPECT_TRUE(test.significant);
  ASSERT_TRUE(test.min_detectable_percent);
  EXPECT_NEAR(*test.min_detectable_percent,
              100 * std::expm1((quantile + student_t_quantile(0.8, 60)) * error), 1e-9);
  // Repeats are another noise: nothing is planned from within-run errors.
  EXPECT_FALSE(test.repeats_needed_for_observed);
  EXPECT_FALSE(test.log_sd);
}

TEST(WithinRun, NoChangeAndUnequalErrors) {
  const AbTest same = within_run_log_test(estimate(500, 5, 20), estimate(500, 5, 20));
  EXPECT_DOUBLE_EQ(*same.p_value, 1);
  EXPECT_FALSE(same.significant);
  // Symmetric on the log scale.
  EXPECT_NEAR(std::log1p(*same.ci_low_percent / 100), -std::log1p(*same.ci_high_percent / 100),
              1e-12);
  // One precise side: the degrees of freedom are the noisy side's.
  const AbTest uneven = within_run_log_test(estimate(1000, 0.001, 9), estimate(1000, 20, 40));
  EXPECT_NEAR(*uneven.degrees_of_freedom, 40, 0.01);
  const AbTestOptions planned{.assumed_log_sd = 0.05};
  EXPECT_FALSE(within_run_log_test(estimate(1, 0.1, 20), estimate(1, 0.1, 20), planned).log_sd);
}

TEST(WithinRun, RejectsWhatCannotBeTested) {
  EXPECT_THROW(within_run_log_test(estimate(1000, std::nan(""), 20), estimate(1000, 1, 20)),
               std::invalid_argument);
  EXPECT_THROW(within_run_log_test(estimate(0, 1, 20), estimate(1000, 1, 20)),
               std::invalid_argument);
  EXPECT_THROW(within_run_log_test(estimate(1000, 1, 20), estimate(1000, 1, 0)),
               std::invalid_argument);
}

// Pairs of runs with the same mean whose intervals are AR(1) (phi 0.5, 300 intervals): the
// within-run test on their batch-means estimates must call about 5 % of them different. It
// sees the noise inside the runs, which is all these runs have.
TEST(WithinRun, FalsePositiveRateOnAutocorrelatedRuns) {
  std::mt19937_64 random(21);
  std::normal_distribution<double> noise(0, 1);
  auto run = [&] {
    std::vector<double> series(300);
    double level = noise(random) / std::sqrt(1 - 0.25);
    for (auto& value : series) {
      level = 0.5 * level + noise(random);
      value = 1000 + 20 * level;
    }
    return estimate_mean(series);
  };
  int tested = 0, called = 0;
  for (int pair = 0; pair < 1000; ++pair) {
    const auto a = run();
    const auto b = run();
    if (!a.reliable || !b.reliable) continue;
    ++tested;
    if (within_run_log_test(a, b).significant) ++called;
  }
  ASSERT_GT(tested, 800);
  const double rate = static_cast<double>(called) / tested;
  EXPECT_GT(rate, 0.02);
  EXPECT_LT(rate, 0.09);
  RecordProperty("within_run_false_positive_rate", std::to_string(rate));
}

TEST(GeometricMean, IntervalOnTheLogScale) {
  const auto single = geometric_mean_interval(std::vector<double>{42});
  EXPECT_DOUBLE_EQ(single.value, 42);
  EXPECT_FALSE(single.low);
  const std::vector<double> values{1, 100};
  const auto pair = geometric_mean_interval(values);
  EXPECT_NEAR(pair.value, 10, 1e-12);
  ASSERT_TRUE(pair.low && pair.high);
  EXPECT_NEAR(*pair.low * *pair.high, 100, 1e-6);  // symmetric around log 10
  // t(0.975, 1) = 12.706, sd of the logs / sqrt(2) = log 10.
  EXPECT_NEAR(std::log(*pair.high / pair.value), 12.7062047 * std::log(10.0), 1e-5);
  const auto same = geometric_mean_interval(std::vector<double>{5, 5, 5});
  EXPECT_DOUBLE_EQ(*same.low, 5);
  EXPECT_DOUBLE_EQ(*same.high, 5);
  EXPECT_THROW(geometric_mean_interval(std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(geometric_mean_interval(std::vector<double>{1, 0}), std::invalid_argument);
}

TEST(UnreliableReason, SaysWhatIsMissing) {
  std::vector<double> alternating(12);
  for (size_t index = 0; index < alternating.size(); ++index) alternating[index] = index % 2;
  BatchMeansOptions options;
  options.interval = std::chrono::seconds(2);
  const auto short_run = estimate_mean(alternating, options);
  EXPECT_FALSE(short_run.reliable);
  EXPECT_EQ(unreliable_reason(short_run, options), "12 batches of 2 s, 20 needed");
  EXPECT_EQ(unreliable_reason(estimate_mean(std::vector<double>{}), options), "no intervals");
  EXPECT_EQ(unreliable_reason(estimate_mean(std::vector<double>{3}), options), "a single interval");
  std::vector<double> long_run(60);
  for (size_t index = 0; index < long_run.size(); ++index) long_run[index] = index % 2;
  EXPECT_EQ(unreliable_reason(estimate_mean(long_run), options), "");
}

TEST(RunToRunTest, ClosedForm) {
  // 5 % between runs, known from 8 earlier runs: the log difference has error sqrt(2) x 5 %.
  const AbTest test = run_to_run_log_test(1000, 1100, 0.05, 7);
  EXPECT_TRUE(test.run_to_run);
  EXPECT_FALSE(test.within_run);
  EXPECT_NE(test.method.find("8 earlier comparable runs"), std::string::npos) << test.method;
  const double error = std::sqrt(2.0) * 0.05;
  const double quantile = student_t_quantile(0.975, 7);
  ASSERT_TRUE(test.p_value && test.ci_low_percent && test.ci_high_percent);
  EXPECT_NEAR(*test.p_value, 2 * student_t_upper_tail(std::log(1.1) / error, 7), 1e-15);
  EXPECT_GT(*test.p_value, 0.05);  // 10 % is inside this noise
  EXPECT_FALSE(test.significant);
  EXPECT_NEAR(*test.ci_low_percent, 100 * std::expm1(std::log(1.1) - quantile * error), 1e-9);
  EXPECT_NEAR(*test.ci_high_percent, 100 * std::expm1(std::log(1.1) + quantile * error), 1e-9);
  EXPECT_NEAR(*test.min_detectable_percent,
              100 * std::expm1((quantile + student_t_quantile(0.8, 7)) * error), 1e-9);
  // Noise between runs plans repeats.
  ASSERT_TRUE(test.log_sd && test.repeats_needed_for_observed);
  EXPECT_DOUBLE_EQ(*test.log_sd, 0.05);
  EXPECT_TRUE(run_to_run_log_test(1000, 1300, 0.05, 7).significant);
  EXPECT_THROW(run_to_run_log_test(0, 1, 0.05, 7), std::invalid_argument);
  EXPECT_THROW(run_to_run_log_test(1, 1, std::nan(""), 7), std::invalid_argument);
  EXPECT_THROW(run_to_run_log_test(1, 1, 0.05, 0), std::invalid_argument);
}

// Two runs of one configuration against the spread of 8 others: about 5 % are called.
TEST(RunToRunTest, FalsePositiveRateOfRepeats) {
  std::mt19937_64 random(21);
  std::normal_distribution<double> log_tps(std::log(4000), 0.08);
  int called = 0;
  constexpr int kPairs = 4000;
  for (int pair = 0; pair < kPairs; ++pair) {
    std::vector<double> history(8);
    double mean = 0;
    for (auto& value : history) mean += value = log_tps(random);
    mean /= 8;
    double squares = 0;
    for (const double value : history) squares += (value - mean) * (value - mean);
    const double log_sd = std::sqrt(squares / 7);
    const double a = std::exp(log_tps(random));
    const double b = std::exp(log_tps(random));
    if (run_to_run_log_test(a, b, log_sd, 7).significant) ++called;
  }
  EXPECT_NEAR(static_cast<double>(called) / kPairs, 0.05, 0.012);
}

}  // namespace
}  // namespace pgwaitprof::model
