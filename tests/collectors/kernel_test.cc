// The /proc parsers of the kernel view, on strings and on this test's own process.
#include "collectors/kernel.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <ctime>
#include <memory>
#include <vector>

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
  // A backend missing from a reading (it exited) loses its file at the next one.
  states.next_reading();
  states.next_reading();
  EXPECT_EQ(states.open_files(), 0u);
}

// Issue 47: 45 targets and pgbench -C ran the daemon out of descriptors (up to 256 files per
// target kept for exited backends, swept every 1,000 readings). A backend of the reading, read
// or only seen (it waits), keeps its file; one missing from a reading is closed at the next,
// whether it exited or not; and every file counts against one cap for the whole process.
TEST(ProcessStates, ClosesTheFilesOfBackendsMissingFromAReadingAndCountsThemAll) {
  const size_t before = ProcessStates::descriptors_open();
  EXPECT_GE(ProcessStates::descriptor_cap(), 16u);
  ProcessStates states;
  const pid_t self = getpid();
  const pid_t parent = getppid();
  states.next_reading();
  EXPECT_EQ(states.state(self, 1), 'R');
  EXPECT_TRUE(states.state(parent, 1));
  EXPECT_EQ(states.open_files(), 2u);
  EXPECT_EQ(ProcessStates::descriptors_open(), before + 2);
  // The next reading: this process is read, the parent only seen (waiting): both stay.
  states.next_reading();
  EXPECT_EQ(states.state(self, 1), 'R');
  states.seen(parent, 1);
  states.next_reading();
  EXPECT_EQ(states.open_files(), 2u);
  // The parent is in the next reading no more: its file is closed at the one after.
  EXPECT_EQ(states.state(self, 1), 'R');
  states.next_reading();
  EXPECT_EQ(states.open_files(), 1u);
  EXPECT_EQ(ProcessStates::descriptors_open(), before + 1);
  // Another start for a pid is another backend: seen() does not keep the old one's file.
  states.seen(self, 2);
  states.next_reading();
  EXPECT_EQ(states.open_files(), 0u);
  EXPECT_EQ(ProcessStates::descriptors_open(), before);
}

TEST(ProcessStates, BeyondTheProcesssCapBackendsAreReadTheLongWay) {
  // A quarter of the descriptor limit: 64 of 256 here.
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  struct rlimit lower = saved;
  lower.rlim_cur = 256;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lower), 0);
  struct Restore {
    rlimit limit;
    ~Restore() { setrlimit(RLIMIT_NOFILE, &limit); }
  } restore{saved};
  const size_t cap = ProcessStates::descriptor_cap();
  ASSERT_EQ(cap, 64u);
  std::vector<std::unique_ptr<ProcessStates>> readers;
  // Fill the cap with this process's file, one per reader (256 a reader at most).
  while (ProcessStates::descriptors_open() < cap) {
    readers.push_back(std::make_unique<ProcessStates>());
    readers.back()->state(getpid(), 1);
    ASSERT_EQ(readers.back()->open_files(), 1u);
  }
  ProcessStates beyond;
  EXPECT_EQ(beyond.state(getpid(), 1), 'R');  // read, the long way
  EXPECT_EQ(beyond.open_files(), 0u);
  EXPECT_EQ(ProcessStates::descriptors_open(), cap);
  readers.clear();
  EXPECT_EQ(ProcessStates::descriptors_open(), 0u);
  EXPECT_EQ(beyond.state(getpid(), 1), 'R');
  EXPECT_EQ(beyond.open_files(), 1u);
}

TEST(ParseProcessStat, ReapedChildrensCpuInClockTicks) {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  // cutime cstime ...
  const std::string stat =
      "4100 (postgres) S 1 4100 4100 0 -1 4194560 500 9000 0 3 12 7 250 130 20 0 1 0";
  const auto reaped = parse_reaped_children_cpu(stat, 100);
  ASSERT_TRUE(reaped);
  EXPECT_NEAR(reaped->count(), 3.80, 1e-9);
  EXPECT_FALSE(parse_reaped_children_cpu("4100 (postgres) S 1 4100", 100));
  EXPECT_FALSE(parse_reaped_children_cpu(stat, 0));
  // A child that ran and was reaped shows in this process's own figure.
  const auto before = read_reaped_children_cpu(getpid());
  ASSERT_TRUE(before);
  const pid_t child = fork();
  if (child == 0) {
    // 200 ms of its own CPU time (a loaded machine gives a spinner less than its wall time).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    timespec used{};
    do {
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
    } while (used.tv_sec == 0 && used.tv_nsec < 200'000'000 &&
             std::chrono::steady_clock::now() < until);
    _exit(0);
  }
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);
  const auto after = read_reaped_children_cpu(getpid());
  ASSERT_TRUE(after);
  EXPECT_GE((*after - *before).count(), 0.15);
}

