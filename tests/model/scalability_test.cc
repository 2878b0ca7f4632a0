// The Universal Scalability Law fit on synthetic sweeps drawn from known sigma, kappa and lambda
// with run-to-run noise (lognormal, 3 % per run, a fixed seed): it recovers them and N* within
// 10 % for linear, contention-bound and coherency-bound shapes (with and without a retrograde
// region), says "not constrained" where the data cannot say, and flags a poor fit; the knee and
// the waits that grow across it on hand-made cells.
#include "model/scalability.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace pgwaitprof::model {
namespace {

std::vector<ThroughputPoint> sweep(const UslParameters& truth, const std::vector<int>& clients,
                                   int repeats, double noise, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> log_noise(0, noise);
  std::vector<ThroughputPoint> points;
  for (const int count : clients) {
    for (int repeat = 0; repeat < repeats; ++repeat) {
      points.push_back({count, usl_throughput(truth, count) * std::exp(log_noise(generator))});
    }
  }
  return points;
}

const std::vector<int> kWide = {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128};

void expect_within(double value, double truth, double tolerance, const std::string& what) {
  EXPECT_NEAR(value, truth, tolerance * truth) << what;
}

// The interval must contain the estimate and be finite.
void expect_interval(const UslFigure& figure, const std::string& what) {
  ASSERT_TRUE(figure.constrained) << what << ": " << figure.note;
  EXPECT_LE(figure.low, figure.value) << what;
  EXPECT_GE(figure.high, figure.value) << what;
}

TEST(Scalability, ThroughputOfTheLaw) {
  const UslParameters parameters{.lambda = 1000, .sigma = 0.1, .kappa = 0.01};
  EXPECT_DOUBLE_EQ(usl_throughput(parameters, 1), 1000);
  // 10 * 1000 / (1 + 0.9 + 0.9)
  EXPECT_NEAR(usl_throughput(parameters, 10), 10000 / 2.8, 1e-9);
}

TEST(Scalability, LinearSweepIsNotConstrained) {
  for (const uint64_t seed : {1, 2, 3}) {
    const auto points = sweep({.lambda = 1000, .sigma = 0, .kappa = 0}, kWide, 3, 0.03, seed);
    const auto fit = fit_usl(points);
    ASSERT_TRUE(fit.fitted) << fit.reason;
    EXPECT_TRUE(fit.linear) << "seed " << seed << " sigma " << fit.parameters.sigma << " ["
                            << fit.sigma.low << ", " << fit.sigma.high << "] kappa "
                            << fit.parameters.kappa << " [" << fit.kappa.low << ", "
                            << fit.kappa.high << "]";
    EXPECT_FALSE(fit.poor_fit);
    for (const auto* figure : {&fit.sigma, &fit.kappa, &fit.peak_clients, &fit.peak_tps}) {
      EXPECT_FALSE(figure->constrained);
      EXPECT_EQ(figure->note, "not constrained: still linear at 128 clients");
    }
    expect_interval(fit.lambda, "lambda");
    expect_within(fit.parameters.lambda, 1000, 0.05, "lambda");
    EXPECT_NE(fit.verdict.find("linearly"), std::string::npos) << fit.verdict;
  }
}

TEST(Scalability, ContentionBoundRecoversSigmaAndHasNoPeak) {
  const UslParameters truth{.lambda = 2000, .sigma = 0.05, .kappa = 0};
  for (const uint64_t seed : {11, 12, 13}) {
    const auto fit = fit_usl(sweep(truth, kWide, 3, 0.03, seed));
    ASSERT_TRUE(fit.fitted) << fit.reason;
    EXPECT_FALSE(fit.linear);
    EXPECT_FALSE(fit.poor_fit);
    expect_interval(fit.sigma, "sigma");
    expect_within(fit.parameters.sigma, truth.sigma, 0.10, "sigma, seed " + std::to_string(seed));
    EXPECT_LE(fit.sigma.low, truth.sigma);
    EXPECT_GE(fit.sigma.high, truth.sigma);
    EXPECT_LT(fit.parameters.kappa, 2e-5);
    EXPECT_FALSE(fit.peak_clients.constrained) << fit.peak_clients.value;
    EXPECT_NE(fit.peak_clients.note.find("not constrained"), std::string::npos);
  }
}

// sigma 0.02, kappa 0.0005: N* = sqrt(0.98 / 0.0005) = 44.3, X(N*) = 16,700.
TEST(Scalability, CoherencyBoundWithRetrogradeRegion) {
  const UslParameters truth{.lambda = 1000, .sigma = 0.02, .kappa = 0.0005};
  const double peak = std::sqrt((1 - truth.sigma) / truth.kappa);
  for (const uint64_t seed : {21, 22, 23}) {
    const auto fit = fit_usl(sweep(truth, kWide, 3, 0.03, seed));
    ASSERT_TRUE(fit.fitted) << fit.reason;
    EXPECT_FALSE(fit.poor_fit);
    EXPECT_EQ(fit.interval_method, "bootstrap over repeats (400 resamples)");
    expect_interval(fit.sigma, "sigma");
    expect_interval(fit.kappa, "kappa");
    expect_interval(fit.peak_clients, "N*");
    expect_interval(fit.peak_tps, "X(N*)");
    const std::string tag = ", seed " + std::to_string(seed);
    expect_within(fit.parameters.sigma, truth.sigma, 0.10, "sigma" + tag);
    expect_within(fit.parameters.kappa, truth.kappa, 0.10, "kappa" + tag);
    expect_within(fit.peak_clients.value, peak, 0.10, "N*" + tag);
    expect_within(fit.peak_tps.value, usl_throughput(truth, peak), 0.05, "X(N*)" + tag);
    EXPECT_NE(fit.verdict.find("retrograde"), std::string::npos) << fit.verdict;
    EXPECT_GT(fit.r_squared, 0.95);
  }
}

// The same law measured only up to the peak's neighbourhood: no retrograde region.
TEST(Scalability, CoherencyBoundWithoutRetrogradeRegion) {
  const UslParameters truth{.lambda = 1000, .sigma = 0.02, .kappa = 0.0005};
  const double peak = std::sqrt((1 - truth.sigma) / truth.kappa);
  const std::vector<int> clients = {1, 2, 4, 8, 12, 16, 24, 32, 40, 48};
  for (const uint64_t seed : {31, 32, 33}) {
    const auto fit = fit_usl(sweep(truth, clients, 3, 0.03, seed));
    ASSERT_TRUE(fit.fitted) << fit.reason;
    const std::string tag = ", seed " + std::to_string(seed);
    expect_interval(fit.peak_clients, "N*" + tag);
    expect_within(fit.parameters.sigma, truth.sigma, 0.10, "sigma" + tag);
    expect_within(fit.parameters.kappa, truth.kappa, 0.10, "kappa" + tag);
    expect_within(fit.peak_clients.value, peak, 0.10, "N*" + tag);
  }
}

// Coherency alone (sigma 0): sigma stays near 0, kappa and N* = sqrt(1 / 0.001) = 31.6 recovered.
TEST(Scalability, CoherencyOnlyPeak) {
  const UslParameters truth{.lambda = 500, .sigma = 0, .kappa = 0.001};
  for (const uint64_t seed : {41, 42, 43}) {
    const auto fit = fit_usl(sweep(truth, kWide, 3, 0.03, seed));
    ASSERT_TRUE(fit.fitted) << fit.reason;
    const std::string tag = ", seed " + std::to_string(seed);
    EXPECT_LT(fit.parameters.sigma, 0.01) << tag;
    expect_within(fit.parameters.kappa, truth.kappa, 0.10, "kappa" + tag);
    expect_within(fit.peak_clients.value, std::sqrt(1 / truth.kappa), 0.10, "N*" + tag);
  }
}

TEST(Scalability, TwoRepeatsUseTheFitCovariance) {
  const UslParameters truth{.lambda = 1000, .sigma = 0.02, .kappa = 0.0005};
  const auto fit = fit_usl(sweep(truth, kWide, 2, 0.03, 51));
  ASSERT_TRUE(fit.fitted);
  EXPECT_EQ(fit.interval_method, "fit covariance (t on 19 degrees of freedom)");
  expect_interval(fit.sigma, "sigma");
  expect_interval(fit.kappa, "kappa");
  expect_interval(fit.peak_clients, "N*");
  EXPECT_LE(fit.kappa.low, truth.kappa);
  EXPECT_GE(fit.kappa.high, truth.kappa);
  ASSERT_TRUE(fit.lack_of_fit_p.has_value());
  EXPECT_GT(*fit.lack_of_fit_p, 0.01);
}

// sigma held at 0 by the bound: its covariance interval still starts at the estimate, not at a
// negative unconstrained one.
TEST(Scalability, CovarianceIntervalsAroundTheBoundedFit) {
  const UslParameters truth{.lambda = 500, .sigma = 0, .kappa = 0.001};
  const auto fit = fit_usl(sweep(truth, kWide, 2, 0.03, 41));
  ASSERT_TRUE(fit.fitted);
  EXPECT_EQ(fit.parameters.sigma, 0);
  expect_interval(fit.sigma, "sigma");
  EXPECT_EQ(fit.sigma.low, 0);
  EXPECT_GT(fit.sigma.high, 0);
  expect_interval(fit.kappa, "kappa");
  expect_within(fit.peak_clients.value, std::sqrt(1 / truth.kappa), 0.10, "N*");
}

TEST(Scalability, FewerThanFourClientCountsAreNotFitted) {
  const auto fit =
      fit_usl(sweep({.lambda = 1000, .sigma = 0.1, .kappa = 0}, {1, 4, 8}, 3, 0.03, 1));
  EXPECT_FALSE(fit.fitted);
  EXPECT_EQ(fit.reason, "3 client counts with throughput, 4 needed");
}

// A busy host: repeats 40 % apart. R² is low, but the curve misses the cell means no more than
// the repeats scatter: noisy, not a poor fit, and the intervals are wide.
TEST(Scalability, NoisyRepeatsAreNotAPoorFit) {
  const UslParameters truth{.lambda = 1000, .sigma = 0.02, .kappa = 0.0005};
  const auto fit = fit_usl(sweep(truth, {1, 2, 4, 8, 16, 32}, 2, 0.4, 7));
  ASSERT_TRUE(fit.fitted);
  ASSERT_TRUE(fit.lack_of_fit_p.has_value());
  EXPECT_GT(*fit.lack_of_fit_p, 0.01);
  EXPECT_LT(fit.r_squared, 0.9);
  EXPECT_FALSE(fit.poor_fit);
  EXPECT_TRUE(fit.noisy);
  EXPECT_NE(fit.verdict.find("; noisy repeats (R² "), std::string::npos) << fit.verdict;
  // At 32 clients a third of 32 x lambda: whatever the intervals say, not "still linear".
  EXPECT_FALSE(fit.linear);
  EXPECT_EQ(fit.verdict.find("linearly"), std::string::npos) << fit.verdict;
}

// Throughput that jumps up and down with client count is not a law-shaped sweep.
TEST(Scalability, SawtoothIsAPoorFit) {
  std::vector<ThroughputPoint> points;
  const std::vector<double> tps = {1000, 5000, 1500, 9000, 2000, 12000, 2500, 15000};
  for (size_t index = 0; index < tps.size(); ++index) {
    const int clients = 1 << index;
    points.push_back({clients, tps[index]});
    points.push_back({clients, tps[index] * 1.01});
  }
  const auto fit = fit_usl(points);
  ASSERT_TRUE(fit.fitted);
  EXPECT_TRUE(fit.poor_fit) << "R² " << fit.r_squared;
  EXPECT_FALSE(fit.sigma.constrained);
  EXPECT_EQ(fit.sigma.note.rfind("poor fit (R² ", 0), 0u) << fit.sigma.note;
}

ScalabilityCell cell(int clients, double tps, double lock_share, double walwrite_share) {
  ScalabilityCell result;
  result.clients = clients;
  result.tps_median = tps;
  result.has_profile = true;
  const double aas = clients;  // every client active
  result.events = {
      {"Lock | transactionid", "Lock", lock_share, 0.01, lock_share * aas, 0.02},
      {"LWLock | WALWrite", "LWLock", walwrite_share, 0.01, walwrite_share * aas, 0.02},
      {"CPU", "CPU", 1 - lock_share - walwrite_share, 0.01, (1 - lock_share - walwrite_share) * aas,
       0.02}};
  result.classes = {{"Lock", "Lock", lock_share, 0.01, lock_share * aas, 0.02},
                    {"LWLock", "LWLock", walwrite_share, 0.01, walwrite_share * aas, 0.02},
                    {"CPU", "CPU", 1 - lock_share - walwrite_share, 0.01,
                     (1 - lock_share - walwrite_share) * aas, 0.02}};
  return result;
}

TEST(Scalability, KneeAndTheWaitsThatGrowAcrossIt) {
  // Efficiency 1, 0.9, 0.75, 0.6, 0.4, 0.2: the knee (below 50 %) at 16 clients.
  const std::vector<ScalabilityCell> cells = {
      cell(1, 1000, 0.06, 0.10), cell(2, 1800, 0.08, 0.12),  cell(4, 3000, 0.08, 0.12),
      cell(8, 4800, 0.10, 0.14), cell(16, 6400, 0.40, 0.18), cell(32, 6400, 0.42, 0.20)};
  std::vector<ThroughputPoint> points;
  for (const auto& each : cells) points.push_back({each.clients, each.tps_median});
  const auto result = analyse_scalability("v", points, cells);
  ASSERT_TRUE(result.knee.clients.has_value());
  EXPECT_EQ(*result.knee.clients, 16);
  EXPECT_TRUE(result.knee.single_client_measured);
  ASSERT_EQ(result.knee.efficiency.size(), 6u);
  EXPECT_DOUBLE_EQ(result.knee.efficiency[3].efficiency, 0.6);
  EXPECT_DOUBLE_EQ(result.knee.efficiency[4].efficiency, 0.4);

  ASSERT_EQ(result.events.size(), 3u);
  EXPECT_EQ(result.events[0].name, "Lock | transactionid");
  EXPECT_DOUBLE_EQ(result.events[0].share_below, 0.08);
  EXPECT_DOUBLE_EQ(result.events[0].share_above, 0.41);
  EXPECT_NEAR(result.events[0].share_change, 0.33, 1e-12);
  // Four cells below (error 0.01 each: 0.005 for their mean), two above (0.00707).
  EXPECT_NEAR(result.events[0].share_change_error, std::sqrt(0.005 * 0.005 + 0.0001 / 2), 1e-12);
  // AAS per client is the share here (every client active).
  EXPECT_NEAR(result.events[0].aas_per_client_below, 0.08, 1e-12);
  EXPECT_NEAR(result.events[0].aas_per_client_above, 0.41, 1e-12);
  EXPECT_EQ(result.events[1].name, "LWLock | WALWrite");
  EXPECT_EQ(result.events[2].name, "CPU");
  EXPECT_LT(result.events[2].share_change, 0);
  ASSERT_EQ(result.classes.size(), 3u);
  EXPECT_EQ(result.classes[0].name, "Lock");
  // CPU shrank: only the two that grew are named.
  EXPECT_EQ(result.headline,
            "knee at 16 clients: Lock | transactionid 8 % → 41 %, LWLock | WALWrite 12 % → 19 %");
}

TEST(Scalability, NoKneeWhileEfficiencyHolds) {
  const std::vector<ScalabilityCell> cells = {cell(1, 1000, 0, 0), cell(2, 2000, 0, 0),
                                              cell(4, 3900, 0, 0), cell(8, 7600, 0, 0)};
  std::vector<ThroughputPoint> points;
  for (const auto& each : cells) points.push_back({each.clients, each.tps_median});
  const auto result = analyse_scalability("v", points, cells);
  EXPECT_FALSE(result.knee.clients.has_value());
  EXPECT_TRUE(result.events.empty());
  EXPECT_EQ(result.headline, "no knee: efficiency stays at or above 50 % up to 8 clients");
}

TEST(Scalability, FiguresDifferWhenIntervalsAreApart) {
  const UslFigure a{.value = 40, .low = 36, .high = 44, .constrained = true, .note = ""};
  const UslFigure b{.value = 60, .low = 54, .high = 66, .constrained = true, .note = ""};
  const UslFigure c{.value = 42, .low = 37, .high = 47, .constrained = true, .note = ""};
  const UslFigure loose{.value = 50, .low = 0, .high = 0, .constrained = false, .note = "x"};
  EXPECT_TRUE(compare_figures(a, b).differ);
  EXPECT_FALSE(compare_figures(a, c).differ);
  EXPECT_TRUE(compare_figures(a, c).comparable);
  EXPECT_FALSE(compare_figures(a, loose).comparable);
}

}  // namespace
}  // namespace pgwaitprof::model
