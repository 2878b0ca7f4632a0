// A matrix cell's traced wait durations (model/matrix_durations.h) on hand-made runs with fixed
// histograms: the means over repeats and their standard errors, an event one repeat lacks, the
// order by time, and cells without traced runs.
#include "model/matrix_durations.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/matrix_aggregate.h"
#include "tests/model/traced_run_fixture.h"

namespace pgwaitprof::model {
namespace {

TEST(MatrixDurations, RepeatsGiveTheMeanP99AndItsStandardError) {
  const std::vector<model::Run> runs = {
      traced_run("v", 4, 1000, 1, {{kWalWrite, 1000, 100e-6}, {kClientRead, 4000, 1e-3}}),
      traced_run("v", 4, 1000, 2, {{kWalWrite, 3000, 300e-6}, {kClientRead, 4000, 1e-3}}),
  };
  const auto table = build_matrix_table(runs);
  const MatrixCell* cell = table.find("v", 4);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->durations.traced_runs, 2);
  const WaitDurations* wal = cell->durations.find("LWLock | WALWrite");
  ASSERT_NE(wal, nullptr);
  EXPECT_EQ(wal->wait_class, "LWLock");
  EXPECT_EQ(wal->runs, 2);
  EXPECT_DOUBLE_EQ(wal->waits_per_s, 2000);
  EXPECT_DOUBLE_EQ(wal->waits_per_s_error, 1000);  // sd 1414 over 2 runs
  EXPECT_NEAR(wal->p99_s, 200e-6, 1e-9);
  EXPECT_NEAR(wal->p99_error, 100e-6, 1e-9);
  EXPECT_NEAR(wal->p50_s, 200e-6, 1e-9);
  EXPECT_NEAR(wal->mean_s, 200e-6, 1e-9);
  EXPECT_NEAR(wal->longest_s, 300e-6, 1e-9);
  EXPECT_NEAR(wal->aas, (0.1 + 0.9) / 2, 1e-9);
  // ClientRead in a transaction has the most time: first.
  ASSERT_EQ(cell->durations.events.size(), 2u);
  EXPECT_EQ(cell->durations.events[0].name, "Client | ClientRead");
  EXPECT_NEAR(cell->durations.events[0].p99_s, 1e-3, 1e-9);
  EXPECT_DOUBLE_EQ(cell->durations.events[0].p99_error, 0);
}

TEST(MatrixDurations, AnEventOneRepeatLacksCountsZeroWaitsThereAndNoP99) {
  const std::vector<model::Run> runs = {
      traced_run("v", 4, 1000, 1, {{kWalWrite, 1000, 100e-6}}),
      traced_run("v", 4, 1000, 2, {{kClientRead, 10, 1e-3}}),
  };
  const auto table = build_matrix_table(runs);
  const WaitDurations* wal = table.find("v", 4)->durations.find("LWLock | WALWrite");
  ASSERT_NE(wal, nullptr);
  EXPECT_EQ(wal->runs, 1);
  EXPECT_DOUBLE_EQ(wal->waits_per_s, 500);  // 1000 and 0
  EXPECT_NEAR(wal->p99_s, 100e-6, 1e-9);    // of the run that had waits
  EXPECT_TRUE(std::isnan(wal->p99_error));  // one run
}

TEST(MatrixDurations, ALoneRunHasNoErrorAndIdleSessionsAndBackgroundSleepsAreLeftOut) {
  const std::vector<model::Run> runs = {traced_run(
      "v", 1, 1000, 1,
      {{kWalWrite, 500, 2e-3}, {kWalWriterMain, 5, 0.2}, {kIdleClientRead, 3, 0.9}}, 2.0)};
  const auto& durations = build_matrix_table(runs).find("v", 1)->durations;
  ASSERT_EQ(durations.events.size(), 1u);
  EXPECT_DOUBLE_EQ(durations.events[0].waits_per_s, 250);  // 500 in 2 s
  EXPECT_TRUE(std::isnan(durations.events[0].waits_per_s_error));
  EXPECT_EQ(durations.find("Activity | WalWriterMain"), nullptr);
  EXPECT_EQ(durations.find("Client | ClientRead"), nullptr);
}

TEST(MatrixDurations, SampledRunsHaveNone) {
  model::Run run = run_of("v", 4, 1000);
  run.profile.add(kWalWrite, 10);
  run.profile.add_snapshots(100);
  const auto& durations = build_matrix_table({run}).find("v", 4)->durations;
  EXPECT_EQ(durations.traced_runs, 0);
  EXPECT_TRUE(durations.events.empty());
}

}  // namespace
}  // namespace pgwaitprof::model
