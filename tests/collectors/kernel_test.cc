// The /proc parsers of the kernel view, on strings and on this test's own process.
#include "collectors/kernel.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace pgwaitprof::collectors {
namespace {

TEST(ParseSchedstat, OnCpuAndRunQueueNanoseconds) {
  const auto stat = parse_schedstat("1234567 89012 345\n");
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->on_cpu_ns, 1234567u);
  EXPECT_EQ(stat->runqueue_ns, 89012u);
  EXPECT_FALSE(parse_schedstat(""));
  EXPECT_FALSE(parse_schedstat("12x 3 4"));
  EXPECT_FALSE(parse_schedstat("12"));
}

TEST(ParseProcessStat, StateAndParentAfterACommandWithSpacesAndParentheses) {
  const std::string stat =
      "4242 (postgres: bench bench [local] UPDATE) R 4100 4100 4100 0 -1 4194560 1123";
  EXPECT_EQ(parse_process_state(stat), 'R');
  EXPECT_EQ(parse_parent_pid(stat), 4100);
  // The command name is whatever the process set: only the last ')' ends it.
  const std::string tricky = "77 (a) S (b)) D 12 77 77";
  EXPECT_EQ(parse_process_state(tricky), 'D');
  EXPECT_EQ(parse_parent_pid(tricky), 12);
  EXPECT_FALSE(parse_process_state("77 no parenthesis"));
  EXPECT_FALSE(parse_parent_pid("77 (x) S"));
}

TEST(ReadProc, ThisProcessRunsAndHasCpuTime) {
  volatile uint64_t spin = 0;
  for (int i = 0; i < 1000000; ++i) spin = spin + i;
  const auto stat = read_schedstat(getpid());
  ASSERT_TRUE(stat) << "/proc/self/schedstat needs CONFIG_SCHEDSTATS";
  EXPECT_GT(stat->on_cpu_ns, 0u);
  const auto whole = read_process_schedstat(getpid());
  ASSERT_TRUE(whole);
  EXPECT_GE(whole->on_cpu_ns, stat->on_cpu_ns);
  EXPECT_EQ(read_process_state(getpid()), 'R');  // reading its own stat, it runs
  EXPECT_FALSE(read_schedstat(-5));
}

TEST(ProcessStates, KeepsAFileOpenPerBackendAndDropsItWhenThePidIsReusedOrGone) {
  ProcessStates states;
  EXPECT_EQ(states.state(getpid(), 1), 'R');
  EXPECT_EQ(states.state(getpid(), 1), 'R');
  EXPECT_EQ(states.open_files(), 1u);
  // Another backend start for the same pid: a new backend, its own file.
  EXPECT_EQ(states.state(getpid(), 2), 'R');
  EXPECT_EQ(states.open_files(), 1u);
  // A child that sleeps, read while it exists, then gone: no state and no file left.
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  std::optional<char> sleeping;
  for (int attempt = 0; attempt < 200 && sleeping != 'S'; ++attempt) {
    sleeping = states.state(child, 7);
    usleep(5000);
  }
  EXPECT_EQ(sleeping, 'S');
  EXPECT_EQ(states.open_files(), 2u);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(states.state(child, 7));
  EXPECT_EQ(states.open_files(), 1u);
  // Files not read for a sweep's worth of readings are closed.
  for (int reading = 0; reading < 1000; ++reading) states.next_reading();
  EXPECT_EQ(states.open_files(), 0u);
}

// wchan is trusted only after a sleeping process read as a function: a process that spins (on a
// CPU or on the run queue) reads "0", as every process does where wchan does not work.
TEST(ProcessStates, ReadsWchanFirstOnlyWhereASleeperShowsItWorks) {
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    pause();
    _exit(0);
  }
  const pid_t spinner = fork();
  if (spinner == 0) {
    for (;;) {
    }
  }
  ASSERT_GT(sleeper, 0);
  ASSERT_GT(spinner, 0);
  ProcessStates states;
  EXPECT_FALSE(states.check_wchan(spinner));
  EXPECT_FALSE(states.uses_wchan());
  EXPECT_FALSE(states.check_wchan(-3));
  bool checked = false;
  for (int attempt = 0; attempt < 200 && !checked; ++attempt) {
    checked = states.check_wchan(sleeper);
    usleep(5000);
  }
  ASSERT_TRUE(checked) << "no /proc/<pid>/wchan here that names a function";
  EXPECT_TRUE(states.uses_wchan());
  // Through wchan: the spinner runs, the sleeper sleeps ('S' from its stat file).
  EXPECT_EQ(states.state(spinner, 1), 'R');
  EXPECT_EQ(states.state(sleeper, 1), 'S');
  EXPECT_EQ(states.open_files(), 2u);
  for (const pid_t child : {sleeper, spinner}) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  // A reaped process: wchan and stat are gone, and so are its files.
  EXPECT_FALSE(states.state(sleeper, 1));
  EXPECT_EQ(states.open_files(), 1u);
}

TEST(ServerIsLocal, NotForAPidThatDoesNotExistOrAnotherDataDirectory) {
  EXPECT_FALSE(server_is_local(999999999, "/var/lib/postgresql/15/main"));
  // This test's parent is not a postmaster in that directory.
  EXPECT_FALSE(server_is_local(getpid(), "/nonexistent/data"));
}

}  // namespace
}  // namespace pgwaitprof::collectors
