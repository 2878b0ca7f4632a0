// `pgwaitprof run --cpu-profile` against the scratch cluster with real pgbench and the real
// kernel's perf events (issue 43): simple queries (-S) spend a visible share of their CPU in the
// parser and prepared ones (-M prepared) do not, which the client backends' top functions must
// show; cpu.folded holds their stacks. The refusals, each one warning while the run goes on: a
// target marked not local, pgwaitprof as the server's user with perf_event_paranoid above 0, and
// as a user who may not read the server's processes.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>

#include <fstream>
#include <set>
#include <sstream>

#include "collectors/cpu/perf_events.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

// The parser's own functions, as a self-time profile names them.
const std::set<std::string> kParser = {"base_yyparse", "base_yylex", "core_yylex", "raw_parser"};

class CpuProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cluster();
    const auto paranoid = collectors::cpu::read_perf_event_paranoid();
    if (::geteuid() != 0 && (!paranoid || *paranoid > 0)) {
      GTEST_SKIP() << "perf events are closed to this user: run the suite as root, or with "
                      "kernel.perf_event_paranoid at 0 or less";
    }
  }
};

// The client backends' top `count` self functions of user space (the kernel's, which on a busy
// virtual machine are a third or more of the samples and move with the host, left out).
std::vector<std::string> top_functions(const nlohmann::json& report, size_t count) {
  std::vector<std::string> names;
  const auto& self = report.at("cpu_profile").at("groups").at("client backend").at("self");
  for (const auto& function : self) {
    if (names.size() == count) break;
    if (!function.at("kernel").get<bool>()) names.push_back(function.at("function"));
  }
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += name + ", ";
  return text;
}

TEST_F(CpuProfileTest, SimpleQueriesShowTheParserAndPreparedOnesDoNot) {
  const auto data = temp_dir("cpu-simple");
  // The cluster served earlier tests, whose updates leave dead tuples: -S then spends its time
  // pruning pages (heap_page_prune_opt, HeapTupleSatisfiesVacuumHorizon and the btree above the
  // parser, seen once under the sanitizers).
  ASSERT_EQ(psql("VACUUM").exit_code, 0);
  auto simple = pgwaitprof_run(data / "simple", {test_conninfo(), "--cpu-profile"},
                               {"-S", "-c", "2", "-j", "2", "-T", "5"});
  ASSERT_EQ(simple.exit_code, 0) << simple.output;
  ASSERT_TRUE(simple.report.contains("cpu_profile")) << simple.report["warnings"].dump();
  const auto& profile = simple.report["cpu_profile"];
  EXPECT_EQ(profile["hz"], 99);
  EXPECT_GT(profile["samples"].get<uint64_t>(), 50u);
  const auto simple_top = top_functions(simple.report, 10);
  std::cout << "-S top 10: " << joined(simple_top) << "\n";
  EXPECT_TRUE(std::any_of(simple_top.begin(), simple_top.end(), [](const auto& name) {
    return kParser.contains(name);
  })) << joined(simple_top);
  // cpu.folded: one "stack count" line per stack, root first, beside waits.folded.
  const auto folded = read_text(simple.dir / "cpu.folded");
  ASSERT_FALSE(folded.empty());
  EXPECT_TRUE(std::filesystem::exists(simple.dir / "waits.folded"));
  std::istringstream lines(folded);
  uint64_t total = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    total += std::stoull(line.substr(space + 1));
  }
  EXPECT_EQ(total, profile["groups"]["client backend"]["samples"].get<uint64_t>());
  EXPECT_NE(folded.find("base_yyparse"), std::string::npos);

  auto prepared = pgwaitprof_run(data / "prepared", {test_conninfo(), "--cpu-profile"},
                                 {"-S", "-M", "prepared", "-c", "2", "-j", "2", "-T", "5"});
  ASSERT_EQ(prepared.exit_code, 0) << prepared.output;
  ASSERT_TRUE(prepared.report.contains("cpu_profile"));
  const auto prepared_top = top_functions(prepared.report, 10);
  std::cout << "-M prepared top 10: " << joined(prepared_top) << "\n";
  EXPECT_GT(prepared.report["cpu_profile"]["samples"].get<uint64_t>(), 50u);
  EXPECT_TRUE(std::none_of(prepared_top.begin(), prepared_top.end(), [](const auto& name) {
    return kParser.contains(name);
  })) << joined(prepared_top);

  // compare names the parser among the functions that moved, gone on the prepared side.
  const auto compared = pgwaitprof_stdout(
      {"compare", simple.dir.string(), prepared.dir.string(), "--format", "json"});
  ASSERT_EQ(compared.exit_code, 0) << compared.output;
  const auto comparison = nlohmann::json::parse(compared.output);
  bool parser_moved = false;
  for (const auto& move : comparison.at("functions")) {
    if (kParser.contains(move.at("function").get<std::string>()) &&
        move.at("share_a").get<double>() > 0 && move.at("share_b").get<double>() == 0) {
      parser_moved = true;
    }
  }
  EXPECT_TRUE(parser_moved) << comparison.at("functions").dump();
}

