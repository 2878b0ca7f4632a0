// The sweep of abandoned scratch directories (daemon/engine/supervisor.h) judges an owner by its
// pid, which names a process only in its own PID namespace. A pgwaitprof in a container that
// shares /tmp with the host (here `unshare --pid --mount-proc`, as ContainersTest runs one) sees
// none of the host's pids: before the owner file named its namespace, that pgwaitprof's sweep
// took a live run's scratch cluster for abandoned and removed it under the run (the CI failures
// of initdb in post-bootstrap and of a run whose server's files vanished).
#include <fmt/format.h>

#include "daemon/engine/supervisor.h"
#include "tests/faults/fault_harness.h"
#include "tests/faults/piped_program.h"

namespace pgwaitprof::testing {
namespace {

TEST(ScratchSweep, AnInvocationInAnotherPidNamespaceLeavesALiveScratchClusterAlone) {
  ASSERT_EQ(::getuid(), 0u) << "unshare --pid needs root, like CI";
  const auto dir = temp_dir("sweep-other-namespace");
  // A scratch-cluster run held once its cluster is up, for long enough to sweep beside it.
  PipedProgram program(
      without_pg_environment({pgwaitprof_binary(), "run", "--no-daemon", "--data-dir",
                              (dir / "data").string(), "--scale", "1", "--", "-c", "1", "-R",
                              kModestRate, "-T", "2"}),
      {"PGWAITPROF_FAULT_HOLD=scratch-started", "PGWAITPROF_FAULT_HOLD_SECONDS=6"});
  ASSERT_TRUE(program.until(90s, [&] {
    return program.output().find("holding at scratch-started") != std::string::npos;
  })) << program.output();
  const std::string scratch = scratch_directory(program.output());
  ASSERT_FALSE(scratch.empty()) << program.output();
  ASSERT_TRUE(std::filesystem::exists(std::filesystem::path(scratch) / "owner"));

  // Any subcommand sweeps first.
  const auto contained = engine::run_command({"unshare", "--pid", "--fork", "--mount-proc", "--",
                                              pgwaitprof_binary(), "explain", "ClientRead"});
  EXPECT_EQ(contained.exit_code, 0) << contained.output;
  EXPECT_EQ(contained.output.find("removed scratch cluster"), std::string::npos)
      << contained.output;
  EXPECT_TRUE(std::filesystem::exists(scratch)) << "removed under the live run";

  // The run then goes on to its end on its cluster, and its own ending removes it.
  const auto code = program.wait(120s);
  ASSERT_TRUE(code.has_value()) << "still running:\n" << program.output();
  EXPECT_EQ(*code, 0) << program.output();
  int completed = 0;
  std::error_code none;  // no runs directory: no completed run
  for (const auto& run : std::filesystem::directory_iterator(dir / "data" / "runs", none)) {
    const auto report = nlohmann::json::parse(read_text(run.path() / "report.json"));
    completed += report["status"] == "completed";
  }
  EXPECT_EQ(completed, 1) << program.output();
  EXPECT_TRUE(eventually(30s, [&] { return !std::filesystem::exists(scratch); }));
}

// The sweep still takes what a pgwaitprof of its own namespace left: the owner file of a
// process that is gone, with this namespace named.
TEST(ScratchSweep, ADirectoryWhoseOwnersAreGoneInThisNamespaceIsRemoved) {
  const auto dir = temp_dir("sweep-own-namespace");
  const auto left = dir / "pgwaitprof-scratch-left01";
  const auto foreign = dir / "pgwaitprof-scratch-other1";
  std::filesystem::create_directories(left);
  std::filesystem::create_directories(foreign);
  struct stat namespace_info {};
  ASSERT_EQ(::stat("/proc/self/ns/pid", &namespace_info), 0);
  // pid 2^22 + 1 is above pid_max's limit: no process has it.
  write_text(left / "owner",
             fmt::format("pgwaitprof 4194305 1\npidns {}\n", namespace_info.st_ino));
  write_text(foreign / "owner",
             fmt::format("pgwaitprof 4194305 1\npidns {}\n", namespace_info.st_ino + 1));
  const auto removed = engine::sweep_abandoned_scratch_directories(dir);
  EXPECT_EQ(removed, std::vector<std::filesystem::path>{left});
  EXPECT_FALSE(std::filesystem::exists(left));
  EXPECT_TRUE(std::filesystem::exists(foreign / "owner"));
}

}  // namespace
}  // namespace pgwaitprof::testing
