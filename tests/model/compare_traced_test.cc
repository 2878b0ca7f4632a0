// compare of traced runs (model/compare_traced.cc) on hand-made runs with fixed histograms: the
// waits whose count, time or p99 duration moved beyond the spread between repeats, lone runs
// (no spread: not tested), which waits are the load's, and the order of the list.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/compare.h"
#include "tests/model/traced_run_fixture.h"

namespace pgwaitprof::model {
namespace {

// Runs of 1 s with 1000 WALWrite waits each, of the durations given (one run per duration).
std::vector<model::Run> wal_runs(const std::vector<double>& durations_s, uint64_t waits = 1000) {
  std::vector<model::Run> runs;
  int repeat = 1;
  for (const double duration : durations_s) {
    runs.push_back(traced_run("", 8, 1000, repeat++, {{kWalWrite, waits, duration}}));
  }
  return runs;
}

const TracedWaitMove* find_move(const Comparison& comparison, const std::string& wait) {
  for (const auto& move : comparison.traced_waits) {
    if (move.wait == wait) return &move;
  }
  return nullptr;
}

TEST(CompareTraced, AP99BeyondTheRepeatsSpreadMoved) {
  const auto comparison =
      compare_runs(wal_runs({100e-6, 105e-6, 95e-6}), wal_runs({400e-6, 410e-6, 390e-6}));
  const auto* move = find_move(comparison, "LWLock | WALWrite");
  ASSERT_NE(move, nullptr);
  EXPECT_EQ(move->clients, 8);
  EXPECT_EQ(move->wait_class, "LWLock");
  EXPECT_NEAR(move->p99_s.a, 100e-6, 1e-9);
  EXPECT_NEAR(move->p99_s.b, 400e-6, 1e-9);
  EXPECT_NEAR(move->p99_s.stderr_a, 5e-6 / std::sqrt(3.0), 1e-9);  // sd 5 us over 3 runs
  EXPECT_NEAR(move->p99_s.relative_pct, 300, 1e-6);
  EXPECT_EQ(move->p99_s.significant, std::optional<bool>(true));
  // The same 1000 waits a second in every run: no spread and no move.
  EXPECT_DOUBLE_EQ(move->waits_per_s.a, 1000);
  EXPECT_DOUBLE_EQ(move->waits_per_s.b, 1000);
  EXPECT_EQ(move->waits_per_s.significant, std::optional<bool>(false));
  EXPECT_EQ(move->waits_a, 3000u);
  // Four times the time blocked: 0.1 to 0.4 sessions.
  EXPECT_NEAR(move->aas.a, 0.1, 1e-9);
  EXPECT_NEAR(move->aas.b, 0.4, 1e-9);
  EXPECT_EQ(move->moved, (std::vector<std::string>{"time", "p99"}));
}

TEST(CompareTraced, AP99InsideTheSpreadDidNotMove) {
  const auto comparison =
      compare_runs(wal_runs({100e-6, 200e-6, 300e-6}), wal_runs({150e-6, 250e-6, 350e-6}, 1000));
  const auto* move = find_move(comparison, "LWLock | WALWrite");
  ASSERT_NE(move, nullptr);
  EXPECT_EQ(move->p99_s.significant, std::optional<bool>(false));
  EXPECT_TRUE(move->moved.empty());
}

TEST(CompareTraced, MoreWaitsASecondMoved) {
  std::vector<model::Run> a = wal_runs({100e-6, 100e-6, 100e-6}, 1000);
  std::vector<model::Run> b = wal_runs({100e-6, 100e-6}, 2000);
  b.push_back(wal_runs({100e-6}, 2100).front());
  const auto* move = find_move(compare_runs(a, b), "LWLock | WALWrite");
  ASSERT_NE(move, nullptr);
  EXPECT_NEAR(move->waits_per_s.b, 2033.33, 0.01);
  EXPECT_EQ(move->waits_per_s.significant, std::optional<bool>(true));
  EXPECT_EQ(move->p99_s.significant, std::optional<bool>(false));  // all 100 us
  EXPECT_EQ(move->moved, (std::vector<std::string>{"waits", "time"}));
}

TEST(CompareTraced, LoneRunsWithoutATimelineAreNotTested) {
  const auto comparison = compare_runs(wal_runs({100e-6}), wal_runs({400e-6}));
  const auto* move = find_move(comparison, "LWLock | WALWrite");
  ASSERT_NE(move, nullptr);
  EXPECT_NEAR(move->p99_s.b, 400e-6, 1e-9);
  EXPECT_TRUE(std::isnan(move->p99_s.stderr_a));
  EXPECT_TRUE(std::isnan(move->waits_per_s.stderr_a));
  EXPECT_FALSE(move->p99_s.significant.has_value());
  EXPECT_FALSE(move->waits_per_s.significant.has_value());
  EXPECT_TRUE(move->moved.empty());
}

// A lone run of 40 one-second intervals whose WALWrite waits a second alternate around `rate`
// (± 5 %): long enough for batch means over its timeline.
model::Run lone_run_with_timeline(double rate) {
  model::Run run = run_of("", 8, 1000);
  for (int second = 0; second < 40; ++second) {
    TimelineSlice slice;
    slice.start = base::Seconds(second);
    slice.duration = base::Seconds(1);
    const auto waits = static_cast<uint64_t>(rate * (second % 2 == 0 ? 0.95 : 1.05));
    const auto time = fixed_waits(waits, 100e-6);
    slice.profile.add(kWalWrite, static_cast<uint64_t>(std::llround(time.time_s() * 1e6)));
    slice.profile.add_traced(kWalWrite, time);
    slice.profile.add_snapshots(1000000);
    run.profile.merge(slice.profile);
    run.timeline.push_back(slice);
  }
  return run;
}

TEST(CompareTraced, LoneRunsAreTestedAgainstTheirOwnBatchMeansForWaitsAndTime) {
  const auto comparison =
      compare_runs({lone_run_with_timeline(1000)}, {lone_run_with_timeline(1500)});
  const auto* move = find_move(comparison, "LWLock | WALWrite");
  ASSERT_NE(move, nullptr);
  EXPECT_DOUBLE_EQ(move->waits_per_s.a, 1000);
  EXPECT_TRUE(std::isfinite(move->waits_per_s.stderr_a));
  EXPECT_GT(move->waits_per_s.stderr_a, 0);
  EXPECT_EQ(move->waits_per_s.significant, std::optional<bool>(true));
  EXPECT_EQ(move->aas.significant, std::optional<bool>(true));
  // A lone run's p99 has no error: not tested.
  EXPECT_FALSE(move->p99_s.significant.has_value());
  EXPECT_EQ(move->moved, (std::vector<std::string>{"waits", "time"}));
}

TEST(CompareTraced, AWaitOnlyOneSideHasHasNoP99OnTheOther) {
  std::vector<model::Run> a = {traced_run("", 8, 1000, 1, {{kWalWrite, 500, 1e-3}})};
  std::vector<model::Run> b = {traced_run("", 8, 1000, 1, {{kClientRead, 500, 1e-3}})};
  const auto comparison = compare_runs(a, b);
  const auto* wal = find_move(comparison, "LWLock | WALWrite");
  ASSERT_NE(wal, nullptr);
  EXPECT_DOUBLE_EQ(wal->waits_per_s.b, 0);
  EXPECT_TRUE(std::isnan(wal->p99_s.b));
  EXPECT_EQ(wal->waits_b, 0u);
  const auto* read = find_move(comparison, "Client | ClientRead");
  ASSERT_NE(read, nullptr);
  EXPECT_TRUE(std::isinf(read->waits_per_s.relative_pct));  // new on B
}

TEST(CompareTraced, IdleSessionsAndBackgroundSleepsAreNotTheLoads) {
  // A transaction's round trips count; an idle session's wait for its next statement and the
  // walwriter asleep do not (idle sessions include pgwaitprof's own connection).
  const std::vector<TracedWaits> waits = {
      {kClientRead, 800, 200e-6}, {kIdleClientRead, 3, 0.9}, {kWalWriterMain, 5, 0.2}};
  const auto comparison =
      compare_runs({traced_run("", 8, 1000, 1, waits)}, {traced_run("", 8, 1000, 1, waits)});
  const auto* read = find_move(comparison, "Client | ClientRead");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->waits_a, 800u);
  EXPECT_NEAR(read->p99_s.a, 200e-6, 1e-9);
  EXPECT_EQ(find_move(comparison, "Activity | WalWriterMain"), nullptr);
}

TEST(CompareTraced, SampledRunsHaveNoTracedWaits) {
  model::Run a = run_of("", 8, 1000);
  a.profile.add(kWalWrite, 10);
  a.profile.add_snapshots(100);
  model::Run b = a;
  EXPECT_TRUE(compare_runs({a}, {b}).traced_waits.empty());
  // Nor a traced side against a sampled one.
  EXPECT_TRUE(compare_runs(wal_runs({100e-6}), {b}).traced_waits.empty());
}

TEST(CompareTraced, WhatMovedComesFirstThenTheMostTime) {
  const WaitKey lock{"client backend", "active", "Lock", "transactionid"};
  // Lock holds the most time and did not move; WALWrite's p99 moved.
  std::vector<model::Run> a, b;
  for (int repeat = 1; repeat <= 3; ++repeat) {
    const double jitter = 1e-6 * repeat;
    a.push_back(traced_run("", 8, 1000, repeat,
                           {{kWalWrite, 100, 100e-6 + jitter}, {lock, 100, 5e-3 + jitter}}));
    b.push_back(traced_run("", 8, 1000, repeat,
                           {{kWalWrite, 100, 900e-6 + jitter}, {lock, 100, 5e-3 + jitter}}));
  }
  const auto comparison = compare_runs(a, b);
  ASSERT_EQ(comparison.traced_waits.size(), 2u);
  EXPECT_EQ(comparison.traced_waits[0].wait, "LWLock | WALWrite");
  EXPECT_EQ(comparison.traced_waits[1].wait, "Lock | transactionid");
  EXPECT_TRUE(comparison.traced_waits[1].moved.empty());
}

}  // namespace
}  // namespace pgwaitprof::model
