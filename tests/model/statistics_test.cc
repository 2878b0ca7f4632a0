// Distributions, batch-means error bars and MSER-5, checked against closed forms, table values
// and simulations with fixed seeds (the A/B tests are in statistics_welch_test.cc and
// statistics_ab_test.cc).
#include "model/statistics.h"

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

#include "tests/model/statistics_fixture.h"

namespace pgwaitprof::model {
namespace {

using namespace test_support;

TEST(StudentT, QuantileMatchesTableValues) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.303, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.960, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, std::numeric_limits<double>::infinity()), 1.960, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.995, 10), 3.169, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.95, 5), 2.015, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.8, 4), 0.941, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.025, 4), -2.776, 5e-4);
  EXPECT_EQ(student_t_quantile(0.5, 3), 0);
}

TEST(StudentT, QuantileMatchesClosedForms) {
  for (const double p : {1e-6, 0.01, 0.2, 0.6, 0.9, 0.9999}) {
    // One degree of freedom is the Cauchy distribution; two has an algebraic inverse.
    const double cauchy = std::tan(std::numbers::pi * (p - 0.5));
    EXPECT_NEAR(student_t_quantile(p, 1), cauchy, 1e-9 * std::max(1.0, std::abs(cauchy))) << p;
    const double two = (2 * p - 1) / std::sqrt(2 * p * (1 - p));
    EXPECT_NEAR(student_t_quantile(p, 2), two, 1e-9 * std::max(1.0, std::abs(two))) << p;
  }
}

TEST(StudentT, CdfMatchesClosedFormsAndTables) {
  for (const double t : {-30.0, -2.5, -0.3, 0.0, 0.7, 2.0, 12.0}) {
    EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / std::numbers::pi, 1e-12) << t;
    EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(t * t + 2)), 1e-12) << t;
    // Four degrees of freedom: 1/2 + sin(theta) (1 + cos^2(theta) / 2) / 2, tan(theta) = t / 2.
    const double sine = t / std::sqrt(4 + t * t);
    const double cosine_squared = 4 / (4 + t * t);
    EXPECT_NEAR(student_t_cdf(t, 4), 0.5 + sine * (1 + cosine_squared / 2) / 2, 1e-12) << t;
    EXPECT_NEAR(student_t_cdf(t, std::numeric_limits<double>::infinity()), normal_cdf(t), 1e-15);
  }
  EXPECT_NEAR(student_t_cdf(2.228, 10), 0.975, 1e-4);
  EXPECT_NEAR(student_t_cdf(-2.776, 4), 0.025, 1e-4);
  EXPECT_NEAR(student_t_cdf(1.96, 1e7), 0.975, 1e-4);
}

TEST(StudentT, QuantileInvertsCdf) {
  for (const double df : {0.5, 1.0, 3.7, 12.0, 250.0, 5000.0}) {
    for (const double p : {1e-9, 1e-3, 0.3, 0.7, 0.975, 1 - 1e-7}) {
      const double t = student_t_quantile(p, df);
      const double back = student_t_cdf(t, df);
      const double tail = std::min(p, 1 - p);
      EXPECT_NEAR(back, p, 1e-9 * tail) << "df " << df << " p " << p;
    }
  }
}

TEST(StudentT, RejectsBadArguments) {
  EXPECT_THROW(student_t_cdf(1, 0), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(0.5, -1), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(1.5, 3), std::invalid_argument);
  EXPECT_EQ(student_t_quantile(1, 3), std::numeric_limits<double>::infinity());
}

TEST(Normal, QuantileMatchesKnownValues) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-13);
  EXPECT_NEAR(normal_quantile(0.8), 0.8416212335729143, 1e-13);
  EXPECT_NEAR(normal_quantile(1e-10), -6.361340902404056, 1e-11);
  EXPECT_EQ(normal_quantile(0.5), 0);
  for (const double p : {1e-12, 0.01, 0.3, 0.99, 1 - 1e-9}) {
    EXPECT_NEAR(normal_cdf(normal_quantile(p)), p, 1e-12 * std::max(p, 1e-3)) << p;
  }
}

