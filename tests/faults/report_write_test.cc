// kill -9 while a run's report is written (issue 47 item 5): every file of the run directory
// says one state. Killed before report.json (the commit point) is in place: report.json says
// unfinished and no rendering says otherwise; killed after it: report.json says completed and
// the renderings staged beside it are put in place by the next invocation. Either way the next
// invocation leaves no temporary file (report.json.tmp.PID among them).
#include <fmt/format.h>

#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

const char* const kRenderings[] = {"report.txt", "report.md", "report.html"};

std::vector<std::filesystem::path> temporary_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> found;
  for (const auto& file : files_under(dir)) {
    if (file.filename().string().find(".tmp.") != std::string::npos) found.push_back(file);
  }
  return found;
}

std::filesystem::path only_run(const std::filesystem::path& data) {
  std::filesystem::path found;
  for (const auto& entry : std::filesystem::directory_iterator(data / "runs")) {
    found = entry.path();
  }
  return found;
}

class ReportWriteKilled : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { require_cluster(); }
};

TEST_P(ReportWriteKilled, EveryFileSaysOneStateAndTheNextInvocationSweepsTheRest) {
  const std::string point = GetParam();
  const auto dir = temp_dir("report-killed-" + point);
  const auto data = dir / "data";
  const auto killed = engine::run_command({"/usr/bin/env", "PGWAITPROF_FAULT_KILL=" + point,
                                           pgwaitprof_binary(), "run", "--no-daemon", "--data-dir",
                                           data.string(), "--", "-c", "1", "-t", "50"});
  ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << killed.output;
  const auto run_dir = only_run(data);
  const auto report = nlohmann::json::parse(read_text(run_dir / "report.json"));
  const bool committed = point == "report-committed";
  EXPECT_EQ(report["status"], committed ? "completed" : "failed") << report.dump();
  // Until the next invocation: no rendering in place (only staged), none to contradict
  // report.json.
  for (const char* rendering : kRenderings) {
    EXPECT_FALSE(std::filesystem::exists(run_dir / rendering)) << rendering;
  }
  EXPECT_FALSE(temporary_files(data).empty());
  if (!committed) {
    const auto left = temporary_files(run_dir);
    EXPECT_TRUE(std::any_of(left.begin(), left.end(), [](const auto& file) {
      return file.filename().string().starts_with("report.json.tmp.");
    })) << "no report.json.tmp.PID, as a kill in the middle of report.json's write leaves";
  }

  // The next invocation in the data directory finishes (or removes) what was left.
  const auto next = engine::run_command({pgwaitprof_binary(), "run", "--no-daemon", "--data-dir",
                                         data.string(), "--", "-c", "1", "-t", "20"});
  EXPECT_EQ(next.exit_code, 0) << next.output;
  EXPECT_TRUE(temporary_files(data).empty()) << temporary_files(data).front();
  const auto after = nlohmann::json::parse(read_text(run_dir / "report.json"));
  EXPECT_EQ(after["status"], report["status"]);
  for (const char* rendering : kRenderings) {
    if (committed) {
      ASSERT_TRUE(std::filesystem::exists(run_dir / rendering)) << rendering;
      EXPECT_EQ(read_text(run_dir / rendering).find("unfinished"), std::string::npos);
    } else {
      EXPECT_FALSE(std::filesystem::exists(run_dir / rendering)) << rendering;
    }
  }
  const auto rendered = engine::run_command({pgwaitprof_binary(), "report", run_dir.string()});
  if (committed) {
    EXPECT_EQ(rendered.output, read_text(run_dir / "report.txt"));
  } else {
    EXPECT_NE(rendered.output.find("unfinished"), std::string::npos) << rendered.output;
  }
}

INSTANTIATE_TEST_SUITE_P(Points, ReportWriteKilled,
                         ::testing::Values("report-staged", "report-committed"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace pgwaitprof::testing
