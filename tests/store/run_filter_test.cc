// Run filters, time bounds and compare's filter expressions.
#include "store/run_filter.h"

#include <gtest/gtest.h>

namespace pgwaitprof::store {
namespace {

RunSummary summary(std::string label, std::string workload, std::string started) {
  RunSummary run;
  run.id = "20261130-120000-abcd-" + label;
  run.label = std::move(label);
  run.workload = std::move(workload);
  run.started_at = std::move(started);
  run.status = "completed";
  run.host = "bench01";
  run.settings = {{"synchronous_commit", "off"}, {"shared_buffers", "16384"}};
  return run;
}

TEST(RunFilter, GlobsLabelsAndHostsAndMatchesWorkloadExactly) {
  RunFilter filter;
  filter.label = "nightly-*";
  EXPECT_TRUE(filter.matches(summary("nightly-3", "tpcb", "2026-11-30T12:00:00.000Z")));
  EXPECT_FALSE(filter.matches(summary("adhoc", "tpcb", "2026-11-30T12:00:00.000Z")));
  filter.workload = "tpcb";
  EXPECT_FALSE(filter.matches(summary("nightly-3", "tpcb_func", "2026-11-30T12:00:00.000Z")));
  filter.host = "bench0?";
  EXPECT_TRUE(filter.matches(summary("nightly-3", "tpcb", "2026-11-30T12:00:00.000Z")));
  filter.host = "db*";
  EXPECT_FALSE(filter.matches(summary("nightly-3", "tpcb", "2026-11-30T12:00:00.000Z")));
}

TEST(RunFilter, SettingsCompareNamesWithoutCaseAndValuesExactly) {
  RunFilter filter;
  filter.settings = {{"Synchronous_Commit", "off"}};
  EXPECT_TRUE(filter.matches(summary("a", "tpcb", "2026-11-30T12:00:00Z")));
  filter.settings = {{"synchronous_commit", "on"}};
  EXPECT_FALSE(filter.matches(summary("a", "tpcb", "2026-11-30T12:00:00Z")));
  filter.settings = {{"work_mem", "4096"}};  // not recorded: its default, not this value
  EXPECT_FALSE(filter.matches(summary("a", "tpcb", "2026-11-30T12:00:00Z")));
}

TEST(RunFilter, TagsMatchTheirKeyAndAGlobOfTheValue) {
  auto tagged = summary("a", "record", "2026-11-30T12:00:00Z");
  tagged.tags = {{"loadgen", "benchbase-tpcc"}, {"client_host", "bench-2"}};
  const auto untagged = summary("b", "record", "2026-11-30T12:00:00Z");
  FilterOptions options;
  options.tags = {"loadgen=benchbase-*"};
  auto filter = make_filter(options);
  ASSERT_TRUE(filter) << filter.error().message;
  EXPECT_TRUE(filter->matches(tagged));
  EXPECT_FALSE(filter->matches(untagged));
  EXPECT_FALSE(filter->empty());
  options.tags.push_back("client_host=bench-1");  // every tag must match
  EXPECT_FALSE(make_filter(options)->matches(tagged));
  options.tags = {"nokey"};
  const auto bad = make_filter(options);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "invalid value for --tag: \"nokey\"");
  const auto expression = parse_filter_expression("tag.loadgen=benchbase-*;status=completed");
  ASSERT_TRUE(expression && *expression);
  EXPECT_TRUE((*expression)->matches(tagged));
  EXPECT_FALSE((*expression)->matches(untagged));
}

TEST(RunFilter, TimeBoundsAreInclusiveAndADateUntilCoversItsDay) {
  FilterOptions options;
  options.since = "2026-11-30";
  options.until = "2026-11-30";
  const auto filter = make_filter(options);
  ASSERT_TRUE(filter);
  EXPECT_TRUE(filter->matches(summary("a", "tpcb", "2026-11-30T00:00:00.000Z")));
  EXPECT_TRUE(filter->matches(summary("a", "tpcb", "2026-11-30T23:59:59.900Z")));
  EXPECT_FALSE(filter->matches(summary("a", "tpcb", "2026-12-01T00:00:00.000Z")));
  EXPECT_FALSE(filter->matches(summary("a", "tpcb", "2026-11-29T23:59:59.000Z")));
}

TEST(RunFilter, ParsesTimesAndAges) {
  const auto now = std::chrono::system_clock::from_time_t(1764590400);  // 2025-12-01T12:00:00Z
  EXPECT_EQ(*parse_time_bound("--since", "2026-11-30T12:30", false, now), "2026-11-30T12:30:00");
  EXPECT_EQ(*parse_time_bound("--since", "2026-11-30 12:30:15Z", false, now),
            "2026-11-30T12:30:15");
  EXPECT_EQ(*parse_time_bound("--since", "2d", false, now), "2025-11-29T12:00:00");
  EXPECT_EQ(*parse_time_bound("--since", "12h", false, now), "2025-12-01T00:00:00");
  const auto bad = parse_time_bound("--since", "yesterday", false, now);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "invalid value for --since: \"yesterday\"");
  EXPECT_EQ(parse_age("90d")->count(), 90 * 86400);
  EXPECT_EQ(parse_age("2w")->count(), 14 * 86400);
  EXPECT_FALSE(parse_age("90"));
  EXPECT_FALSE(parse_age("-3d"));
  // An age beyond a century would take "now - age" out of what a clock can hold.
  EXPECT_EQ(parse_age("5200w")->count(), 5200LL * 7 * 86400);
  EXPECT_FALSE(parse_age("999999999w"));
  EXPECT_EQ(parse_time_bound("--since", "999999999w", false, now).error().message,
            "invalid value for --since: \"999999999w\"");
}