// The backends that exited between readings: the growth of the reaped time less what earlier
// readings counted of those gone since; what a backend gone but not reaped yet owes waits one
// reading, never longer.
TEST(ExitedTime, TheReapedGrowthLessWhatWasCountedBefore) {
  using base::Seconds;
  ExitedTime exited;
  EXPECT_EQ(exited.next(Seconds(10), Seconds(0)).count(), 0);  // the first reading: a start
  // 1.5 s reaped: two short-lived backends (1.0 s) and one seen before with 0.4 s counted.
  EXPECT_NEAR(exited.next(Seconds(11.5), Seconds(0.4)).count(), 1.1, 1e-9);
  // A backend gone (0.8 s counted) but not reaped yet: nothing now, its remainder next time.
  EXPECT_NEAR(exited.next(Seconds(11.5), Seconds(0.8)).count(), 0, 1e-9);
  EXPECT_NEAR(exited.next(Seconds(12.5), Seconds(0)).count(), 0.2, 1e-9);
  // A debt never reaped (its schedstat unreadable) is forgotten after one more reading.
  EXPECT_NEAR(exited.next(Seconds(12.5), Seconds(5)).count(), 0, 1e-9);
  EXPECT_NEAR(exited.next(Seconds(12.5), Seconds(0)).count(), 0, 1e-9);
  EXPECT_NEAR(exited.next(Seconds(13.0), Seconds(0)).count(), 0.5, 1e-9);
  // A restarted postmaster's figure starts again: no negative time.
  EXPECT_NEAR(exited.next(Seconds(0.2), Seconds(0)).count(), 0, 1e-9);
}

// Issue 47 item 13: one CPU-bound backend of pgbench -c 1 measured 1.08 AAS on a CPU and on the
// run queue on a loaded CI machine. The client backends' group held pgwaitprof's own run
// connection too, whose queries (five a second) each waited for a CPU there: 0.3 s of run queue
// in 3 s. pgwaitprof's own backends count with the sampler's, and the load's client backends
// are the load's.
TEST(KernelTimes, PgwaitprofsOwnBackendsAreTheSamplersNotTheLoads) {
  constexpr int64_t kBefore = 1'000'000;  // the previous reading, as backend_start counts
  const auto stat = [](double on_cpu_s, double runqueue_s) {
    return Schedstat{static_cast<uint64_t>(on_cpu_s * 1e9),
                     static_cast<uint64_t>(runqueue_s * 1e9)};
  };
  const std::map<KernelReadingId, Schedstat> previous{
      {{100, 500}, stat(2.0, 1.0)},   // pgbench's backend
      {{200, 400}, stat(0.1, 0.5)},   // the run's connection
      {{300, -1}, stat(0.05, 0.05)},  // the sampler's
      {{400, 300}, stat(9.0, 0.0)}};  // the checkpointer
  const std::vector<KernelReading> readings{
      {100, 500, "client backend", stat(2.6, 1.4)},
      {200, 400, "client backend", stat(0.11, 0.8)},
      {300, -1, "", stat(0.06, 0.07)},
      {400, 300, "checkpointer", stat(9.01, 0.0)},
      // Started after the previous reading: its whole life is in this one.
      {500, kBefore + 10, "client backend", stat(0.2, 0.1)},
      // Merely new to us (it started before the previous reading): none of it.
      {600, kBefore - 10, "client backend", stat(5.0, 5.0)}};
  model::KernelTimes times;
  add_kernel_times(readings, previous, kBefore, {200}, times);
  const auto& clients = times.by_group.at(model::kClientBackends);
  EXPECT_NEAR(clients.on_cpu.count(), 0.6 + 0.2, 1e-6);
  EXPECT_NEAR(clients.runqueue.count(), 0.4 + 0.1, 1e-6);
  const auto& own = times.by_group.at(model::kSamplerBackend);
  EXPECT_NEAR(own.on_cpu.count(), 0.01 + 0.01, 1e-6);
  EXPECT_NEAR(own.runqueue.count(), 0.3 + 0.02, 1e-6);
  EXPECT_NEAR(times.by_group.at(model::kBackgroundProcesses).on_cpu.count(), 0.01, 1e-6);
  // By backend type (the Prometheus counters): the load's client backends only.
  EXPECT_NEAR(times.by_backend_type.at("client backend").runqueue.count(), 0.5, 1e-6);
  EXPECT_EQ(times.by_backend_type.size(), 2u);
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
