// The end test (model/end_change.h): its t against Student's t table, the Bonferroni factor,
// the direction, its false-alarm rate under normal noise and its power against E-Divisive's
// permutation test at the same false-alarm rate, and its place in find_change_points.
#include "model/end_change.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "model/change_points.h"
#include "model/statistics.h"
#include "tests/model/statistics_fixture.h"

namespace pgwaitprof::model {
namespace {

using test_support::Normal;

// Ten values with mean 0 and sample sd 1 exactly.
std::vector<double> standard_ten() {
  std::vector<double> values = {-1.5, -1.0, -0.7, -0.3, 0.0, 0.1, 0.4, 0.6, 1.1, 1.3};
  const double mean = sample_mean(values);
  for (auto& value : values) value -= mean;
  const double sd = sample_sd(values);
  for (auto& value : values) value /= sd;
  return values;
}

// Student's t table (e.g. Hahn and Meeker, "Statistical Intervals", table A.12, or any): with 9
// degrees of freedom, P(T > 3.250) = 0.005 and P(T > 2.262) = 0.025. Ten values before and two
// after whose mean is t x sqrt(1/2 + 1/10) above theirs give that p.
TEST(EndChange, TheTailAgainstTheValuesBeforeIsStudentsT) {
  EndChangeOptions options;
  options.min_runs = options.max_runs = 2;
  options.direction = ChangeDirection::kRise;
  for (const auto& [t, p] : {std::pair{3.250, 0.005}, std::pair{2.262, 0.025}}) {
    auto values = standard_ten();
    const double after = t * std::sqrt(1.0 / 2 + 1.0 / 10);
    values.push_back(after - 0.25);
    values.push_back(after + 0.25);
    const auto found = find_end_change(values, options);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->index, 10u);
    EXPECT_EQ(found->runs, 2u);
    EXPECT_NEAR(found->t, t, 1e-9);
    EXPECT_NEAR(found->p_value, p, 0.0002 * p / 0.005);
    EXPECT_NEAR(found->mean_after, after, 1e-12);
    EXPECT_NEAR(found->mean_before, 0, 1e-12);
    // The other direction sees no change; either direction doubles p.
    options.direction = ChangeDirection::kFall;
    EXPECT_NEAR(find_end_change(values, options)->p_value, 1 - p, 0.0002);
    options.direction = ChangeDirection::kEither;
    EXPECT_NEAR(find_end_change(values, options)->p_value, 2 * p, 0.0004 * p / 0.005);
    options.direction = ChangeDirection::kRise;
  }
}

// The smallest p over the k tested, times their number; the values before each k are at most
// max_before, the nearest.
TEST(EndChange, BonferroniOverTheRunsTested) {
  Normal normal(7);
  std::vector<double> values;
  for (int run = 0; run < 30; ++run) values.push_back(normal());
  for (int run = 0; run < 3; ++run) values.push_back(4 + normal() * 0.1);
  EndChangeOptions options;
  options.min_runs = 2;
  options.max_runs = 5;
  options.max_before = 20;
  options.direction = ChangeDirection::kRise;
  const auto found = find_end_change(values, options);
  ASSERT_TRUE(found);
  double smallest = 1;
  size_t best_runs = 0;
  for (size_t runs = 2; runs <= 5; ++runs) {
    const std::span<const double> all(values);
    const auto before = all.subspan(values.size() - runs - 20, 20);
    const auto tail = all.subspan(values.size() - runs);
    const double t = (sample_mean(tail) - sample_mean(before)) /
                     (sample_sd(before) * std::sqrt(1.0 / runs + 1.0 / 20));
    const double p = student_t_upper_tail(t, 19);
    if (p < smallest) {
      smallest = p;
      best_runs = runs;
    }
  }
  EXPECT_EQ(best_runs, 3u);
  EXPECT_EQ(found->runs, 3u);
  EXPECT_EQ(found->index, 30u);
  EXPECT_NEAR(found->p_value, 4 * smallest, 1e-12 + 1e-9 * smallest);
}

TEST(EndChange, NothingToTest) {
  EndChangeOptions options;  // 2 to 5 runs after, 10 before at least
  EXPECT_FALSE(find_end_change(std::vector<double>(11, 1.0), options));  // one short
  EXPECT_FALSE(find_end_change(std::vector<double>(20, 1.0), options));  // sd 0 before
  std::vector<double> twelve(10, 1.0);
  twelve[3] = 1.1;
  twelve.push_back(5);
  twelve.push_back(5);
  const auto found = find_end_change(twelve, options);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->runs, 2u);  // the only k with 10 before
  EXPECT_FALSE(find_end_change(std::vector<double>{}, options));
}

// Normal noise without change: the adjusted p is at most alpha in at most alpha of the series
// (and not far below: Bonferroni over correlated k is conservative by a factor under 4).
TEST(EndChange, FalseAlarmsUnderNormalNoiseStayWithinAlpha) {
  Normal normal(49);
  const size_t trials = 40000;
  size_t alarms = 0;
  for (size_t trial = 0; trial < trials; ++trial) {
    std::vector<double> values(12 + trial % 30);
    for (auto& value : values) value = normal();
    const auto found = find_end_change(values);
    alarms += found && found->p_value <= 0.005;
  }
  const double rate = static_cast<double>(alarms) / trials;
  EXPECT_LE(rate, 0.005 + 3 * std::sqrt(0.005 * 0.995 / trials)) << rate;
  EXPECT_GE(rate, 0.005 / 4) << rate;
}

