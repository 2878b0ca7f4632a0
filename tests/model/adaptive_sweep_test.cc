// `clients: auto`: the counts a sweep runs, decided round by round from the tps it measured,
// on throughput curves of the Universal Scalability Law with known shapes.
#include "model/adaptive_sweep.h"

#include <gtest/gtest.h>

#include <functional>

#include "model/scalability.h"

namespace pgwaitprof::model {
namespace {

// Runs the sweep to its end against `tps` (client count -> throughput), as the matrix engine
// does: measure what it asks for, ask again. Returns the counts measured, ascending.
std::vector<int> sweep(const std::function<double(int)>& tps, const AdaptiveSweepOptions& options,
                       std::vector<std::vector<int>>* rounds = nullptr) {
  std::map<int, double> measured;
  for (int round = 0; round < 100; ++round) {
    const auto next = next_client_counts(measured, options);
    if (next.empty()) break;
    if (rounds != nullptr) rounds->push_back(next);
    for (int count : next) {
      EXPECT_FALSE(measured.contains(count)) << "asked twice for " << count;
      measured[count] = tps(count);
    }
  }
  std::vector<int> counts;
  for (const auto& [count, figure] : measured) counts.push_back(count);
  return counts;
}

TEST(AdaptiveSweep, ALinearCurveDoublesUpToTheMaximumThenFillsTheTopSteps) {
  const auto linear = [](int clients) { return 1000.0 * clients; };
  std::vector<std::vector<int>> rounds;
  EXPECT_EQ(sweep(linear, {.max_clients = 64}, &rounds),
            (std::vector<int>{1, 2, 4, 8, 16, 23, 32, 45, 64}));
  // One count per round while doubling, then the two between-counts at once.
  EXPECT_EQ(rounds.back(), (std::vector<int>{23, 45}));
  // A maximum that is no power of two is the last step itself.
  EXPECT_EQ(sweep(linear, {.max_clients = 12}), (std::vector<int>{1, 2, 4, 6, 8, 10, 12}));
}

TEST(AdaptiveSweep, APeakStopsTheDoublingAndTheCountsAroundItAreAdded) {
  // sigma 0.05, kappa 0.01: the peak is at N* = sqrt(0.95 / 0.01) = 9.7 clients.
  const UslParameters peaked{1000, 0.05, 0.01};
  const auto counts =
      sweep([&](int clients) { return usl_throughput(peaked, clients); }, {.max_clients = 256});
  // 16 clients deliver less than 8: doubling stops there, well below the maximum, and the
  // counts between 4, 8 and 16 are measured.
  EXPECT_EQ(counts, (std::vector<int>{1, 2, 4, 6, 8, 11, 16}));
  // The law fitted to what the sweep measured recovers the peak.
  std::vector<ThroughputPoint> points;
  for (int count : counts) points.push_back({count, usl_throughput(peaked, count)});
  const auto fit = fit_usl(points);
  ASSERT_TRUE(fit.fitted) << fit.reason;
  ASSERT_TRUE(fit.peak_clients.constrained) << fit.peak_clients.note;
  EXPECT_NEAR(fit.peak_clients.value, 9.75, 0.5);
}

TEST(AdaptiveSweep, APlateauStopsWhenADoublingAddsLessThanTheRise) {
  // Contention-bound: sigma 0.5 flattens the curve without a peak; 16 -> 32 adds 3.0 %.
  const UslParameters flat{1000, 0.5, 0};
  EXPECT_EQ(sweep([&](int clients) { return usl_throughput(flat, clients); },
                  {.max_clients = 1024, .min_rise = 0.05}),
            (std::vector<int>{1, 2, 4, 8, 11, 16, 23, 32}));
  // A failed count (tps 0) stops the doubling too: nothing rises past it.
  EXPECT_EQ(
      sweep([](int clients) { return clients == 4 ? 0.0 : 100.0 * clients; }, {.max_clients = 64}),
      (std::vector<int>{1, 2, 3, 4}));
}

TEST(AdaptiveSweep, EveryVariantGetsTheCountsAnyVariantNeeds) {
  const std::map<int, double> stopped{{1, 100}, {2, 190}, {4, 180}};  // stopped at 4
  const std::map<int, double> rising{{1, 100}, {2, 200}, {4, 400}};   // wants 8
  EXPECT_EQ(next_client_counts_of_variants({stopped, rising}, {.max_clients = 64}),
            (std::vector<int>{3, 8}));
  EXPECT_EQ(next_client_counts_of_variants({}, {.max_clients = 64}), std::vector<int>{});
  // Nothing measured yet: one client first.
  EXPECT_EQ(next_client_counts(std::map<int, double>{}, {.max_clients = 64}), std::vector<int>{1});
}

}  // namespace
}  // namespace pgwaitprof::model