TEST(IncompleteBeta, MatchesClosedForms) {
  for (const double x : {0.0, 0.05, 0.3, 0.5, 0.9, 1.0}) {
    EXPECT_NEAR(regularized_incomplete_beta(2.5, 1, x), std::pow(x, 2.5), 1e-13) << x;
    EXPECT_NEAR(regularized_incomplete_beta(1, 3, x), 1 - std::pow(1 - x, 3), 1e-13) << x;
    EXPECT_NEAR(regularized_incomplete_beta(3.5, 0.7, x),
                1 - regularized_incomplete_beta(0.7, 3.5, 1 - x), 1e-13)
        << x;
  }
  EXPECT_NEAR(regularized_incomplete_beta(7, 7, 0.5), 0.5, 1e-13);
  EXPECT_THROW(regularized_incomplete_beta(0, 1, 0.5), std::invalid_argument);
  EXPECT_THROW(regularized_incomplete_beta(1, 1, 1.5), std::invalid_argument);
}

// --- Batch means ---------------------------------------------------------------------------

struct Calibration {
  double standard_error_ratio = 0;  // mean estimated standard error / true one
  double naive_ratio = 0;           // mean sd / sqrt(n) / true one
  double coverage = 0;              // of the 95 % interval around the true mean, 0
  double reliable = 0;              // share of the series flagged reliable
};

// Many AR(1) series: the true standard error of the mean is the sd of their means.
Calibration calibrate(double phi, size_t size, size_t series, uint64_t seed) {
  Normal normal(seed);
  std::vector<double> means, standard_errors, naive;
  Calibration calibration;
  for (size_t round = 0; round < series; ++round) {
    const std::vector<double> values = ar1(normal, phi, size);
    const MeanEstimate estimate = estimate_mean(values);
    EXPECT_NEAR(estimate.mean, mean_of(values), 1e-12);
    means.push_back(estimate.mean);
    standard_errors.push_back(estimate.standard_error);
    naive.push_back(sd_of(values) / std::sqrt(static_cast<double>(size)));
    if (std::abs(estimate.mean) <= estimate.half_width()) calibration.coverage += 1;
    if (estimate.reliable) calibration.reliable += 1;
  }
  const double truth = sd_of(means);
  const auto count = static_cast<double>(series);
  calibration.standard_error_ratio = mean_of(standard_errors) / truth;
  calibration.naive_ratio = mean_of(naive) / truth;
  calibration.coverage /= count;
  calibration.reliable /= count;
  return calibration;
}

TEST(BatchMeans, StrongAutocorrelation) {
  // phi 0.9: the integrated autocorrelation time is 19 intervals, so sd / sqrt(n) is ~4.4x
  // too small.
  const Calibration strong = calibrate(0.9, 600, 2000, 11);
  EXPECT_NEAR(strong.standard_error_ratio, 1, 0.25);
  EXPECT_LT(strong.naive_ratio, 1.0 / 3);
  EXPECT_GE(strong.coverage, 0.90);
  EXPECT_LE(strong.coverage, 0.99);
  EXPECT_GE(strong.reliable, 0.5);
  RecordProperty("phi09_se_ratio", std::to_string(strong.standard_error_ratio));
  RecordProperty("phi09_naive_ratio", std::to_string(strong.naive_ratio));
  RecordProperty("phi09_coverage", std::to_string(strong.coverage));
  RecordProperty("phi09_reliable", std::to_string(strong.reliable));
}

TEST(BatchMeans, ModerateAutocorrelation) {
  const Calibration moderate = calibrate(0.5, 600, 1000, 12);
  EXPECT_NEAR(moderate.standard_error_ratio, 1, 0.15);
  EXPECT_LT(moderate.naive_ratio, 0.7);
  EXPECT_GE(moderate.coverage, 0.92);
  EXPECT_LE(moderate.coverage, 0.98);
  EXPECT_GE(moderate.reliable, 0.95);
  RecordProperty("phi05_se_ratio", std::to_string(moderate.standard_error_ratio));
  RecordProperty("phi05_coverage", std::to_string(moderate.coverage));
}

TEST(BatchMeans, IndependentIntervals) {
  const Calibration white = calibrate(0, 600, 1000, 13);
  EXPECT_NEAR(white.standard_error_ratio, 1, 0.1);
  EXPECT_NEAR(white.naive_ratio, 1, 0.05);
  EXPECT_NEAR(white.coverage, 0.95, 0.02);
  EXPECT_GE(white.reliable, 0.98);
  RecordProperty("phi0_se_ratio", std::to_string(white.standard_error_ratio));
  RecordProperty("phi0_coverage", std::to_string(white.coverage));
}

