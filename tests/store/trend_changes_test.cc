// Change points in the run history (store/trend_changes.h) on summaries: the step named at its
// run with its interval, the wait that moved with it and the setting that changed; failed runs
// kept out and named; too few runs; mixed workloads refused.
#include "store/trend_changes.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "exporters/render/history_render.h"

namespace pgwaitprof::store {
namespace {

// Run `index` of a history: tps around `tps` (a fixed +-1.5 % pattern), p99 around 2 ms, and
// two waits whose shares follow the level.
RunSummary run_at(int index, double tps, bool delayed) {
  RunSummary run;
  run.id = fmt::format("run-{:02d}", index);
  run.started_at = fmt::format("2026-12-01T{:02d}:{:02d}:00Z", index / 60, index % 60);
  run.status = "completed";
  run.workload = "tpcb-like";
  run.command = "pgbench -c 4 -T 3";
  const double wobble = 1 + 0.015 * std::sin(index * 2.1);
  run.tps = tps * wobble;
  run.p99_ms = (delayed ? 8.0 : 2.0) / wobble;
  run.aas = 3.5;
  run.wait_shares = delayed
                        ? std::map<std::string, double>{{"IPC | CommitDelay", 0.6}, {"CPU", 0.2}}
                        : std::map<std::string, double>{{"LWLock | WALWrite", 0.3}, {"CPU", 0.5}};
  if (delayed) run.settings["commit_delay"] = "2000";
  run.server_version = "PostgreSQL 15.8";
  return run;
}

std::vector<RunSummary> history_with_step(int runs, int step_at) {
  std::vector<RunSummary> history;
  for (int index = 1; index <= runs; ++index) {
    history.push_back(run_at(index, index >= step_at ? 500 : 2100, index >= step_at));
  }
  return history;
}

TEST(TrendChanges, NamesTheRunTheStepItsIntervalTheWaitAndTheSetting) {
  auto runs = history_with_step(22, 13);
  runs[4].status = "failed";
  const auto changes = find_trend_changes(runs);
  ASSERT_TRUE(changes.ok()) << changes.error().message;
  ASSERT_EQ(changes->groups.size(), 1u);
  const auto& group = changes->groups[0];
  EXPECT_EQ(group.skipped, std::vector<std::string>{"run-05 (failed)"});
  EXPECT_EQ(group.runs.size(), 21u);
  const TrendChange* tps = nullptr;
  for (const auto& change : group.changes) {
    EXPECT_EQ(group.runs[change.run].id, "run-13") << change.metric;
    if (change.metric == "tps") tps = &change;
  }
  ASSERT_NE(tps, nullptr);
  EXPECT_EQ(tps->runs_before, 11u);  // 12 less the failed one
  EXPECT_EQ(tps->runs_after, 10u);
  ASSERT_TRUE(tps->test && tps->test->ci_low_percent);
  EXPECT_LT(*tps->test->ci_low_percent, -76.19 + 0.01);
  EXPECT_GT(*tps->test->ci_high_percent, -76.19 - 0.01);
  EXPECT_LT(*tps->test->ci_high_percent, -70);
  ASSERT_FALSE(tps->waits.empty());
  EXPECT_EQ(tps->waits[0].wait, "IPC | CommitDelay");
  EXPECT_NEAR(tps->waits[0].after, 0.6 * 3.5, 1e-9);
  EXPECT_EQ(tps->waits[0].significant, true);
  ASSERT_EQ(tps->changed.size(), 1u);
  EXPECT_EQ(tps->changed[0].name, "setting commit_delay");
  EXPECT_EQ(tps->changed[0].after, "2000");
  const auto text = exporters::render_trend_changes(*changes, "text");
  EXPECT_NE(text.find("run-13"), std::string::npos) << text;
  EXPECT_NE(text.find("kept out: run-05 (failed)"), std::string::npos) << text;
  EXPECT_NE(text.find("setting commit_delay (default) -> 2000"), std::string::npos) << text;
  for (const char* format : {"md", "csv", "json", "html"}) {
    EXPECT_NE(exporters::render_trend_changes(*changes, format).find("run-13"), std::string::npos)
        << format;
  }
}

// The calibration's real step (synchronous_commit off -> on with commit_delay, 2 clients): tps
// 2,000 -> 330, the AAS about the same, the shares of the runs' waits as they were. By AAS or by
// share of DB time CPU moved most (its share fell as the new waits took the clients' time); by
// the time a transaction the three are the commit delay's sleep, the row locks waiting for
// commits and the WAL flush, and CPU is not among them.
TEST(TrendChanges, TheWaitsThatMovedAreThoseWhoseTimeATransactionMovedMost) {
  const std::map<std::string, double> off = {{"CPU", 0.565},
                                             {"Client | ClientRead", 0.362},
                                             {"Kernel | sleeping (no wait event)", 0.030},
                                             {"Lock | transactionid", 0.035},
                                             {"IO | WALSync", 0.003}};
  const std::map<std::string, double> on = {{"CPU", 0.128},
                                            {"Client | ClientRead", 0.045},
                                            {"Kernel | sleeping (no wait event)", 0.374},
                                            {"LWLock | WALWrite", 0.198},
                                            {"Lock | transactionid", 0.210},
                                            {"IO | WALSync", 0.040}};
  std::vector<RunSummary> runs;
  for (int index = 1; index <= 20; ++index) {
    auto run = run_at(index, index > 12 ? 330 : 2000, false);
    run.aas = (index > 12 ? 1.89 : 1.79) * (1 + 0.02 * std::cos(index * 1.3));
    run.wait_shares = index > 12 ? on : off;
    runs.push_back(run);
  }
  const auto changes = find_trend_changes(runs);
  ASSERT_TRUE(changes.ok()) << changes.error().message;
  const TrendChange* tps = nullptr;
  for (const auto& change : changes->groups[0].changes) {
    if (change.metric == "tps") tps = &change;
  }
  ASSERT_NE(tps, nullptr);
  EXPECT_EQ(tps->run_id, "run-13");
  std::vector<std::string> named;
  for (const auto& shift : tps->waits) named.push_back(shift.wait);
  EXPECT_EQ(named, (std::vector<std::string>{"Kernel | sleeping (no wait event)",
                                             "Lock | transactionid", "LWLock | WALWrite"}));
  const auto& sleep = tps->waits[0];
  EXPECT_NEAR(sleep.ms_before, 1000 * 0.030 * 1.79 / 2000, 0.005);
  EXPECT_NEAR(sleep.ms_after, 1000 * 0.374 * 1.89 / 330, 0.1);
  EXPECT_NEAR(sleep.share_before, 0.030, 1e-9);
  EXPECT_NEAR(sleep.share_after, 0.374, 1e-9);
  EXPECT_EQ(sleep.significant, true);
  const auto text = exporters::render_trend_changes(*changes, "text");
  const std::regex line(
      R"(Kernel \| sleeping \(no wait event\) 0\.0\d\d -> 2\.1\d ms a transaction, 3% -> 37% of DB )"
      R"(time \(beyond noise\))");
  EXPECT_TRUE(std::regex_search(text, line)) << text;
}

TEST(TrendChanges, IdenticalRunsHaveNone) {
  const auto changes = find_trend_changes(history_with_step(30, 1000));
  ASSERT_TRUE(changes.ok());
  EXPECT_TRUE(changes->groups[0].changes.empty());
}

TEST(TrendChanges, TooFewRunsSaysHowManyMore) {
  const auto changes = find_trend_changes(history_with_step(6, 4));
  ASSERT_TRUE(changes.ok());
  EXPECT_EQ(changes->groups[0].more_runs_needed(), 5u);
  EXPECT_TRUE(changes->groups[0].changes.empty());
  EXPECT_NE(exporters::render_trend_changes(*changes, "text").find("need 11 runs: 5 more"),
            std::string::npos);
}

TEST(TrendChanges, MixedWorkloadsAreRefusedWithTheFilter) {
  auto runs = history_with_step(12, 100);
  runs[3].workload = "select-only";
  const auto changes = find_trend_changes(runs);
  ASSERT_FALSE(changes.ok());
  EXPECT_EQ(changes.error().message,
            "the history has runs of different workloads (select-only, tpcb-like): split them "
            "with --workload NAME or --group-by workload");
  runs[3].workload = "tpcb-like";
  runs[3].command = "pgbench -c 8 -T 3";
  const auto commands = find_trend_changes(runs);
  ASSERT_FALSE(commands.ok());
  EXPECT_NE(commands.error().message.find("--group-by label"), std::string::npos);
  ChangeOptions by_workload;
  by_workload.group_by = "label";
  runs[3].label = "other";
  EXPECT_TRUE(find_trend_changes(runs, by_workload).ok());
}

// What the daemon reports after a run: the change points that run brought, once.
TEST(TrendChanges, NewChangePointsAreThoseTheNewestRunBrought) {
  const auto history = history_with_step(16, 13);  // 12 + 4 runs: the step is found at run 15
  std::vector<std::string> reported;
  for (size_t runs = 10; runs <= history.size(); ++runs) {
    const std::vector<RunSummary> so_far(history.begin(), history.begin() + runs);
    const auto brought = new_change_points(so_far);
    ASSERT_TRUE(brought.ok()) << brought.error().message;
    for (const auto& change : *brought) {
      reported.push_back(fmt::format("{} after {}: {}", change.metric, runs, change.run + 1));
    }
  }
  ASSERT_FALSE(reported.empty());
  std::set<std::string> metrics;
  for (const auto& line : reported) {
    EXPECT_NE(line.find(": 13"), std::string::npos) << line;
    EXPECT_TRUE(metrics.insert(line.substr(0, line.find(" after"))).second) << line;  // once
  }
  EXPECT_TRUE(metrics.contains("tps"));
}

}  // namespace
}  // namespace pgwaitprof::store