// A 10 % fall of tps (log scale, 4 % noise) 3 runs before the end of 20 to 30 runs: found by
// find_change_points with the end test at the default false-positive probability in most
// series, by E-Divisive alone in far fewer; in series without change, both stay within the
// probability.
TEST(EndChange, MorePowerfulThanThePermutationTestAtTheEnd) {
  Normal normal(4949);
  ChangePointOptions with_end;
  with_end.log_scale = true;
  with_end.end_direction = ChangeDirection::kFall;
  ChangePointOptions alone = with_end;
  alone.end_runs = 0;
  const size_t trials = 200;
  size_t found_with = 0, found_alone = 0, false_with = 0, false_alone = 0;
  for (size_t trial = 0; trial < trials; ++trial) {
    const size_t before = 20 + trial % 11;
    std::vector<double> flat, stepped;
    for (size_t run = 0; run < before + 3; ++run) {
      const double noise = std::exp(0.04 * normal());
      flat.push_back(1000 * noise);
      stepped.push_back((run < before ? 1000 : 900) * noise);
    }
    const auto at_step = [&](const ChangePoints& found) {
      for (const auto& point : found.points) {
        if (point.index + 1 >= before && point.index <= before + 1) return true;
      }
      return false;
    };
    found_with += at_step(find_change_points(stepped, with_end));
    found_alone += at_step(find_change_points(stepped, alone));
    false_with += !find_change_points(flat, with_end).points.empty();
    false_alone += !find_change_points(flat, alone).points.empty();
  }
  EXPECT_GE(found_with, trials * 3 / 4) << found_with;
  EXPECT_GE(found_with, found_alone + trials / 4) << found_with << " vs " << found_alone;
  EXPECT_LE(false_with, 5u);  // 0.01 x 200 = 2 expected at most
  EXPECT_LE(false_alone, 5u);
}

// Copies of one run before the step (sd 0, as the daemon's test history has them): with min_sd
// they are tested, and the new level's 3 runs, not 2 of them, are named.
TEST(EndChange, CopiesOfOneRunBefore) {
  std::vector<double> series(10, 1849);
  series.push_back(41.37);
  series.push_back(41.25);
  EndChangeOptions options;
  options.direction = ChangeDirection::kFall;
  EXPECT_FALSE(find_end_change(series, options));  // sd 0 before the 2 runs, too few for 3
  ChangePointOptions method;
  method.log_scale = true;
  method.end_direction = ChangeDirection::kFall;
  auto found = find_change_points(series, method);
  ASSERT_EQ(found.points.size(), 1u);
  EXPECT_EQ(found.points[0].index, 10u);
  series.push_back(41.30);
  found = find_change_points(series, method);
  ASSERT_EQ(found.points.size(), 1u);
  EXPECT_EQ(found.points[0].index, 10u);
}

// In find_change_points: the end test names the first run of the new level with its segments,
// respects min_relative_change and end_direction, and leaves E-Divisive's points inside.
TEST(EndChange, InFindChangePoints) {
  Normal normal(11);
  std::vector<double> series;
  for (int run = 0; run < 15; ++run) series.push_back(1000 * std::exp(0.01 * normal()));
  for (int run = 0; run < 15; ++run) series.push_back(1500 * std::exp(0.01 * normal()));
  for (int run = 0; run < 2; ++run) series.push_back(1350 * std::exp(0.01 * normal()));
  ChangePointOptions options;
  options.log_scale = true;
  options.end_direction = ChangeDirection::kFall;
  auto found = find_change_points(series, options);
  ASSERT_EQ(found.points.size(), 2u);
  EXPECT_EQ(found.points[0].index, 15u);
  EXPECT_EQ(found.points[1].index, 30u);
  EXPECT_LE(found.points[1].p_value, end_false_positive(options));
  EXPECT_NEAR(found.points[1].relative_change, -0.1, 0.02);
  ASSERT_EQ(found.segments.size(), 3u);
  EXPECT_EQ(found.segments[2].begin, 30u);
  EXPECT_NEAR(found.segments[2].mean, 1350, 30);
  EXPECT_NEAR(found.points[1].mean_before, 1500, 30);
  // A rise at the end is not a regression of tps: left to E-Divisive (2 runs: too few).
  options.end_direction = ChangeDirection::kRise;
  EXPECT_EQ(find_change_points(series, options).points.size(), 1u);
  // Nor a step under min_relative_change, however clear.
  options.end_direction = ChangeDirection::kFall;
  options.min_relative_change = 0.15;
  found = find_change_points(series, options);
  ASSERT_EQ(found.points.size(), 1u);
  EXPECT_EQ(found.points[0].index, 15u);
}

}  // namespace
}  // namespace pgwaitprof::model
