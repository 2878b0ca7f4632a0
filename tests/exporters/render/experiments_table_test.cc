// Fixed-work runs in the matrix table and in compare (elapsed time, lower is better), the
// checkpoint after the runs, and tables and comparisons split by a recorded attribute.
#include <gtest/gtest.h>

#include "exporters/render/compare.h"
#include "exporters/render/matrix_table.h"
#include "exporters/render/report_render.h"
#include "tests/exporters/render/fixtures.h"

namespace pgwaitprof::exporters {
namespace {

using test_fixtures::loadgen_run;

model::Run copy_run(const std::string& variant, int clients, double elapsed_s, int repeat,
                    const std::string& kernel = "6.1.0") {
  model::Run run = loadgen_run(variant, clients, clients / elapsed_s, repeat);
  run.workload = "copy";
  run.work = model::WorkDone{static_cast<uint64_t>(clients) * 1000000, 0,
                             static_cast<uint64_t>(clients), base::Seconds(elapsed_s)};
  run.environment.kernel = kernel;
  model::CheckpointAfter checkpoint;
  checkpoint.duration = base::Seconds(elapsed_s / 10);
  run.checkpoint_after = checkpoint;
  return run;
}

TEST(ExperimentsTable, DurationTableShowsElapsedSecondsAndTheCheckpoint) {
  const auto table =
      build_matrix_table({copy_run("flush-default", 4, 30, 1), copy_run("flush-default", 4, 34, 2),
                          copy_run("flush-0", 4, 12, 1), copy_run("flush-0", 4, 14, 2)},
                         "flush-after", model::Metric::kDuration);
  const auto* cell = table.find("flush-0", 4);
  ASSERT_NE(cell, nullptr);
  EXPECT_DOUBLE_EQ(cell->tps_median, 13);
  EXPECT_DOUBLE_EQ(cell->checkpoint_median.count(), 1.3);
  const auto text = render_matrix_text(table);
  EXPECT_NE(text.find("elapsed s (lower is better) by clients, median of 2 repeats"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("13.00"), std::string::npos);
  EXPECT_NE(text.find("12.00-14.00"), std::string::npos);
  EXPECT_NE(text.find("checkpoint after the run, s (median)"), std::string::npos);
  EXPECT_NE(text.find("3.20"), std::string::npos);  // flush-default's checkpoint
  EXPECT_NE(render_matrix_markdown(table).find("Checkpoint after the run"), std::string::npos);
  EXPECT_NE(render_matrix_json(table).find("\"metric\": \"duration\""), std::string::npos);
}

TEST(ExperimentsTable, SplitByKernelPutsHostsSideBySide) {
  auto old_kernel = loadgen_run("master", 8, 1000, 1);
  old_kernel.environment.kernel = "3.2.80";
  auto new_kernel = loadgen_run("master", 8, 800, 1);
  new_kernel.environment.kernel = "4.5.5";
  const auto split =
      build_matrix_table({old_kernel, new_kernel}, "clog", model::Metric::kTps, "kernel");
  EXPECT_EQ(split.variants,
            (std::vector<std::string>{"master [kernel 3.2.80]", "master [kernel 4.5.5]"}));
  ASSERT_NE(split.find("master [kernel 4.5.5]", 8), nullptr);
  EXPECT_DOUBLE_EQ(split.find("master [kernel 4.5.5]", 8)->tps_median, 800);
  EXPECT_EQ(run_attribute(old_kernel, "kernel"), "3.2.80");
  EXPECT_EQ(run_attribute(old_kernel, "hostname"), "");
}

TEST(ExperimentsCompare, ShorterElapsedTimeIsFaster) {
  std::vector<model::Run> a, b;
  for (int repeat = 1; repeat <= 4; ++repeat) {
    a.push_back(copy_run("default", 4, 30 + repeat * 0.1, repeat));
    b.push_back(copy_run("flush-0", 4, 12 + repeat * 0.1, repeat));
  }
  const auto comparison = compare_runs(a, b, "default", "flush-0");
  EXPECT_EQ(comparison.metric, model::Metric::kDuration);
  ASSERT_EQ(comparison.cells.size(), 1u);
  EXPECT_EQ(comparison.cells[0].tps.verdict, "faster");
  EXPECT_LT(comparison.cells[0].tps.test->change_percent, -50);
  const auto text = render_comparison_text(comparison);
  EXPECT_NE(text.find("elapsed time of fixed-work runs, s (lower is better)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("30.25"), std::string::npos);  // A's median elapsed seconds
}

TEST(ExperimentsCompare, SplitByAttributeRegroupsTheSides) {
  std::vector<model::Run> runs;
  for (int repeat = 1; repeat <= 3; ++repeat) {
    runs.push_back(copy_run("x", 4, 20 + repeat, repeat, "3.2.80"));
    runs.push_back(copy_run("x", 4, 10 + repeat, repeat, "4.5.5"));
  }
  const auto sides = split_by_attribute(runs, "kernel");
  EXPECT_EQ(sides.label_a, "kernel 3.2.80");
  EXPECT_EQ(sides.label_b, "kernel 4.5.5");
  EXPECT_EQ(sides.a.size(), 3u);
  EXPECT_EQ(sides.b.size(), 3u);
  const auto comparison = compare_runs(sides.a, sides.b, sides.label_a, sides.label_b);
  EXPECT_EQ(comparison.cells.at(0).tps.verdict, "faster");
  try {
    (void)split_by_attribute({runs[0]}, "kernel");
    ADD_FAILURE() << "one kernel was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()),
              "--split-by kernel needs runs with exactly two values of kernel, found 1 "
              "(\"3.2.80\")");
  }
}

TEST(ExperimentsReport, FixedWorkHeadlineAndCheckpointSection) {
  model::Run run = copy_run("", 4, 20, 0);
  run.work->bytes = 520000000;
  run.checkpoint_after->start = base::Seconds(21);
  run.checkpoint_after->profile.add({"checkpointer", "", "IO", "DataFileSync"}, 6);
  run.checkpoint_after->profile.add_snapshots(10);
  const auto text = render_text(run);
  EXPECT_NE(text.find("4000000 rows in 20.00 s: 200000 rows/s, 26.0 MB/s"), std::string::npos)
      << text;
  EXPECT_NE(text.find("checkpoint after the run: 2.00 s (from 21.0 s)"), std::string::npos) << text;
  EXPECT_NE(text.find("IO | DataFileSync"), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::exporters
