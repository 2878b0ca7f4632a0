// The compare decisions on small hand-made runs: the metric chosen, cells matched by variant
// and clients (or by clients alone across two single-variant sides), Welch's verdict across
// repeats, sides missing or failed, the wait events that moved, and --split-by's two sides.
#include "model/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/model/run_fixture.h"

namespace pgwaitprof::model {
namespace {

std::vector<model::Run> side(const std::string& variant, int clients,
                             const std::vector<double>& tps) {
  std::vector<model::Run> runs;
  for (const double value : tps) runs.push_back(run_of(variant, clients, value));
  return runs;
}

// A run whose steady state had `lock` samples of Lock | relation in 100 snapshots.
model::Run lock_run(uint64_t lock) {
  model::Run run = run_of("", 8, 1000);
  run.profile.add({"client backend", "active", "Lock", "relation"}, lock);
  run.profile.add({"client backend", "active", "CPU", ""}, 100);
  run.profile.add_snapshots(100);
  return run;
}

TEST(Compare, WelchAcrossRepeatsCallsAClearChange) {
  const auto comparison =
      compare_runs(side("", 8, {1000, 1010, 990}), side("", 8, {1200, 1210, 1190}));
  EXPECT_EQ(comparison.metric, Metric::kTps);
  ASSERT_EQ(comparison.cells.size(), 1u);
  const auto& tps = comparison.cells[0].tps;
  EXPECT_EQ(tps.median_a, 1000);
  EXPECT_EQ(tps.median_b, 1200);
  ASSERT_TRUE(tps.test.has_value());
  ASSERT_TRUE(tps.test->p_value.has_value());
  EXPECT_LT(*tps.test->p_value, 0.001);
  EXPECT_EQ(tps.verdict, "faster");
  EXPECT_DOUBLE_EQ(comparison.cells[0].latency_a.count(), 8);  // 8000 / 1000
  EXPECT_TRUE(comparison.cells[0].p99_ms.a.empty());           // no latency percentiles
}

TEST(Compare, NoiseLargerThanTheChangeIsNoSignificantChange) {
  const auto comparison =
      compare_runs(side("", 8, {900, 1100, 1000}), side("", 8, {1010, 890, 1120}));
  EXPECT_EQ(comparison.cells.at(0).tps.verdict, "no significant change");
}

TEST(Compare, FixedWorkRunsCompareElapsedTimeWhereLowerIsFaster) {
  auto a = side("", 1, {10, 10, 10});
  auto b = side("", 1, {10, 10, 10});
  for (auto* runs : {&a, &b}) {
    for (size_t index = 0; index < runs->size(); ++index) {
      (*runs)[index].work = WorkDone{};
      (*runs)[index].work->elapsed = base::Seconds((runs == &a ? 20.0 : 10.0) + 0.1 * index);
    }
  }
  const auto comparison = compare_runs(a, b);
  EXPECT_EQ(comparison.metric, Metric::kDuration);
  EXPECT_EQ(comparison.cells.at(0).tps.verdict, "faster");  // B took half the time
}

TEST(Compare, MissingAndFailedSidesAreNamed) {
  auto a = side("", 8, {1000});
  a.push_back(run_of("", 16, 1000, model::Run{}.repeat, RunStatus::kFailed));
  const auto b = side("", 16, {1000});
  const auto comparison = compare_runs(a, b, "old", "new");
  ASSERT_EQ(comparison.cells.size(), 2u);
  EXPECT_EQ(comparison.cells[0].clients, 8);
  EXPECT_EQ(comparison.cells[0].tps.verdict, "only in old");
  EXPECT_EQ(comparison.cells[1].tps.verdict, "no completed runs in old");
  EXPECT_FALSE(comparison.cells[1].tps.test.has_value());
}

TEST(Compare, SingleVariantSidesAreMatchedByClientsAlone) {
  const auto comparison = compare_runs(side("master", 8, {1000}), side("patched", 8, {1000}));
  ASSERT_EQ(comparison.cells.size(), 1u);
  EXPECT_EQ(comparison.cells[0].variant, "master vs patched");
}

TEST(Compare, WaitMovesLargestFirstWithTheirErrors) {
  const auto comparison = compare_runs({lock_run(10), lock_run(12), lock_run(14)},
                                       {lock_run(50), lock_run(52), lock_run(54)});
  ASSERT_FALSE(comparison.waits.empty());
  const auto& lock = comparison.waits.front();
  EXPECT_EQ(lock.wait, "Lock | relation");
  EXPECT_NEAR(lock.aas_a, 0.12, 1e-12);
  EXPECT_NEAR(lock.aas_b, 0.52, 1e-12);
  EXPECT_NEAR(lock.delta, 0.40, 1e-12);
  EXPECT_NEAR(lock.relative_pct, 0.40 / 0.12 * 100, 1e-9);
  EXPECT_NEAR(lock.stderr_a, 0.02 / std::sqrt(3.0), 1e-12);  // sd 0.02 of 3 repeats
  EXPECT_EQ(lock.significant, std::optional<bool>(true));
  for (size_t index = 1; index < comparison.waits.size(); ++index) {
    EXPECT_LE(std::abs(comparison.waits[index].delta), std::abs(lock.delta));
  }
}

TEST(Compare, AWaitNewOnBHasAnInfiniteRelativeChange) {
  const auto comparison = compare_runs({lock_run(0), lock_run(0)}, {lock_run(30), lock_run(40)});
  ASSERT_FALSE(comparison.waits.empty());
  EXPECT_EQ(comparison.waits.front().aas_a, 0);
  EXPECT_EQ(comparison.waits.front().relative_pct, std::numeric_limits<double>::infinity());
}

TEST(Compare, SplitByTakesExactlyTwoValues) {
  auto runs = side("", 8, {1, 2, 3});
  runs[0].environment.kernel = "6.1";
  runs[1].environment.kernel = "6.5";
  runs[2].environment.kernel = "6.1";
  const auto sides = split_by_attribute(runs, "kernel");
  EXPECT_EQ(sides.label_a, "kernel 6.1");
  EXPECT_EQ(sides.label_b, "kernel 6.5");
  EXPECT_EQ(sides.a.size(), 2u);
  EXPECT_EQ(sides.b.size(), 1u);
  runs[2].environment.kernel = "6.9";
  EXPECT_THROW(split_by_attribute(runs, "kernel"), std::invalid_argument);
  EXPECT_THROW(split_by_attribute(side("", 8, {1}), "kernel"), std::invalid_argument);
}

}  // namespace
}  // namespace pgwaitprof::model
