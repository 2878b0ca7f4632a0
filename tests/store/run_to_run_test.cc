// Run-to-run spread: which runs repeat a run's configuration, the spread and the half-width of
// where a repeat should land, and where a run directory's data directory is.
#include "store/run_to_run.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/statistics.h"

namespace pgwaitprof::store {
namespace {

RunSummary repeat_of(const std::string& id, double tps, double client_read = 0.4) {
  RunSummary run;
  run.id = id;
  run.status = "completed";
  run.workload = "tpcb";
  run.command = "pgbench -b tpcb-like -P 1 -c 4 -j 2 -T 50";
  run.clients = 4;
  run.host = "bench1";
  run.server_version = "PostgreSQL 15.18";
  run.settings = {{"synchronous_commit", "on"}};
  run.tps = tps;
  run.wait_shares = {{"Client | ClientRead", client_read}, {"IO | WALSync", 0.3}, {"CPU", 0.2}};
  return run;
}

TEST(RunToRun, OnlyCompletedRepeatsOfTheSameConfigurationAreComparable) {
  const RunSummary run = repeat_of("now", 1000);
  std::vector<RunSummary> history;
  history.push_back(repeat_of("now", 990));  // itself, e.g. a resumed matrix cell
  history.push_back(repeat_of("a", 1010));
  const auto differing = [&](const std::string& id, auto change) {
    auto other = repeat_of(id, 1000);
    change(other);
    history.push_back(other);
  };
  differing("clients", [](RunSummary& other) { other.clients = 8; });
  differing("command", [](RunSummary& other) { other.command += " -M prepared"; });
  differing("settings", [](RunSummary& other) { other.settings["synchronous_commit"] = "off"; });
  differing("host", [](RunSummary& other) { other.host = "bench2"; });
  differing("server", [](RunSummary& other) { other.server_version = "PostgreSQL 16.4"; });
  differing("workload", [](RunSummary& other) { other.workload = "select-only"; });
  differing("failed", [](RunSummary& other) { other.status = "failed"; });
  differing("no-tps", [](RunSummary& other) { other.tps = std::nan(""); });
  history.push_back(repeat_of("b", 980));
  const auto found = comparable_runs(run, history);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].id, "a");
  EXPECT_EQ(found[1].id, "b");
}

TEST(RunToRun, TheNewestRunsOfTheWindowOnly) {
  std::vector<RunSummary> history;
  for (int index = 0; index < 15; ++index) {
    history.push_back(repeat_of("r" + std::to_string(index), 1000 + index));
  }
  const auto found = comparable_runs(repeat_of("now", 1000), history, {.window = 10});
  ASSERT_EQ(found.size(), 10u);
  EXPECT_EQ(found.front().id, "r0");
  EXPECT_EQ(found.back().id, "r9");
}

TEST(RunToRun, TooFewRunsGiveNoFigures) {
  const std::vector<RunSummary> history = {repeat_of("a", 1000), repeat_of("b", 1100)};
  const auto spread = run_to_run(repeat_of("now", 1050), history);
  EXPECT_EQ(spread.runs, 2u);
  EXPECT_EQ(spread.needed, 3u);
  EXPECT_TRUE(spread.figures.empty());
}

TEST(RunToRun, SpreadAndHalfWidthOfTpsAndTheLargestWaits) {
  std::vector<RunSummary> history = {repeat_of("a", 100, 0.3), repeat_of("b", 110, 0.4),
                                     repeat_of("c", 120, 0.5)};
  history[2].wait_shares.erase("CPU");  // none of c's samples were CPU
  auto run = repeat_of("now", 104, 0.45);
  run.wait_shares["Lock | tuple"] = 0.01;
  const auto spread = run_to_run(run, history, {.waits = 3});
  ASSERT_EQ(spread.figures.size(), 4u);  // tps and the 3 largest waits
  const double t = model::student_t_quantile(0.975, 2);
  EXPECT_NEAR(t, 4.303, 1e-3);
  EXPECT_EQ(spread.figures[0].name, "tps");
  EXPECT_DOUBLE_EQ(spread.figures[0].value, 104);
  EXPECT_NEAR(spread.figures[0].sd, 10, 1e-9);
  EXPECT_NEAR(spread.figures[0].half_width, t * std::sqrt(2.0) * 10, 1e-9);
  EXPECT_EQ(spread.figures[1].name, "Client | ClientRead");
  EXPECT_DOUBLE_EQ(spread.figures[1].value, 0.45);
  EXPECT_NEAR(spread.figures[1].sd, 0.1, 1e-9);
  EXPECT_EQ(spread.figures[2].name, "IO | WALSync");
  EXPECT_NEAR(spread.figures[2].sd, 0, 1e-12);
  EXPECT_EQ(spread.figures[3].name, "CPU");  // 0.2, 0.2 and 0: sd 0.11547
  EXPECT_NEAR(spread.figures[3].sd, std::sqrt(0.04 / 3), 1e-9);
}

TEST(RunToRun, TheDataDirectoryOfARunDirectory) {
  EXPECT_EQ(data_dir_of("/d/runs/20261202-1"), std::filesystem::path("/d"));
  EXPECT_EQ(data_dir_of("/d/matrix/20261202-aa/runs/A-c4-r1"), std::filesystem::path("/d"));
  EXPECT_EQ(data_dir_of("/tmp/somewhere/run"), std::nullopt);
}

TEST(RunToRun, TheCommandLeavesTheRunsOwnPathsOut) {
  model::Run run;
  run.id = "x";
  run.loadgen_argv = {"pgbench",
                      "-f",
                      "/d/runs/x/workload.sql",
                      "-P",
                      "1",
                      "-l",
                      "--log-prefix=/d/runs/x/pgbench_log",
                      "-c",
                      "4",
                      "host=/tmp port=5432"};
  EXPECT_EQ(summarize(run, "/d/runs/x").command,
            "pgbench -f workload.sql -P 1 -l -c 4 host=/tmp port=5432");
}

}  // namespace
}  // namespace pgwaitprof::store
