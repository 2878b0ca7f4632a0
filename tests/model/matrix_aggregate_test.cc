// The matrix aggregation on small hand-made runs: grouping into cells, medians and ranges over
// repeats, failed runs, row order and split rows, the dominant wait, and each cell's wait
// profile with its errors from the repeats.
#include "model/matrix_aggregate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/statistics.h"
#include "tests/model/run_fixture.h"

namespace pgwaitprof::model {
namespace {

// `cpu` and `io` samples of active client backends over 10 snapshots.
model::Run profiled(int repeat, uint64_t cpu, uint64_t io) {
  model::Run run = run_of("v", 4, 100, repeat);
  run.profile.add({"client backend", "active", "CPU", ""}, cpu);
  run.profile.add({"client backend", "active", "IO", "DataFileRead"}, io);
  run.profile.add({"client backend", "idle", "Client", "ClientRead"}, 10);
  run.profile.add_snapshots(10);
  return run;
}

TEST(MatrixAggregate, MediansRangesAndFailedRunsPerCell) {
  std::vector<model::Run> runs = {
      run_of("a", 8, 100, 1), run_of("a", 8, 300, 2), run_of("a", 8, 200, 3),
      run_of("a", 8, 999, 4, RunStatus::kFailed), run_of("a", 16, 50, 1)};
  runs[0].latency = LatencySummary{};
  runs[0].latency->p99 = base::Milliseconds(7);
  const MatrixTable table = build_matrix_table(runs, "m");
  EXPECT_EQ(table.name, "m");
  EXPECT_EQ(table.clients, (std::vector<int>{8, 16}));
  ASSERT_EQ(table.cells.size(), 2u);
  const MatrixCell* cell = table.find("a", 8);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->tps, (std::vector<double>{100, 300, 200}));
  EXPECT_EQ(cell->tps_median, 200);
  EXPECT_EQ(cell->tps_min, 100);
  EXPECT_EQ(cell->tps_max, 300);
  EXPECT_EQ(cell->failed_runs, 1);
  EXPECT_DOUBLE_EQ(cell->latency_median.count(), 40);  // 8000/200
  EXPECT_EQ(cell->p99_median.count(), 7);              // the one run with a p99
  EXPECT_TRUE(std::isnan(cell->checkpoint_median.count()));
  EXPECT_TRUE(std::isnan(table.find("a", 16)->p99_median.count()));
  EXPECT_EQ(table.find("b", 8), nullptr);
}

TEST(MatrixAggregate, RowsInTheOrderOfTheFirstRepeat) {
  const MatrixTable table =
      build_matrix_table({run_of("b", 1, 10, 2), run_of("a", 1, 10, 1), run_of("b", 1, 10, 1)});
  EXPECT_EQ(table.variants, (std::vector<std::string>{"a", "b"}));
}

TEST(MatrixAggregate, SplitRowsNameTheAttribute) {
  std::vector<model::Run> runs = {run_of("", 1, 10, 1), run_of("x", 1, 10, 1)};
  runs[1].environment.kernel = "6.1.0";
  const MatrixTable table = build_matrix_table(runs, "", Metric::kTps, "kernel");
  EXPECT_EQ(table.variants, (std::vector<std::string>{"- [kernel ?]", "x [kernel 6.1.0]"}));
  EXPECT_EQ(table.split_by, "kernel");
}

TEST(MatrixAggregate, DurationMetricTakesTheElapsedTime) {
  std::vector<model::Run> runs = {run_of("", 1, 10, 1), run_of("", 1, 10, 2)};
  runs[0].work = WorkDone{};
  runs[0].work->elapsed = base::Seconds(12.5);
  const MatrixTable table = build_matrix_table(runs, "", Metric::kDuration);
  ASSERT_EQ(table.cells.size(), 1u);
  EXPECT_EQ(table.cells[0].tps, (std::vector<double>{12.5}));  // the run without work left out
  EXPECT_EQ(table.cells[0].metric, Metric::kDuration);
}

TEST(MatrixAggregate, RunAttributesByName) {
  model::Run run;
  run.environment.kernel = "k";
  run.environment.cpu_model = "c";
  run.environment.server_version = "17.2";
  run.label = "l";
  EXPECT_EQ(run_attribute(run, "kernel"), "k");
  EXPECT_EQ(run_attribute(run, "cpu_model"), "c");
  EXPECT_EQ(run_attribute(run, "server_version"), "17.2");
  EXPECT_EQ(run_attribute(run, "label"), "l");
  EXPECT_EQ(run_attribute(run, "hostname"), "");
  EXPECT_EQ(variant_label(""), "-");
  EXPECT_EQ(variant_label("v"), "v");
}

TEST(MatrixAggregate, DominantWaitMergesBackendTypesAndLeavesIdleOut) {
  Profile profile;
  profile.add({"client backend", "active", "LWLock", "WALWrite"}, 30);
  profile.add({"walwriter", "background", "LWLock", "WALWrite"}, 15);
  profile.add({"client backend", "active", "Lock", "relation"}, 40);
  profile.add({"client backend", "idle", "Client", "ClientRead"}, 500);
  profile.add({"client backend", "active", "CPU", ""}, 15);
  MatrixCell cell;
  set_dominant(cell, profile);
  EXPECT_EQ(cell.dominant_wait, "LWLock | WALWrite");
  EXPECT_EQ(cell.dominant_class, "LWLock");
  EXPECT_DOUBLE_EQ(cell.dominant_share, 45.0 / 100.0);
}

TEST(MatrixAggregate, CompositionIsTheMeanOverRepeatsWithItsStandardError) {
  const std::vector<model::Run> runs = {profiled(1, 30, 10), profiled(2, 20, 20)};
  MatrixCell cell;
  set_composition(cell, {&runs[0], &runs[1]});
  EXPECT_EQ(cell.profile_runs, 2);
  EXPECT_EQ(cell.error_source, ShareError::kRepeats);
  EXPECT_DOUBLE_EQ(cell.aas_total, 4);
  ASSERT_EQ(cell.classes.size(), 2u);
  EXPECT_EQ(cell.classes[0].name, "CPU");  // kWaitClassOrder, not by share
  EXPECT_DOUBLE_EQ(cell.classes[0].share, 0.625);
  EXPECT_NEAR(cell.classes[0].share_error, 0.125, 1e-12);
  EXPECT_DOUBLE_EQ(cell.classes[0].aas, 2.5);
  EXPECT_NEAR(cell.classes[0].aas_error, 0.5, 1e-12);
  ASSERT_EQ(cell.events.size(), 2u);
  EXPECT_EQ(cell.events[0].name, "CPU");  // largest share first
  EXPECT_EQ(cell.events[1].name, "IO | DataFileRead");
  ASSERT_NE(cell.find_event("IO | DataFileRead"), nullptr);
  EXPECT_EQ(cell.find_event("Lock | relation"), nullptr);
}

TEST(MatrixAggregate, OneRunHasOnlyItsSamplingErrorAndNoneWhenTooShort) {
  const std::vector<model::Run> runs = {profiled(1, 30, 10)};
  MatrixCell cell;
  set_composition(cell, {&runs[0]});
  EXPECT_EQ(cell.error_source, ShareError::kSampling);
  ASSERT_NE(cell.find_class("IO"), nullptr);
  EXPECT_DOUBLE_EQ(cell.find_class("IO")->share, 0.25);
  EXPECT_TRUE(std::isnan(cell.find_class("IO")->share_error));  // no timeline to batch
  MatrixCell empty;
  set_composition(empty, {});
  EXPECT_EQ(empty.error_source, ShareError::kNone);
  EXPECT_EQ(empty.profile_runs, 0);
}

TEST(MatrixAggregate, StandardErrorOfTheMean) {
  EXPECT_NEAR(standard_error_of_mean(std::vector<double>{1, 2, 3, 4}), std::sqrt(5.0 / 3.0) / 2.0,
              1e-12);
  EXPECT_EQ(standard_error_of_mean(std::vector<double>{5}), 0);
  EXPECT_EQ(standard_error_of_mean(std::vector<double>{}), 0);
}

TEST(WaitClassOrder, ListedClassesFirstThenByName) {
  EXPECT_TRUE(wait_class_before("CPU", "LWLock"));
  EXPECT_FALSE(wait_class_before("LWLock", "CPU"));
  EXPECT_TRUE(wait_class_before("IO", "Activity"));
  EXPECT_TRUE(wait_class_before("Activity", "Aardvark"));  // unlisted after every listed one
  EXPECT_TRUE(wait_class_before("Aardvark", "Zebra"));
  EXPECT_FALSE(wait_class_before("CPU", "CPU"));
}

}  // namespace
}  // namespace pgwaitprof::model