TEST(BatchMeans, ShortStronglyCorrelatedSeriesAreUnreliable) {
  // 60 intervals of phi 0.9 hold about 3 independent observations: no error bar can be
  // calibrated, and the flag must say so.
  EXPECT_LT(calibrate(0.9, 60, 500, 14).reliable, 0.1);
  EXPECT_GT(calibrate(0, 60, 500, 15).reliable, 0.9);
}

TEST(BatchMeans, IndependentBatchesGiveTheClassicFormula) {
  // Alternating values have negative autocorrelation: batches of one interval are chosen, no
  // correction applies, and the error is the textbook sd / sqrt(n).
  std::vector<double> values;
  values.reserve(40);
  for (int index = 0; index < 40; ++index) {
    values.push_back((index % 2 == 0 ? 10.0 : 12.0) + 0.1 * (index % 3));
  }
  const MeanEstimate estimate = estimate_mean(values);
  EXPECT_DOUBLE_EQ(estimate.mean, mean_of(values));
  EXPECT_NEAR(estimate.standard_error, sd_of(values) / std::sqrt(40.0), 1e-12);
  EXPECT_EQ(estimate.batches, 40u);
  EXPECT_EQ(estimate.batch_size, 1u);
  EXPECT_EQ(estimate.degrees_of_freedom, 39);
  EXPECT_EQ(estimate.batch_autocorrelation, 0);
  EXPECT_TRUE(estimate.reliable);
  EXPECT_EQ(estimate.method, "batch means (40 batches of 1 s)");
  EXPECT_NEAR(estimate.half_width(), student_t_quantile(0.975, 39) * estimate.standard_error,
              1e-12);
}

TEST(BatchMeans, GrowsBatchesForAPersistentSeries) {
  Normal normal(16);
  BatchMeansOptions options;
  options.interval = 500ms;
  const MeanEstimate estimate = estimate_mean(ar1(normal, 0.95, 600), options);
  EXPECT_GE(estimate.batch_size, 12u);
  EXPECT_EQ(estimate.batches, 600 / estimate.batch_size);
  EXPECT_EQ(estimate.degrees_of_freedom, static_cast<double>(estimate.batches - 1));
  EXPECT_EQ(estimate.method, fmt::format("batch means ({} batches of {:g} s)", estimate.batches,
                                         0.5 * static_cast<double>(estimate.batch_size)));
}

TEST(BatchMeans, EdgeCases) {
  const MeanEstimate empty = estimate_mean(std::vector<double>{});
  EXPECT_TRUE(std::isnan(empty.standard_error));
  EXPECT_FALSE(empty.reliable);
  EXPECT_EQ(empty.method, "no data");
  EXPECT_TRUE(std::isnan(empty.half_width()));

  const MeanEstimate single = estimate_mean(std::vector<double>{7});
  EXPECT_EQ(single.mean, 7);
  EXPECT_TRUE(std::isnan(single.standard_error));
  EXPECT_FALSE(single.reliable);

  const MeanEstimate constant = estimate_mean(std::vector<double>(50, 3.5));
  EXPECT_DOUBLE_EQ(constant.mean, 3.5);
  EXPECT_NEAR(constant.standard_error, 0, 1e-12);
  EXPECT_TRUE(constant.reliable);

  // Too short for reliable_batches batches, however uncorrelated.
  std::vector<double> short_series;
  short_series.reserve(15);
  for (int index = 0; index < 15; ++index) short_series.push_back(index % 2);
  const MeanEstimate short_estimate = estimate_mean(short_series);
  EXPECT_FALSE(short_estimate.reliable);
  EXPECT_TRUE(std::isfinite(short_estimate.standard_error));

  const std::vector<double> two{1, 2};
  const std::vector<double> three{1, 2, 3};
  EXPECT_THROW(estimate_ratio(two, three), std::invalid_argument);
  EXPECT_THROW(estimate_weighted_mean(two, three), std::invalid_argument);
  const std::vector<double> with_nan{1, std::nan(""), 3};
  EXPECT_THROW(estimate_mean(with_nan), std::invalid_argument);
  const std::vector<double> negative{1, -1, 3};
  EXPECT_THROW(estimate_ratio(three, negative), std::invalid_argument);
  const std::vector<double> zeros{0, 0, 0};
  EXPECT_EQ(estimate_ratio(three, zeros).method, "no data");
}

