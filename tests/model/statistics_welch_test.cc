// The A/B tests of statistics_ab.cc across repeats: Welch's t-test on log tps, its power and
// detectable change, and the permutation test (the within-run test: statistics_ab_test.cc).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "model/statistics.h"
#include "tests/model/statistics_fixture.h"

namespace pgwaitprof::model {
namespace {

using namespace test_support;

// Repeats of a log-normal tps
// -----------------------------------------------------------------------------------

std::vector<double> lognormal_repeats(Normal& normal, size_t repeats, double median,
                                      double log_sd) {
  std::vector<double> values(repeats);
  for (auto& value : values) value = median * std::exp(log_sd * normal());
  return values;
}

TEST(Welch, KnownExample) {
  // Logs -0.02, 0, 0.02 and 0.08, 0.10, 0.12: equal variances, so Welch's degrees of freedom
  // are exactly 4 and the four-degree closed form of the t distribution applies.
  const std::vector<double> a{std::exp(-0.02), 1, std::exp(0.02)};
  const std::vector<double> b{std::exp(0.08), std::exp(0.10), std::exp(0.12)};
  const AbTest test = welch_log_test(a, b);
  const double standard_error = std::sqrt(2 * 0.0004 / 3);
  const double t = 0.1 / standard_error;
  const double sine = t / std::sqrt(4 + t * t);
  const double p = 2 * (0.5 - sine * (1 + 2 / (4 + t * t)) / 2);
  const double quantile = 2.7764451051977987;  // t_{0.975, 4}
  EXPECT_EQ(test.repeats_a, 3u);
  EXPECT_EQ(test.repeats_b, 3u);
  EXPECT_NEAR(test.geometric_mean_a, 1, 1e-12);
  EXPECT_NEAR(test.change_percent, 100 * std::expm1(0.1), 1e-9);
  ASSERT_TRUE(test.p_value && test.degrees_of_freedom && test.ci_low_percent &&
              test.ci_high_percent && test.log_sd && test.min_detectable_percent);
  EXPECT_NEAR(*test.degrees_of_freedom, 4, 1e-9);
  EXPECT_NEAR(*test.p_value, p, 1e-10);
  EXPECT_TRUE(test.significant);
  EXPECT_NEAR(*test.ci_low_percent, 100 * std::expm1(0.1 - quantile * standard_error), 1e-7);
  EXPECT_NEAR(*test.ci_high_percent, 100 * std::expm1(0.1 + quantile * standard_error), 1e-7);
  EXPECT_NEAR(*test.log_sd, 0.02, 1e-12);
  // (t_{0.975, 4} + t_{0.8, 4}) * sd * sqrt(1/3 + 1/3).
  const double detectable = (quantile + 0.9409645026) * 0.02 * std::sqrt(2.0 / 3);
  EXPECT_NEAR(*test.min_detectable_percent, 100 * std::expm1(detectable), 1e-6);
  EXPECT_EQ(test.method, "Welch t-test on log (3 + 3 repeats)");
}

TEST(Welch, FalsePositiveRateAndCoverage) {
  Normal normal(61);
  for (const size_t repeats : {3u, 5u}) {
    constexpr int kRounds = 4000;
    int rejected = 0, covered = 0;
    for (int round = 0; round < kRounds; ++round) {
      const AbTest test = welch_log_test(lognormal_repeats(normal, repeats, 5000, 0.02),
                                         lognormal_repeats(normal, repeats, 5000, 0.02));
      if (test.significant) ++rejected;
      if (*test.ci_low_percent <= 0 && 0 <= *test.ci_high_percent) ++covered;
    }
    const double false_positives = static_cast<double>(rejected) / kRounds;
    const double coverage = static_cast<double>(covered) / kRounds;
    // Welch is slightly conservative with 3 + 3 (its degrees of freedom are estimated).
    EXPECT_LE(false_positives, 0.06) << repeats;
    EXPECT_GE(false_positives, 0.02) << repeats;
    EXPECT_NEAR(coverage, 1 - false_positives, 1e-12) << repeats;  // the same event
    RecordProperty(fmt::format("false_positives_{}", repeats), std::to_string(false_positives));
  }
}

TEST(Welch, PowerAndIntervalCoverageAtTenPercent) {
  Normal normal(62);
  constexpr int kRounds = 2000;
  int detected = 0, covered = 0;
  const double truth = 10;
  for (int round = 0; round < kRounds; ++round) {
    const AbTest test = welch_log_test(lognormal_repeats(normal, 3, 5000, 0.02),
                                       lognormal_repeats(normal, 3, 5500, 0.02));
    if (test.significant && test.change_percent > 0) ++detected;
    if (*test.ci_low_percent <= truth && truth <= *test.ci_high_percent) ++covered;
  }
  const double power = static_cast<double>(detected) / kRounds;
  const double coverage = static_cast<double>(covered) / kRounds;
  EXPECT_GT(power, 0.8);
  EXPECT_GE(coverage, 0.93);
  EXPECT_LE(coverage, 0.98);
  RecordProperty("power_10pct_3x3", std::to_string(power));
  RecordProperty("coverage_10pct_3x3", std::to_string(coverage));
}

// Repeats whose logs have exactly the sample sd `log_sd`.
std::vector<double> exact_noise(size_t repeats, double median, double log_sd) {
  std::vector<double> logs(repeats);
  for (size_t index = 0; index < repeats; ++index) {
    logs[index] = static_cast<double>(index) - static_cast<double>(repeats - 1) / 2;
  }
  const double scale = log_sd / sd_of(logs);
  std::vector<double> values;
  values.reserve(repeats);
  for (const double value : logs) values.push_back(median * std::exp(value * scale));
  return values;
}

TEST(Welch, MinimumDetectableChangeHasAboutTheStatedPower) {
  // The t approximation behind min_detectable_percent is slightly optimistic for Welch's test
  // with very few repeats; the measured power at the stated change shows by how much.
  Normal normal(63);
  for (const auto& [repeats, low, high] :
       std::vector<std::tuple<size_t, double, double>>{{3, 0.6, 0.8}, {10, 0.74, 0.86}}) {
    const AbTest design =
        welch_log_test(exact_noise(repeats, 100, 0.02), exact_noise(repeats, 100, 0.02));
    const double change = *design.min_detectable_percent;
    constexpr int kRounds = 2000;
    int detected = 0;
    for (int round = 0; round < kRounds; ++round) {
      const AbTest test = welch_log_test(lognormal_repeats(normal, repeats, 100, 0.02),
                                         lognormal_repeats(normal, repeats, 100 + change, 0.02));
      if (test.significant && test.change_percent > 0) ++detected;
    }
    const double power = static_cast<double>(detected) / kRounds;
    EXPECT_GE(power, low) << repeats;
    EXPECT_LE(power, high) << repeats;
    RecordProperty(fmt::format("mde_{}", repeats), std::to_string(change));
    RecordProperty(fmt::format("power_at_mde_{}", repeats), std::to_string(power));
  }
}

TEST(Welch, RepeatsNeededAreTheSmallestDesignThatDetects) {
  const AbTest test = welch_log_test(exact_noise(3, 100, 0.02), exact_noise(3, 101, 0.02));
  ASSERT_TRUE(test.repeats_needed_for_target && test.repeats_needed_for_observed);
  EXPECT_FALSE(test.significant);
  // A design of n + n repeats at this noise detects 2 %, and n - 1 + n - 1 does not.
  auto detectable = [](size_t repeats) {
    return *welch_log_test(exact_noise(repeats, 100, 0.02), exact_noise(repeats, 100, 0.02))
                .min_detectable_percent;
  };
  const size_t needed = *test.repeats_needed_for_target;
  EXPECT_LE(detectable(needed), 2);
  EXPECT_GT(detectable(needed - 1), 2);
  // The observed 1 % change needs more.
  const size_t for_observed = *test.repeats_needed_for_observed;
  EXPECT_LE(detectable(for_observed), test.change_percent);
  EXPECT_GT(detectable(for_observed - 1), test.change_percent);
  EXPECT_GT(for_observed, needed);
}

TEST(Welch, SidesWithOneRepeat) {
  // 1 + 3: no test, but the noise of side B still says what a proper design would need.
  const AbTest one_three = welch_log_test(std::vector<double>{100}, exact_noise(3, 105, 0.02));
  EXPECT_FALSE(one_three.p_value);
  EXPECT_FALSE(one_three.ci_low_percent);
  EXPECT_FALSE(one_three.significant);
  EXPECT_NEAR(one_three.change_percent, 5, 1e-9);
  ASSERT_TRUE(one_three.log_sd && one_three.repeats_needed_for_observed &&
              one_three.min_detectable_percent);
  EXPECT_NEAR(*one_three.log_sd, 0.02, 1e-12);

  // 1 + 1: nothing is known about the noise unless the caller assumes some.
  const std::vector<double> a{100}, b{103};
  const AbTest blind = welch_log_test(a, b);
  EXPECT_FALSE(blind.log_sd);
  EXPECT_FALSE(blind.repeats_needed_for_target);
  EXPECT_FALSE(blind.min_detectable_percent);
  AbTestOptions options;
  options.assumed_log_sd = 0.02;
  const AbTest assumed = welch_log_test(a, b, options);
  ASSERT_TRUE(assumed.repeats_needed_for_target && assumed.min_detectable_percent);
  // Known noise: the normal approximation, 2 * ((1.960 + 0.842) * 0.02 / log 1.02)^2 = 15.9.
  EXPECT_EQ(*assumed.repeats_needed_for_target, 18u);  // t quantiles at 2n - 2 need a bit more
  EXPECT_NEAR(*assumed.min_detectable_percent,
              100 * std::expm1((1.959964 + 0.841621) * 0.02 * std::sqrt(2.0)), 1e-3);
}

TEST(Welch, IdenticalRepeatsAndBadInput) {
  const std::vector<double> flat{100, 100}, higher{110, 110};
  EXPECT_EQ(*welch_log_test(flat, flat).p_value, 1);
  const AbTest exact = welch_log_test(flat, higher);
  EXPECT_EQ(*exact.p_value, 0);
  EXPECT_TRUE(exact.significant);
  EXPECT_NEAR(*exact.ci_low_percent, 10, 1e-9);
  EXPECT_NEAR(*exact.ci_high_percent, 10, 1e-9);

  const std::vector<double> zero{100, 0}, negative{-1, 100}, not_a_number{std::nan(""), 1};
  EXPECT_THROW(welch_log_test(flat, zero), std::invalid_argument);
  EXPECT_THROW(welch_log_test(negative, flat), std::invalid_argument);
  EXPECT_THROW(welch_log_test(not_a_number, flat), std::invalid_argument);
  EXPECT_THROW(welch_log_test(std::vector<double>{}, flat), std::invalid_argument);
}

TEST(Permutation, ExactSplitsOfThreeAndThree) {
  // Every B above every A: 2 of the 20 splits are as extreme (this one and its mirror).
  const std::vector<double> a{100, 101, 102}, b{110, 111, 112};
  const AbTest test = permutation_log_test(a, b);
  ASSERT_TRUE(test.p_value && test.ci_low_percent && test.ci_high_percent);
  EXPECT_DOUBLE_EQ(*test.p_value, 0.1);
  EXPECT_FALSE(test.significant);
  EXPECT_FALSE(test.degrees_of_freedom);
  EXPECT_LE(*test.ci_low_percent, test.change_percent);
  EXPECT_GE(*test.ci_high_percent, test.change_percent);
  EXPECT_EQ(test.method, "permutation test on log (3 + 3 repeats)");
}

TEST(Permutation, FalsePositivesAndPowerAtFiveAndFive) {
  Normal normal(71);
  constexpr int kRounds = 300;
  int false_positives = 0, detected = 0;
  for (int round = 0; round < kRounds; ++round) {
    if (permutation_log_test(lognormal_repeats(normal, 5, 5000, 0.02),
                             lognormal_repeats(normal, 5, 5000, 0.02))
            .significant) {
      ++false_positives;
    }
    if (permutation_log_test(lognormal_repeats(normal, 5, 5000, 0.02),
                             lognormal_repeats(normal, 5, 5500, 0.02))
            .significant) {
      ++detected;
    }
  }
  EXPECT_LE(false_positives, 0.07 * kRounds);
  EXPECT_GE(detected, 0.9 * kRounds);
  // More splits than the exact limit: random ones, still a valid p-value.
  const AbTest large = permutation_log_test(lognormal_repeats(normal, 12, 5000, 0.02),
                                            lognormal_repeats(normal, 12, 5000, 0.02));
  EXPECT_GT(*large.p_value, 0);
  EXPECT_LE(*large.p_value, 1);
}

}  // namespace
}  // namespace pgwaitprof::model
