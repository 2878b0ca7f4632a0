// The data directory's run index: built from report.json files, reused while they are
// unchanged, and following run directories that change or disappear.
#include "store/run_index.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace pgwaitprof::store {
namespace {

namespace fs = std::filesystem;

class RunIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pgwaitprof-index-XXXXXX";
    data_dir_ = mkdtemp(pattern);
  }
  void TearDown() override { fs::remove_all(data_dir_); }

  // A copy of a fixture report with its id, label and start changed.
  fs::path add_run(const fs::path& parent, const std::string& id, const std::string& label,
                   const std::string& started) {
    std::ifstream in(fs::path(PGWAITPROF_FIXTURES) /
                     "compare/master/20240301T100045Z-master-c8-r1/report.json");
    auto json = nlohmann::json::parse(in);
    json["id"] = id;
    json["label"] = label;
    json["started_at"] = started;
    const auto dir = parent / id;
    fs::create_directories(dir);
    std::ofstream(dir / "report.json") << json.dump();
    return dir;
  }

  fs::path data_dir_;
};

TEST_F(RunIndex, BuildsReusesAndFollowsTheDirectories) {
  add_run(data_dir_ / "runs", "20261130-100000-aaaa-one", "one", "2026-11-30T10:00:00.000Z");
  const auto two =
      add_run(data_dir_ / "runs", "20261130-110000-bbbb-two", "two", "2026-11-30T11:00:00.000Z");
  add_run(data_dir_ / "matrix/20261130-sweep/runs", "20261130-120000-cccc-m", "sweep",
          "2026-11-30T12:00:00.000Z");
  fs::create_directories(data_dir_ / "runs/20261130-130000-dddd-in-progress");  // no report yet

  IndexStats stats;
  auto runs = load_history(data_dir_, nullptr, &stats);
  ASSERT_EQ(runs.size(), 3U);
  EXPECT_EQ(stats.read, 3U);
  EXPECT_TRUE(stats.written);
  EXPECT_TRUE(fs::exists(index_path(data_dir_)));
  EXPECT_EQ(runs[0].label, "sweep");  // newest first
  EXPECT_EQ(runs[0].matrix, "20261130-sweep");
  EXPECT_EQ(runs[2].label, "one");
  EXPECT_GT(runs[2].tps, 0);
  EXPECT_EQ(runs[2].clients, 8);
  EXPECT_FALSE(runs[2].top_wait.empty());

  runs = load_history(data_dir_, nullptr, &stats);
  EXPECT_EQ(stats.read, 0U);  // every entry reused
  EXPECT_FALSE(stats.written);
  EXPECT_EQ(runs.size(), 3U);

  fs::remove_all(two);
  runs = load_history(data_dir_, nullptr, &stats);
  EXPECT_EQ(runs.size(), 2U);
  EXPECT_TRUE(stats.written);
  for (const auto& run : runs) EXPECT_NE(run.label, "two");
}

TEST_F(RunIndex, RereadsAChangedReportAndRebuildsABrokenIndex) {
  const auto dir =
      add_run(data_dir_ / "runs", "20261130-100000-aaaa-one", "one", "2026-11-30T10:00:00.000Z");
  load_history(data_dir_);
  add_run(data_dir_ / "runs", "20261130-100000-aaaa-one", "renamed", "2026-11-30T10:00:00.000Z");
  fs::last_write_time(dir / "report.json",
                      fs::last_write_time(dir / "report.json") + std::chrono::seconds(5));
  EXPECT_EQ(load_history(data_dir_).at(0).label, "renamed");

  std::ofstream(index_path(data_dir_)) << "{not json";
  IndexStats stats;
  EXPECT_EQ(load_history(data_dir_, nullptr, &stats).size(), 1U);
  EXPECT_EQ(stats.read, 1U);
}

TEST_F(RunIndex, LeavesOutUnreadableReportsWithAWarning) {
  fs::create_directories(data_dir_ / "runs/broken");
  std::ofstream(data_dir_ / "runs/broken/report.json") << "{";
  std::vector<std::string> warnings;
  EXPECT_TRUE(load_history(data_dir_, &warnings).empty());
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("could not read report"), std::string::npos);
}

// A report beyond the limit is not parsed at all (a sparse file: were it parsed, it would be
// "could not read report" after reading 64 MB of zeros); the other runs are listed.
TEST_F(RunIndex, LeavesOutTooLargeReportsUnreadWithAWarning) {
  add_run(data_dir_ / "runs", "20261130-100000-aaaa-one", "one", "2026-11-30T10:00:00.000Z");
  const auto huge = data_dir_ / "runs/huge/report.json";
  fs::create_directories(huge.parent_path());
  std::ofstream(huge) << "{";
  fs::resize_file(huge, kMaxHistoryReportBytes + 1);
  std::vector<std::string> warnings;
  IndexStats stats;
  const auto runs = load_history(data_dir_, &warnings, &stats);
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0].label, "one");
  EXPECT_EQ(stats.unreadable, 1U);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_EQ(warnings[0],
            "report \"" + huge.string() +
                "\" is too large for the run history (65 MB, at most 64 MB): left out");
}

TEST_F(RunIndex, ResolvesIdsPrefixesLabelsAndExpressions) {
  add_run(data_dir_ / "runs", "20261130-100000-aaaa-x", "nightly", "2026-11-30T10:00:00.000Z");
  add_run(data_dir_ / "runs", "20261130-110000-bbbb-x", "nightly", "2026-11-30T11:00:00.000Z");
  add_run(data_dir_ / "runs", "20261201-090000-cccc-y", "adhoc", "2026-12-01T09:00:00.000Z");
  const auto runs = load_history(data_dir_);
  EXPECT_EQ(resolve_run(runs, "20261201")->label, "adhoc");
  EXPECT_EQ(resolve_run(runs, "nightly")->id, "20261130-110000-bbbb-x");  // its newest
  const auto ambiguous = resolve_run(runs, "20261130");
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(ambiguous.error().message,
            "run id prefix \"20261130\" is ambiguous: 20261130-110000-bbbb-x, "
            "20261130-100000-aaaa-x");
  EXPECT_EQ(resolve_run(runs, "nope").error().message, "no run \"nope\" in the history");
  EXPECT_EQ(select_runs(runs, "nightly")->size(), 2U);
  EXPECT_EQ(select_runs(runs, "label=night*;since=2026-11-30T10:30")->size(), 1U);
  EXPECT_EQ(select_runs(runs, "20261130-100000")->size(), 1U);
  EXPECT_FALSE(select_runs(runs, "label=none"));
}

}  // namespace
}  // namespace pgwaitprof::store