TEST(BatchMeans, WeightedMeanCountsTheShortLastInterval) {
  // 59 full seconds at 100 tps and a last tenth of a second at 200 tps: total transactions
  // over total time, not the mean of the 60 rates.
  std::vector<double> tps(59, 100.0), seconds(59, 1.0);
  tps.push_back(200);
  seconds.push_back(0.1);
  const MeanEstimate estimate = estimate_weighted_mean(tps, seconds);
  EXPECT_DOUBLE_EQ(estimate.mean, (59 * 100 + 20) / 59.1);

  // Equal weights are the plain mean.
  Normal normal(21);
  const std::vector<double> values = ar1(normal, 0.6, 300);
  const std::vector<double> ones(values.size(), 2.0);
  const MeanEstimate weighted = estimate_weighted_mean(values, ones);
  const MeanEstimate plain = estimate_mean(values);
  EXPECT_NEAR(weighted.mean, plain.mean, 1e-12);
  EXPECT_NEAR(weighted.standard_error, plain.standard_error, 1e-12);
  EXPECT_EQ(weighted.method, plain.method);
}

// Per-interval counts of one wait key whose rate drifts (lognormal AR(1), phi 0.8), with
// 95-105 snapshots per interval and a short last interval.
struct CountSeries {
  std::vector<double> counts;
  std::vector<double> snapshots;
};

CountSeries count_series(Normal& normal, size_t size) {
  CountSeries series;
  const std::vector<double> drift = ar1(normal, 0.8, size);
  for (size_t index = 0; index < size; ++index) {
    const double snapshots =
        index + 1 == size ? 37 : 95 + std::floor(11 * normal.uniform());  // 95..105
    const double expected = snapshots * 0.5 * std::exp(0.3 * drift[index]);
    // Poisson noise, normal approximation.
    series.counts.push_back(std::max(0.0, std::round(expected + std::sqrt(expected) * normal())));
    series.snapshots.push_back(snapshots);
  }
  return series;
}

TEST(BatchMeans, RatioOfCountsAcrossSeries) {
  Normal normal(31);
  constexpr size_t kSeries = 1000, kSize = 300;
  std::vector<CountSeries> all;
  std::vector<double> ratios, standard_errors, poisson;
  for (size_t round = 0; round < kSeries; ++round) {
    all.push_back(count_series(normal, kSize));
    const CountSeries& series = all.back();
    const MeanEstimate estimate = estimate_ratio(series.counts, series.snapshots);
    const double counts = std::accumulate(series.counts.begin(), series.counts.end(), 0.0);
    const double snapshots = std::accumulate(series.snapshots.begin(), series.snapshots.end(), 0.0);
    EXPECT_DOUBLE_EQ(estimate.mean, counts / snapshots);
    ratios.push_back(estimate.mean);
    standard_errors.push_back(estimate.standard_error);
    poisson.push_back(std::sqrt(counts) / snapshots);  // as if every sample were independent
  }
  const double truth = sd_of(ratios);
  const double center = mean_of(ratios);
  size_t covered = 0;
  for (size_t round = 0; round < kSeries; ++round) {
    const CountSeries& series = all[round];
    const MeanEstimate estimate = estimate_ratio(series.counts, series.snapshots);
    if (std::abs(estimate.mean - center) <= estimate.half_width()) ++covered;
  }
  const double ratio = mean_of(standard_errors) / truth;
  const double coverage = static_cast<double>(covered) / kSeries;
  EXPECT_NEAR(ratio, 1, 0.25);
  EXPECT_LT(mean_of(poisson) / truth, 0.5);
  EXPECT_GE(coverage, 0.9);
  RecordProperty("ratio_se_ratio", std::to_string(ratio));
  RecordProperty("ratio_poisson_ratio", std::to_string(mean_of(poisson) / truth));
  RecordProperty("ratio_coverage", std::to_string(coverage));
}