// A bound that names no day or no time of day is an error, never a string compared as if it
// were one: "2026-13-45" and "2026-02-31" were taken as bounds and "T25:99" as a time.
TEST(RunFilter, RejectsDatesAndTimesThatDoNotExist) {
  const auto now = std::chrono::system_clock::from_time_t(1764590400);
  for (const bool until : {false, true}) {
    const std::string option = until ? "--until" : "--since";
    for (const std::string date :
         {"2026-13-45", "2026-02-31", "2026-00-10", "2026-04-31", "2025-02-29", "2026-11-00"}) {
      EXPECT_EQ(parse_time_bound(option, date, until, now).error().message,
                "invalid value for " + option + ": \"" + date + "\" (no such date)");
    }
    for (const std::string time :
         {"2026-11-30T25:99", "2026-11-30T24:00", "2026-11-30T12:60", "2026-11-30 23:59:60Z"}) {
      EXPECT_EQ(parse_time_bound(option, time, until, now).error().message,
                "invalid value for " + option + ": \"" + time + "\" (no such time of day)");
    }
    EXPECT_FALSE(parse_time_bound(option, "T25:99", until, now));
  }
  EXPECT_EQ(*parse_time_bound("--until", "2024-02-29", true, now), "2024-02-29T23:59:59");
  EXPECT_EQ(*parse_time_bound("--since", "2026-12-31T23:59:59", false, now), "2026-12-31T23:59:59");
  EXPECT_EQ(*parse_time_bound("--since", "2026-01-01 00:00", false, now), "2026-01-01T00:00:00");
  FilterOptions options;
  options.until = "2026-02-31";
  EXPECT_EQ(make_filter(options).error().message,
            "invalid value for --until: \"2026-02-31\" (no such date)");
  EXPECT_FALSE(*parse_filter_expression("since=2026-13-45"));
}

TEST(RunFilter, RejectsBadStatusAndSetting) {
  FilterOptions options;
  options.status = "crashed";
  EXPECT_EQ(make_filter(options).error().message, "invalid value for --status: \"crashed\"");
  options.status = "interrupted";
  options.settings = {"synchronous_commit"};
  EXPECT_EQ(make_filter(options).error().message,
            "invalid value for --setting: \"synchronous_commit\"");
}

TEST(FilterExpression, ParsesTermsAndLeavesOtherTextAlone) {
  const auto expression = parse_filter_expression("label=nightly-*;setting.synchronous_commit=on");
  ASSERT_TRUE(expression);
  ASSERT_TRUE(*expression);
  EXPECT_EQ((*expression)->label, "nightly-*");
  ASSERT_EQ((*expression)->settings.size(), 1U);
  EXPECT_EQ((*expression)->settings[0].second, "on");
  const auto spaced = parse_filter_expression("workload=tpcb and status=completed");
  ASSERT_TRUE(spaced && *spaced);
  EXPECT_EQ((*spaced)->status, "completed");
  EXPECT_FALSE(parse_filter_expression("nightly-3"));           // a label
  EXPECT_FALSE(parse_filter_expression("20261130-120000-ab"));  // an id
  EXPECT_FALSE(parse_filter_expression("colour=blue"));         // not a key
  const auto bad = parse_filter_expression("since=tomorrow");
  ASSERT_TRUE(bad);
  EXPECT_FALSE(*bad);
}

}  // namespace
}  // namespace pgwaitprof::store
