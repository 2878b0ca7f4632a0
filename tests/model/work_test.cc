// Fixed-work runs, the checkpoint after a run and the run-to-run spread: their figures and
// their report.json codec.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/run.h"

namespace pgwaitprof::model {
namespace {

model::Run minimal_run() {
  model::Run run;
  run.id = "r1";
  run.loadgen = LoadgenSummary{};
  run.loadgen->tps = 0.4;
  run.loadgen->transactions = 4;
  return run;
}

TEST(WorkDone, SummaryGivesRowsPerSecondAndMegabytesPerSecond) {
  EXPECT_EQ((WorkDone{4000000, 520000000, 4, base::Seconds(20)}.summary()),
            "4000000 rows in 20.00 s: 200000 rows/s, 26.0 MB/s");
  EXPECT_EQ((WorkDone{0, 0, 8000, base::Seconds(4)}.summary()),
            "8000 transactions in 4.00 s: 2000.0 tps");
}

TEST(WorkDone, FigureOfAMetric) {
  model::Run run = minimal_run();
  EXPECT_EQ(run_figure(run, Metric::kTps), 0.4);
  EXPECT_FALSE(run_figure(run, Metric::kDuration));  // not a fixed-work run
  run.work = WorkDone{100, 0, 4, base::Seconds(12.5)};
  EXPECT_EQ(run_figure(run, Metric::kDuration), 12.5);
  run.loadgen.reset();
  EXPECT_FALSE(run_figure(run, Metric::kTps));
  EXPECT_EQ(parse_metric("duration"), Metric::kDuration);
  EXPECT_EQ(to_string(Metric::kTps), "tps");
  EXPECT_FALSE(parse_metric("rows"));
}

TEST(WorkDone, RoundTripsThroughReportJson) {
  model::Run run = minimal_run();
  run.work = WorkDone{2000000, 260000000, 2, base::Seconds(9.75)};
  CheckpointAfter checkpoint;
  checkpoint.start = base::Seconds(10);
  checkpoint.duration = base::Seconds(3.5);
  checkpoint.profile.add({"checkpointer", "", "IO", "DataFileSync"}, 7);
  checkpoint.profile.add_snapshots(20);
  run.checkpoint_after = checkpoint;
  TimelineSlice slice;
  slice.checkpoint_after = true;
  run.timeline.push_back(slice);
  const model::Run back = run_from_json(nlohmann::json::parse(to_json(run).dump()));
  ASSERT_TRUE(back.work);
  EXPECT_EQ(back.work->rows, 2000000u);
  EXPECT_EQ(back.work->bytes, 260000000u);
  EXPECT_EQ(back.work->transactions, 2u);
  EXPECT_DOUBLE_EQ(back.work->elapsed.count(), 9.75);
  ASSERT_TRUE(back.checkpoint_after);
  EXPECT_DOUBLE_EQ(back.checkpoint_after->duration.count(), 3.5);
  EXPECT_EQ(back.checkpoint_after->profile.snapshots(), 20u);
  EXPECT_EQ(back.checkpoint_after->profile.total(true), 7u);
  ASSERT_EQ(back.timeline.size(), 1u);
  EXPECT_TRUE(back.timeline[0].checkpoint_after);
}

TEST(WorkDone, ReportsWithoutThemStillLoad) {
  auto json = to_json(minimal_run());
  json.erase("work");
  json.erase("checkpoint_after");
  const model::Run back = run_from_json(json);
  EXPECT_FALSE(back.work);
  EXPECT_FALSE(back.checkpoint_after);
  EXPECT_FALSE(run_from_json(to_json(minimal_run())).work);  // null when absent
}

TEST(RunToRun, RoundTripsThroughReportJson) {
  model::Run run = minimal_run();
  EXPECT_FALSE(to_json(run).contains("run_to_run"));  // written outside a data directory
  run.run_to_run = RunToRun{8, 3, {{"tps", 4000, 300, 740}, {"IO | WALSync", 0.3, 0.02, 0.05}}};
  const model::Run back = run_from_json(nlohmann::json::parse(to_json(run).dump()));
  ASSERT_TRUE(back.run_to_run);
  EXPECT_EQ(back.run_to_run->runs, 8u);
  EXPECT_EQ(back.run_to_run->needed, 3u);
  ASSERT_EQ(back.run_to_run->figures.size(), 2u);
  EXPECT_EQ(back.run_to_run->figures[1].name, "IO | WALSync");
  EXPECT_DOUBLE_EQ(back.run_to_run->figures[0].half_width, 740);
  EXPECT_DOUBLE_EQ(back.run_to_run->figures[1].sd, 0.02);
}

}  // namespace
}  // namespace pgwaitprof::model
