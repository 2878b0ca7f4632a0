// E-Divisive with means (model/change_points.h): the published examples of MongoDB's
// signal-processing-algorithms (tests/test_energy_statistics.py and tests/test_e_divisive.py at
// aec099a9), then series with no step, one, two, noise only, small steps, and too few runs.
#include "model/change_points.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "tests/model/statistics_fixture.h"

namespace pgwaitprof::model {
namespace {

using test_support::Normal;

std::vector<double> range(double begin, double end, double step) {
  std::vector<double> values;
  for (double value = begin; value < end; value += step) values.push_back(value);
  return values;
}

// Levels with multiplicative normal noise of `relative_sd`.
std::vector<double> levels(Normal& normal, const std::vector<std::pair<size_t, double>>& parts,
                           double relative_sd) {
  std::vector<double> series;
  for (const auto& [runs, level] : parts) {
    for (size_t run = 0; run < runs; ++run) series.push_back(level * (1 + relative_sd * normal()));
  }
  return series;
}

// test_energy_statistics.py's univariate cases, to its three decimals.
TEST(EnergyStatistics, PublishedExamples) {
  struct Case {
    std::vector<double> x, y;
    double e, t, h;
  };
  const std::vector<Case> cases = {
      {range(1, 100, 1), range(1, 105, 1), 0.160, 8.136, 0.002},
      {range(1, 100, 1), range(10000, 13000, 14), 21859.691, 1481794.709, 0.954},
      {range(1, 300, 1), range(1000, 5000, 10), 4257.009, 728381.015, 0.748},
      {range(300, 500, 1), range(400, 900, 11), 268.352, 10035.943, 0.532},
  };
  for (const auto& example : cases) {
    const auto statistics = energy_statistics(example.x, example.y);
    EXPECT_NEAR(statistics.e, example.e, 0.0015);
    EXPECT_NEAR(statistics.t, example.t, 0.0015);
    EXPECT_NEAR(statistics.h, example.h, 0.0015);
  }
  const auto same = energy_statistics(range(10, 70, 1), range(10, 70, 1));
  EXPECT_EQ(same.e, 0);
  EXPECT_EQ(same.t, 0);
  EXPECT_THROW(energy_statistics({}, range(1, 3, 1)), std::invalid_argument);
}

// The one-pass statistic of every split equals the pairwise definition.
TEST(EnergyStatistics, SplitStatisticsMatchThePairwiseSums) {
  Normal normal(7);
  std::vector<double> series = levels(normal, {{9, 100}, {8, 120}}, 0.05);
  series[3] = series[11];  // a tie across the split
  const auto statistics = split_statistics(series);
  ASSERT_EQ(statistics.size(), series.size());
  EXPECT_EQ(statistics[0], 0);
  for (size_t tau = 1; tau < series.size(); ++tau) {
    const std::span<const double> all(series);
    const auto expected = energy_statistics(all.first(tau), all.subspan(tau)).t;
    EXPECT_NEAR(statistics[tau], expected, 1e-9 * std::max(1.0, expected)) << tau;
  }
}

// test_e_divisive.py: test_absolute_certainty_univariate.
TEST(ChangePoints, PublishedCertainty) {
  std::vector<double> series(1000, 0);
  series.resize(2000, 1);
  const auto found = find_change_points(series);
  ASSERT_EQ(found.points.size(), 1u);
  EXPECT_EQ(found.points[0].index, 1000u);
  EXPECT_LE(found.points[0].p_value, 0.01);
}

TEST(ChangePoints, NoStep) {
  const std::vector<double> flat(40, 2100);
  const auto found = find_change_points(flat);
  EXPECT_TRUE(found.points.empty());
  ASSERT_EQ(found.segments.size(), 1u);
  EXPECT_EQ(found.segments[0].mean, 2100);
}

TEST(ChangePoints, OneStepWithItsSegments) {
  Normal normal(11);
  const auto series = levels(normal, {{30, 2100}, {12, 1900}}, 0.02);
  const auto found = find_change_points(series);
  ASSERT_EQ(found.points.size(), 1u);
  EXPECT_EQ(found.points[0].index, 30u);
  EXPECT_NEAR(found.points[0].relative_change, -0.095, 0.02);
  ASSERT_EQ(found.segments.size(), 2u);
  EXPECT_EQ(found.segments[1].begin, 30u);
  EXPECT_EQ(found.segments[1].end, 42u);
  EXPECT_NEAR(found.segments[0].mean, 2100, 30);
}

TEST(ChangePoints, TwoSteps) {
  Normal normal(12);
  const auto series = levels(normal, {{20, 100}, {15, 120}, {15, 90}}, 0.02);
  const auto found = find_change_points(series);
  ASSERT_EQ(found.points.size(), 2u);
  EXPECT_EQ(found.points[0].index, 20u);
  EXPECT_EQ(found.points[1].index, 35u);
  EXPECT_GT(found.points[0].relative_change, 0.1);
  EXPECT_LT(found.points[1].relative_change, -0.15);
}

// The accepted false-positive probability holds over many noise-only series (expected 3 of
// 300 at 0.01; 8 or more happens with probability below 0.5 % if the rate were right).
TEST(ChangePoints, NoiseOnlyKeepsTheFalsePositiveRate) {
  Normal normal(13);
  size_t with_points = 0;
  for (size_t series_index = 0; series_index < 300; ++series_index) {
    const auto series = levels(normal, {{40, 1000}}, 0.03);
    ChangePointOptions options;
    options.min_relative_change = 0;
    options.seed = series_index;
    with_points += !find_change_points(series, options).points.empty();
  }
  EXPECT_LE(with_points, 7u);
}

// A step the test sees but below the smallest change that matters is merged away.
TEST(ChangePoints, StepsBelowTheMinimumDoNotCount) {
  Normal normal(14);
  const auto series = levels(normal, {{25, 1000}, {25, 1010}}, 0.001);
  EXPECT_TRUE(find_change_points(series).points.empty());
  ChangePointOptions options;
  options.min_relative_change = 0.005;
  const auto found = find_change_points(series, options);
  ASSERT_EQ(found.points.size(), 1u);
  EXPECT_EQ(found.points[0].index, 25u);
}

// One odd last run is not a level; three runs of the new level are.
TEST(ChangePoints, OneOddRunIsNoChangePoint) {
  Normal normal(15);
  auto series = levels(normal, {{30, 1000}}, 0.01);
  series.push_back(700);
  EXPECT_TRUE(find_change_points(series).points.empty());
  series.push_back(702);
  series.push_back(698);
  const auto found = find_change_points(series);
  ASSERT_EQ(found.points.size(), 1u);
  EXPECT_EQ(found.points[0].index, 30u);
}

TEST(ChangePoints, TooFewRunsSaysHowManyAreNeeded) {
  // The permutation test has half of false_positive (the end test the other half):
  // 2 / C(11, 5) = 0.0043 <= 0.005; 2 / C(10, 5) = 0.0079.
  EXPECT_EQ(runs_needed_for({}), 11u);
  ChangePointOptions loose;
  loose.false_positive = 0.05;
  EXPECT_EQ(runs_needed_for(loose), 9u);  // 2 / C(9, 4) = 0.016; 2 / C(8, 4) = 0.029 > 0.025
  loose.end_runs = 0;                     // E-Divisive alone has all of it
  EXPECT_EQ(runs_needed_for(loose), 8u);  // 2 / C(8, 4) = 0.029; 2 / C(7, 3) = 0.057
  const std::vector<double> short_series = {1, 1, 1, 2, 2, 2};
  const auto found = find_change_points(short_series);
  EXPECT_TRUE(found.too_short);
  EXPECT_EQ(found.runs_needed, 11u);
  EXPECT_TRUE(found.points.empty());
  ASSERT_EQ(found.segments.size(), 1u);
  // With a run more than it needs (499 permutations resolve p to 1/500), a clean step passes.
  const std::vector<double> enough = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2};
  const auto passed = find_change_points(enough);
  EXPECT_FALSE(passed.too_short);
  ASSERT_EQ(passed.points.size(), 1u);
  EXPECT_EQ(passed.points[0].index, 6u);
}

// A slow run before a step down to a much lower level: on the raw scale it is nearer the new
// level (1,300 against 3,000 and 30); on the log scale nearer the old one, where it belongs.
TEST(ChangePoints, LogScaleKeepsASlowRunWithItsLevel) {
  const std::vector<double> series = {3623, 3622, 2630, 2661, 3187, 3249, 1286, 4, 3, 43, 46, 45};
  EXPECT_EQ(find_change_points(series).points.at(0).index, 6u);
  ChangePointOptions ratios;
  ratios.log_scale = true;
  const auto found = find_change_points(series, ratios);
  ASSERT_EQ(found.points.size(), 1u);
  EXPECT_EQ(found.points[0].index, 7u);
  EXPECT_NEAR(
      found.points[0].mean_after,
      std::exp((std::log(4.0) + std::log(3.0) + std::log(43.0) + std::log(46.0) + std::log(45.0)) /
               5),
      1e-9);
  EXPECT_THROW(find_change_points(std::vector<double>{1, 0}, ratios), std::invalid_argument);
}

TEST(ChangePoints, SameSeedSameAnswer) {
  Normal normal(16);
  const auto series = levels(normal, {{20, 100}, {20, 104}}, 0.02);
  ChangePointOptions options;
  options.min_relative_change = 0;
  const auto first = find_change_points(series, options);
  const auto second = find_change_points(series, options);
  ASSERT_EQ(first.points.size(), second.points.size());
  for (size_t index = 0; index < first.points.size(); ++index) {
    EXPECT_EQ(first.points[index].index, second.points[index].index);
    EXPECT_EQ(first.points[index].p_value, second.points[index].p_value);
  }
  EXPECT_THROW(find_change_points(std::vector<double>{1, NAN}), std::invalid_argument);
}

}  // namespace
}  // namespace pgwaitprof::model