// A run of `pgwaitprof run --cpu-profile` as `account` (none: as we are) and the warnings of
// its report about the profile; the run must complete without one.
std::vector<std::string> refused_run(const std::string& name, std::optional<engine::RunAs> account,
                                     std::vector<std::string> ours) {
  const auto data = temp_dir(name);
  ::chmod(data.c_str(), 0777);  // the account's data directory goes in it
  std::vector<std::string> argv{pgwaitprof_binary(), "run", test_conninfo(), "--cpu-profile"};
  argv.insert(argv.end(), ours.begin(), ours.end());
  argv.insert(argv.end(), {"--data-dir", (data / "d").string(), "--", "-S", "-c", "1", "-T", "2"});
  // The account connects through the cluster's socket: deploy/test.sh's cluster directory
  // (mktemp, 0700) lets others through for the run only.
  struct stat socket_dir {};
  const std::string host = env("PGHOST");
  const bool opened = account && ::stat(host.c_str(), &socket_dir) == 0 &&
                      ::chmod(host.c_str(), (socket_dir.st_mode & 07777) | S_IXOTH) == 0;
  const auto result = engine::run_command(argv, {account, {}});
  if (opened) ::chmod(host.c_str(), socket_dir.st_mode & 07777);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::vector<std::string> warnings;
  for (const auto& entry : std::filesystem::directory_iterator(data / "d" / "runs")) {
    const auto report = nlohmann::json::parse(read_text(entry.path() / "report.json"));
    EXPECT_EQ(report["status"], "completed");
    EXPECT_FALSE(report.contains("cpu_profile"));
    EXPECT_FALSE(std::filesystem::exists(entry.path() / "cpu.folded"));
    for (const auto& warning : report["warnings"]) {
      if (warning.get<std::string>().starts_with("no CPU profile: ")) warnings.push_back(warning);
    }
    // The log says it too, in the same words.
    if (!warnings.empty()) {
      EXPECT_NE(result.output.find(warnings.front()), std::string::npos);
    }
  }
  return warnings;
}

TEST_F(CpuProfileTest, ATargetMarkedNotLocalRunsWithoutAProfile) {
  const auto warnings = refused_run("cpu-remote", std::nullopt, {"--local", "false"});
  ASSERT_FALSE(warnings.empty());
  EXPECT_EQ(warnings.front(),
            "no CPU profile: the target is configured as not on this host (local: no)");
}

TEST_F(CpuProfileTest, PerfEventsClosedToTheServersUserSayWhy) {
  const auto paranoid = collectors::cpu::read_perf_event_paranoid();
  if (::geteuid() != 0 || !paranoid || *paranoid <= 0) {
    GTEST_SKIP() << "needs root (to run pgwaitprof as the server's user) and "
                    "perf_event_paranoid above 0";
  }
  const auto warnings = refused_run("cpu-paranoid", engine::unprivileged_account(), {});
  ASSERT_FALSE(warnings.empty());
  EXPECT_EQ(warnings.front(),
            "no CPU profile: could not open the CPU profile's perf events: Permission denied; "
            "kernel.perf_event_paranoid is " +
                std::to_string(*paranoid) +
                ", and sampling every process needs it at 0 or less (sysctl "
                "kernel.perf_event_paranoid=0) or pgwaitprof run as root or with CAP_PERFMON");
}

TEST_F(CpuProfileTest, ServerProcessesOfAnotherUserSayWhy) {
  const passwd* nobody = ::getpwnam("nobody");
  if (::geteuid() != 0 || nobody == nullptr) GTEST_SKIP() << "needs root and a nobody account";
  const auto warnings =
      refused_run("cpu-nobody", engine::RunAs{nobody->pw_uid, nobody->pw_gid, "nobody"}, {});
  ASSERT_FALSE(warnings.empty());
  EXPECT_TRUE(warnings.front().starts_with("no CPU profile: could not read \"/proc/"))
      << warnings.front();
  EXPECT_TRUE(warnings.front().ends_with(
      "/maps\" of the server's postmaster: Permission denied; run pgwaitprof as the server's "
      "user or as root"))
      << warnings.front();
}

}  // namespace
}  // namespace pgwaitprof::testing
