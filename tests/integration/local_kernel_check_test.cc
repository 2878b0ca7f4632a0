// The kernel check of a run on a local server (model/kernel_check.h): the memory source's
// sampled figures against the kernel's on-CPU and run-queue time of the same backends, with no
// warning on a busy host or beside backends that come and go (issue 47 item 6); the activity
// source's bias caught; and with no kernel view, no check and the CPU share called a lower bound.
#include <iostream>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

class LocalKernelCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cluster();
    ASSERT_EQ(getuid(), 0u) << "the memory source tests run as root, like CI";
  }
};

// The memory source on a local server: the report says so, and the run's sampled CPU agrees
// with the kernel's (pgbench -S keeps the backends on a CPU). (Auto traces a local server where
// the kernel allows it: TraceSourceTest.AutoTracesALocalServerAndItsCheckHolds.)
TEST_F(LocalKernelCheckTest, ALocalServerReadFromMemoryPassesIt) {
  const auto dir = temp_dir("memory-local");
  auto run = pgwaitprof_run(dir, {test_conninfo(), "--source", "memory"},
                            {"-S", "-c", "2", "-j", "2", "-T", "6"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto& sampler = run.report["sampler"];
  EXPECT_EQ(sampler["requested_source"], "memory");
  EXPECT_EQ(sampler["source"], "memory");
  const auto& check = run.report["summary"]["kernel_check"];
  ASSERT_TRUE(check.is_object()) << run.report["summary"].dump();
  EXPECT_TRUE(check["judged"].get<bool>()) << check.dump();
  EXPECT_TRUE(check["within"].get<bool>()) << check.dump();
  const auto text = read_text(run.dir / "report.txt");
  EXPECT_NE(text.find("sampler   memory, 100 Hz"), std::string::npos) << text;
  EXPECT_NE(text.find("check     client backends sampled running"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel: on a CPU"), std::string::npos) << text;
}

// The kernel check's warnings of a run (the report's warnings naming the kernel's figures).
std::vector<std::string> kernel_warnings(const RunResult& run) {
  std::vector<std::string> found;
  for (const auto& warning : run.report["warnings"]) {
    const auto text = warning.get<std::string>();
    if (text.find("the kernel's") != std::string::npos) found.push_back(text);
  }
  return found;
}

// Issue 47: a busy host, the memory source at pgbench -c 2 (TPC-B: fdatasync, recv and send
// inside waits) with a second pgbench beside it. The CPU samples alone fall below the kernel's
// on-CPU time (13: 0.52 against 0.85, OUTSIDE); like with like, the backends sampled running
// (state R, waiting or not) against on-CPU + run queue, there is no warning.
TEST_F(LocalKernelCheckTest, RaisesNoWarningOnTheMemorySourceBesideASecondPgbench) {
  const auto dir = temp_dir("memory-busy");
  // Ended when the run has ended: a machine that is slow to start the run still has it beside.
  ChildProcess beside(
      {base::find_executable("pgbench"), "-n", "-c", "2", "-j", "2", "-T", "60", test_conninfo()},
      dir / "beside.log");
  auto run = pgwaitprof_run(dir, {test_conninfo(), "--source", "memory"},
                            {"-c", "2", "-j", "2", "-T", "8"});
  const bool beside_throughout = beside.end();
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(beside_throughout) << "the second pgbench ended before the run did";
  const auto& check = run.report["summary"]["kernel_check"];
  ASSERT_TRUE(check.is_object()) << run.report["summary"].dump();
  std::cout << "kernel check beside a second pgbench: " << check.dump() << "\n";
  EXPECT_TRUE(check["judged"].get<bool>()) << check.dump();
  ASSERT_TRUE(check["sampled_running_aas"].is_number()) << check.dump();
  EXPECT_TRUE(check["within"].get<bool>()) << check.dump();
  EXPECT_TRUE(kernel_warnings(run).empty()) << run.report["warnings"].dump();
  EXPECT_NE(read_text(run.dir / "report.txt").find("check     client backends sampled running"),
            std::string::npos);
}

// Issue 47: pgbench -C (a connection per transaction): backends that come and go between two
// readings of the kernel times had no schedstat to read (0.64 AAS sampled against the kernel's
// 0.10, OUTSIDE; here on 92318cb: 0.21 against 0.01 + 0.10 queued, OUTSIDE); their time is the
// postmaster's reaped children's, and the check holds. 16 s: the standard error must be small
// enough for the old check to fail.
TEST_F(LocalKernelCheckTest, CountsBackendsThatExitBetweenReadings) {
  const auto dir = temp_dir("memory-connect");
  auto run = pgwaitprof_run(dir, {test_conninfo(), "--source", "memory"},
                            {"-C", "-S", "-c", "4", "-j", "2", "-T", "16"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto& check = run.report["summary"]["kernel_check"];
  ASSERT_TRUE(check.is_object()) << run.report["summary"].dump();
  std::cout << "kernel check at pgbench -C: " << check.dump() << "\n";
  EXPECT_TRUE(check["judged"].get<bool>()) << check.dump();
  EXPECT_GT(check["exited_aas"].get<double>(), 0.05) << check.dump();
  EXPECT_TRUE(check["within"].get<bool>()) << check.dump();
  EXPECT_TRUE(kernel_warnings(run).empty()) << run.report["warnings"].dump();
}

// pg_stat_activity asked for by name on a busy local server (2 clients of pgbench -S on 2 cores,
// each backend on a CPU most of the time): the report sets the kernel's CPU beside the sampled
// one, and its verdict, the warning and the text agree with the figures. How far below the
// kernel's the sampled CPU falls is the machine's, not the program's: about half on issue 39's
// host (OUTSIDE, warned), 0.89 of it in a CI run of 2026-12-05 (1.24 against 1.39, within);
// the warning's wording is tested on fixed figures in tests/model/kernel_check_test.cc.
TEST_F(LocalKernelCheckTest, ActivityOnABusyLocalServerIsCheckedAgainstTheKernel) {
  const auto dir = temp_dir("activity-check");
  auto run = pgwaitprof_run(dir, {test_conninfo(), "--source", "activity"},
                            {"-S", "-c", "2", "-j", "2", "-T", "8"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.report["sampler"]["source"], "activity");
  EXPECT_EQ(run.report["sampler"]["source_reason"], "");
  const auto& check = run.report["summary"]["kernel_check"];
  ASSERT_TRUE(check.is_object()) << run.report["summary"].dump();
  std::cout << "activity source against the kernel: " << check.dump() << "\n";
  ASSERT_TRUE(check["judged"].get<bool>()) << check.dump();
  EXPECT_TRUE(check["sampled_running_aas"].is_null()) << check.dump();
  // Two clients on a CPU most of the time: the kernel sees it, whatever the sampler does.
  EXPECT_GT(check["on_cpu_aas"].get<double>(), 1.0) << check.dump();
  // The band is widened by the sampled figure's 99.9 % interval (its t quantile at the batch
  // means' degrees of freedom, at least 3.29 standard errors), the exact rule in
  // tests/model/kernel_check_test.cc: two standard errors and 0.02 AAS are always inside it.
  const double sampled = check["sampled_cpu_aas"].get<double>();
  const double narrow = 0.02 + 2 * check["sampled_stderr"].get<double>();
  const bool within = check["within"].get<bool>();
  EXPECT_FALSE(sampled > check["highest"].get<double>() + narrow) << check.dump();
  if (sampled >= check["lowest"].get<double>() - narrow) {
    EXPECT_TRUE(within) << check.dump();
  }
  bool warned = false;
  for (const auto& warning : run.report["warnings"]) {
    warned |= warning.get<std::string>().find("is below the kernel's") != std::string::npos;
  }
  EXPECT_EQ(warned, !within) << run.report["warnings"].dump() << check.dump();
  const auto text = read_text(run.dir / "report.txt");
  EXPECT_NE(text.find("kernel: on a CPU"), std::string::npos) << text;
  EXPECT_NE(text.find(within ? ": within " : ": OUTSIDE "), std::string::npos) << text;
}

// With no kernel view (--local false stands for a server on another host) auto samples
// pg_stat_activity, says why, and the report says that the CPU share is then a lower bound.
TEST_F(LocalKernelCheckTest, WithoutAKernelViewAutoSamplesActivityAndCallsItsCpuALowerBound) {
  const auto dir = temp_dir("activity-remote");
  auto run = pgwaitprof_run(dir, {test_conninfo(), "--local", "false"}, {"-c", "2", "-T", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.report["sampler"]["source"], "activity");
  EXPECT_EQ(run.report["sampler"]["source_reason"],
            "the target is set as not on this host (local: false)");
  EXPECT_TRUE(run.report["summary"]["kernel_check"].is_null());
  bool lower_bound = false;
  for (const auto& warning : run.report["warnings"]) {
    lower_bound |= warning.get<std::string>().find("lower bound") != std::string::npos;
  }
  EXPECT_TRUE(lower_bound) << run.report["warnings"].dump();
  EXPECT_NE(read_text(run.dir / "report.txt").find("check     none (no kernel view"),
            std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::testing
