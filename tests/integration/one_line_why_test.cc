// One line why, where the output is (issue 47 item 12), against the scratch cluster of
// deploy/test.sh: auto's reason for falling back to pg_stat_activity as a user without the right
// to read the server's memory is whole (it was cut to "...CAP_SYS_PTRACE, o"), and
// `--log-level debug` prints the sampling ticks, rate-limited, as the example config says.
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

class OneLineWhyTest : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

nlohmann::json report_under(const std::filesystem::path& data) {
  nlohmann::json report;
  if (!std::filesystem::exists(data / "runs")) return report;
  for (const auto& run : std::filesystem::directory_iterator(data / "runs")) {
    report = nlohmann::json::parse(read_text(run.path() / "report.json"));
  }
  return report;
}

// Root without CAP_SYS_PTRACE may not read the server's memory (the server runs as postgres).
TEST_F(OneLineWhyTest, AutosFallbackReasonIsWholeForAUserWithoutTheRight) {
  const auto data = temp_dir("why-fallback");
  auto command =
      engine::run_command({"setpriv", "--bounding-set=-sys_ptrace", "--inh-caps=-sys_ptrace", "--",
                           pgwaitprof_binary(), "run", test_conninfo(), "--data-dir", data.string(),
                           "--", "-c", "1", "-R", kModestRate, "-T", "2"});
  ASSERT_EQ(command.exit_code, 0) << command.output;
  const auto report = report_under(data);
  ASSERT_FALSE(report.is_null());
  const auto reason = report["sampler"]["source_reason"].get<std::string>();
  EXPECT_TRUE(reason.ends_with("; run as root, as the server's OS user or with CAP_SYS_PTRACE"))
      << reason;
  EXPECT_EQ(report["sampler"]["source"], "activity");
  EXPECT_NE(command.output.find("(auto: " + reason + ")"), std::string::npos) << command.output;
}

TEST_F(OneLineWhyTest, DebugLogsTheSamplingTicksAtMostTenLinesASecond) {
  const auto data = temp_dir("why-debug");
  auto command =
      engine::run_command({pgwaitprof_binary(), "--log-level", "debug", "run", test_conninfo(),
                           "--source", "activity", "--hz", "200", "--brief", "--data-dir",
                           data.string(), "--", "-c", "1", "-R", kModestRate, "-T", "3"});
  ASSERT_EQ(command.exit_code, 0) << command.output;
  const std::regex tick(
      R"(tick target=\S+ source=activity backends=\d+ active=\d+ snapshot_ms=[0-9.]+ ticks=(\d+) missed_total=\d+)");
  uint64_t lines = 0;
  uint64_t ticks = 0;
  for (std::sregex_iterator match(command.output.begin(), command.output.end(), tick), end;
       match != end; ++match) {
    ++lines;
    ticks += std::stoull((*match)[1]);
  }
  const auto report = report_under(data);
  ASSERT_FALSE(report.is_null());
  const double seconds = report["duration_s"].get<double>();
  const auto snapshots = report["sampler"]["snapshots"].get<uint64_t>();
  EXPECT_GE(lines, 5u) << command.output;
  // At most ten a second (the sampler starts before the load and ends after it: a margin).
  EXPECT_LE(static_cast<double>(lines), 10 * (seconds + 3)) << lines << " lines";
  // The lines account for the ticks they stand for.
  EXPECT_GE(ticks, snapshots / 2) << ticks << " of " << snapshots;
}

}  // namespace
}  // namespace pgwaitprof::testing
