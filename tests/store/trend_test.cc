// The trend's control-limit rule.
#include "store/trend.h"

#include <gtest/gtest.h>

#include <cmath>

#include "exporters/render/history_render.h"

namespace pgwaitprof::store {
namespace {

RunSummary point(int day, double tps, double half_width = 20,
                 std::string synchronous_commit = "off") {
  RunSummary run;
  run.id = "run-" + std::to_string(day);
  run.started_at =
      "2026-11-" + std::string(day < 10 ? "0" : "") + std::to_string(day) + "T12:00:00Z";
  run.status = "completed";
  run.tps = tps;
  run.tps_half_width = half_width;
  run.class_aas = {{"CPU", 1.5}, {"IO", 0.5}, {"LWLock", 0.2}, {"Lock", 0.01}};
  run.settings = {{"synchronous_commit", synchronous_commit}};
  return run;
}

TEST(Trend, MadOfASample) { EXPECT_DOUBLE_EQ(median_absolute_deviation({1, 2, 3, 4, 100}, 3), 1); }

TEST(Trend, FlagsTheRegressionAndNotTheNoise) {
  std::vector<RunSummary> runs;
  const double noisy[] = {1000, 1010, 990, 1005, 995, 1002, 640, 998, 1012};
  for (int day = 1; day <= 9; ++day) runs.push_back(point(day, noisy[day - 1]));
  const auto trend = build_trend(runs);
  ASSERT_EQ(trend.points.size(), 9U);
  for (const auto& p : trend.points) {
    EXPECT_EQ(p.flag, p.run.id == "run-7" ? "regression" : "") << p.run.id;
  }
  EXPECT_FALSE(trend.points[1].baseline_median);  // fewer than 3 before it
  EXPECT_EQ(trend.points[3].baseline_runs, 3U);
  EXPECT_EQ(trend.points[8].baseline_runs, 5U);
  EXPECT_NEAR(trend.points[6].change_pct, 100 * (640.0 / 1002 - 1), 1e-9);
  EXPECT_NE(trend.rule.find("1.4826 x MAD"), std::string::npos);
  EXPECT_LT(trend.points[6].lower, 1002);
  EXPECT_GT(trend.points[6].lower, 950);
  EXPECT_EQ(trend.wait_classes, (std::vector<std::string>{"CPU", "IO", "LWLock"}));
}

TEST(Trend, TheRunsOwnIntervalKeepsAWideRunUnflagged) {
  std::vector<RunSummary> runs;
  for (int day = 1; day <= 5; ++day) runs.push_back(point(day, 1000 + day, 2));
  runs.push_back(point(6, 900, 150));  // its CI reaches the band
  runs.push_back(point(7, 900, 2));
  const auto trend = build_trend(runs);
  EXPECT_EQ(trend.points[5].flag, "");
  EXPECT_EQ(trend.points[6].flag, "regression");
}

TEST(Trend, TheBandIsARatioAroundTheMedian) {
  std::vector<RunSummary> runs;
  const double noisy[] = {523, 647, 1150, 868, 440, 186, 50};  // a busy host's runs
  for (int day = 1; day <= 7; ++day) runs.push_back(point(day, noisy[day - 1], 0));
  const auto trend = build_trend(runs);
  const auto& sixth = trend.points[5];
  ASSERT_TRUE(sixth.baseline_median);
  EXPECT_NEAR(*sixth.baseline_median, 647, 1e-9);
  EXPECT_NEAR(sixth.lower * sixth.upper, 647.0 * 647.0, 1e-6);  // symmetric in ratio
  EXPECT_EQ(sixth.flag, "");                      // 186 is within the noise of such a host
  EXPECT_EQ(trend.points[6].flag, "regression");  // 50 is not
}

TEST(Trend, GroupsJudgeEachGroupOnItsOwn) {
  std::vector<RunSummary> runs;
  for (int day = 1; day <= 8; ++day) {
    runs.push_back(point(day, day % 2 ? 1000 + day : 300 + day, 5, day % 2 ? "off" : "on"));
  }
  TrendOptions options;
  options.group_by = "setting:synchronous_commit";
  const auto trend = build_trend(runs, options);
  for (const auto& p : trend.points) EXPECT_EQ(p.flag, "") << p.run.id;
  EXPECT_EQ(trend.points.front().group, "off");
  EXPECT_EQ(trend.points.back().group, "on");
  EXPECT_EQ(build_trend(runs).points.size(), 8U);
  size_t flagged = 0;
  for (const auto& p : build_trend(runs).points) flagged += !p.flag.empty();
  EXPECT_GT(flagged, 0U);  // ungrouped, the alternation is outside the noise
}

TEST(Trend, UnfinishedRunsAreShownButNeitherJudgedNorBaseline) {
  std::vector<RunSummary> runs;
  for (int day = 1; day <= 4; ++day) runs.push_back(point(day, 1000));
  runs.push_back(point(5, 10));
  runs.back().status = "interrupted";
  const auto trend = build_trend(runs);
  EXPECT_EQ(trend.points[4].flag, "");
  EXPECT_FALSE(trend.points[4].baseline_median);
  const auto text = exporters::render_trend(trend, "text");
  EXPECT_NE(text.find("interrupted"), std::string::npos);
  EXPECT_NE(text.find("rule: a run is flagged"), std::string::npos);
}

TEST(Trend, GroupByNamesAreChecked) {
  EXPECT_TRUE(valid_group_by("setting:work_mem"));
  EXPECT_TRUE(valid_group_by("server_version"));
  EXPECT_FALSE(valid_group_by("setting:"));
  EXPECT_FALSE(valid_group_by("colour"));
}

}  // namespace
}  // namespace pgwaitprof::store