TEST(WaitKey, ShareAndAasAreRatiosOfTotals) {
  // A constant share (1/8 of the samples) and AAS (0.5) in every interval, the last one
  // shorter: exact estimates with no error.
  std::vector<IntervalCounts> intervals(29, IntervalCounts{50, 100, 400});
  intervals.push_back({10, 20, 80});
  const WaitKeyEstimate constant = estimate_wait_key(intervals);
  EXPECT_DOUBLE_EQ(constant.share.mean, 0.125);
  EXPECT_DOUBLE_EQ(constant.aas.mean, 0.5);
  EXPECT_NEAR(constant.share.standard_error, 0, 1e-12);
  EXPECT_NEAR(constant.aas.standard_error, 0, 1e-12);

  // 3 s stalls starting at random seconds (one every 30 s on average): the estimates are the
  // ratios of totals, with the error of the ratio estimator on the same numbers.
  Normal normal(41);
  std::vector<double> counts, snapshots, samples;
  intervals.clear();
  int stalled = 0;
  for (uint64_t second = 0; second < 300; ++second) {
    if (stalled == 0 && normal.uniform() < 1.0 / 30) stalled = 3;
    const uint64_t count = stalled > 0 ? 400 : static_cast<uint64_t>(10 * normal.uniform());
    if (stalled > 0) --stalled;
    intervals.push_back({count, 100, 1000});
    counts.push_back(static_cast<double>(count));
    snapshots.push_back(100);
    samples.push_back(1000);
  }
  const WaitKeyEstimate stalls = estimate_wait_key(intervals);
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  EXPECT_DOUBLE_EQ(stalls.aas.mean, total / 30000);
  EXPECT_DOUBLE_EQ(stalls.share.mean, total / 300000);
  const MeanEstimate aas = estimate_ratio(counts, snapshots);
  EXPECT_DOUBLE_EQ(stalls.aas.standard_error, aas.standard_error);
  EXPECT_DOUBLE_EQ(stalls.share.standard_error, estimate_ratio(counts, samples).standard_error);
  // The number of stalls decides the share, not the number of samples: the binomial error
  // over samples is far smaller.
  const double share = stalls.share.mean;
  EXPECT_GT(stalls.share.standard_error, 5 * std::sqrt(share * (1 - share) / 300000));
}

// --- MSER-5 --------------------------------------------------------------------------------

std::vector<double> warm_up_series(Normal& normal, size_t ramp, size_t size) {
  std::vector<double> tps(size);
  for (size_t index = 0; index < size; ++index) {
    const double level =
        index < ramp ? 1000.0 * static_cast<double>(index) / static_cast<double>(ramp) : 1000.0;
    tps[index] = level + 20 * normal();
  }
  return tps;
}

TEST(Mser5, FindsTheEndOfAWarmUpRamp) {
  Normal normal(51);
  std::vector<size_t> drops;
  drops.reserve(200);
  for (int round = 0; round < 200; ++round) {
    drops.push_back(mser5_steady_state(warm_up_series(normal, 60, 300)).drop_intervals);
  }
  std::sort(drops.begin(), drops.end());
  EXPECT_GE(drops.front(), 55u);            // never keeps a visible part of the ramp
  EXPECT_GE(drops[drops.size() / 2], 60u);  // median
  EXPECT_LE(drops[drops.size() / 2], 70u);
  EXPECT_LE(drops[drops.size() * 9 / 10], 95u);  // rarely throws away much steady state
  for (const size_t drop : drops) EXPECT_EQ(drop % 5, 0u);
}

TEST(Mser5, KeepsAStationarySeries) {
  Normal normal(52);
  std::vector<double> drops;
  size_t none = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<double> tps(300);
    for (auto& value : tps) value = 1000 + 20 * normal();
    const SteadyState state = mser5_steady_state(tps);
    drops.push_back(static_cast<double>(state.drop_intervals));
    if (state.drop_intervals == 0) ++none;
  }
  EXPECT_GE(none, 110u);                  // most series keep everything
  EXPECT_LT(mean_of(drops), 0.05 * 300);  // and on average little is dropped
}

TEST(Mser5, StepsAndEdgeCases) {
  // A noiseless step: the statistic is 0 from the step on; the first such point wins.
  std::vector<double> step(25, 0.0);
  step.resize(100, 1000.0);
  EXPECT_EQ(mser5_steady_state(step).drop_intervals, 25u);
  EXPECT_FALSE(mser5_steady_state(step).at_search_limit);

  EXPECT_EQ(mser5_steady_state(std::vector<double>(100, 5.0)).drop_intervals, 0u);
  EXPECT_EQ(mser5_steady_state(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}).drop_intervals, 0u);
  EXPECT_EQ(mser5_steady_state(std::vector<double>{}).drop_intervals, 0u);

  // A ramp over 80 % of the run: the best cut is the last one searched, at half the series.
  Normal normal(53);
  const SteadyState long_ramp = mser5_steady_state(warm_up_series(normal, 160, 200));
  EXPECT_EQ(long_ramp.drop_intervals, 100u);
  EXPECT_TRUE(long_ramp.at_search_limit);
}

}  // namespace
}  // namespace pgwaitprof::model
