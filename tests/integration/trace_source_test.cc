// The traced source against the real server of deploy/test.sh (root, like CI): its BPF programs
// loaded and attached, and the witnesses of issue 48 — every client backend's on-CPU and
// run-queue time against /proc/<pid>/schedstat, the blocking ClientRead waits of
// pgbench -S -M prepared against the kernel's count of its backend's voluntary switches, ten
// pg_sleep(0.2) as ten Timeout | PgSleep waits of 200 ms, and a row lock held for a second as one
// Lock | transactionid wait of that length; and nothing left loaded once a traced run is killed
// with SIGKILL.
#include "collectors/trace/trace_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <libpq-fe.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <asio.hpp>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "collectors/kernel.h"
#include "model/profile.h"
#include "model/wait_key.h"
#include "tests/integration/bpf_objects.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

using namespace std::chrono_literals;
using collectors::PgSession;
using collectors::trace::TraceSource;

class TraceSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cluster();
    ASSERT_EQ(getuid(), 0u) << "the traced source's tests run as root, like CI";
  }

  // The source prepared on the test cluster (its session closed again: the programs need none).
  std::unique_ptr<TraceSource> attached() {
    auto source = std::make_unique<TraceSource>();
    run_coroutine([&]() -> asio::awaitable<void> {
      PgSession session(co_await asio::this_coro::executor);
      EXPECT_FALSE(co_await session.connect(test_conninfo(), 5s));
      auto refused = co_await source->prepare(session);
      EXPECT_FALSE(refused) << refused->message;
    });
    return source;
  }
};

// The profile's traced parts of one wait event of client backends, summed over states.
model::TracedTime client(const model::Profile& profile, std::string_view type,
                         std::string_view event) {
  model::TracedTime sum;
  for (const auto& [key, traced] : profile.traced()) {
    if (key.backend_type == "client backend" && key.wait_event_type == type &&
        key.wait_event == event) {
      sum.merge(traced);
    }
  }
  return sum;
}

std::string describe(const model::Profile& profile) {
  std::string text;
  for (const auto& [key, traced] : profile.traced()) {
    text += fmt::format("{} {} {} {}: waits={} blocked={:.4f} runq={:.4f} cpu={:.4f}\n",
                        key.backend_type, key.state, key.wait_event_type, key.wait_event,
                        traced.waits, traced.blocked_s, traced.runqueue_s, traced.on_cpu_s);
  }
  return text;
}

TEST_F(TraceSourceTest, TenSleepsAreTenPgSleepWaitsOf200Ms) {
  auto source = attached();
  ASSERT_TRUE(source->read(model::SteadyClock::now()));  // the baseline
  std::string sleeps;
  for (int index = 0; index < 10; ++index) sleeps += "SELECT pg_sleep(0.2);";
  const auto result = psql(sleeps);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  auto profile = source->read(model::SteadyClock::now());
  ASSERT_TRUE(profile) << profile.error().message;
  const auto sleep = client(*profile, "Timeout", "PgSleep");
  EXPECT_EQ(sleep.waits, 10u) << describe(*profile);
  EXPECT_NEAR(sleep.percentile_s(0.5), 0.2, 0.2 * 0.05) << describe(*profile);
  EXPECT_NEAR(sleep.mean_s(), 0.2, 0.2 * 0.05);
}

TEST_F(TraceSourceTest, ARowLockHeldOneSecondIsOneTransactionIdWaitOfOneSecond) {
  ASSERT_EQ(psql("DROP TABLE IF EXISTS trace_lock; CREATE TABLE trace_lock (id int PRIMARY KEY);"
                 " INSERT INTO trace_lock VALUES (1)")
                .exit_code,
            0);
  auto source = attached();
  PGconn* holder = PQconnectdb(test_conninfo().c_str());
  PGconn* waiter = PQconnectdb(test_conninfo().c_str());
  ASSERT_EQ(PQstatus(holder), CONNECTION_OK);
  ASSERT_EQ(PQstatus(waiter), CONNECTION_OK);
  // The waiter's deadlock check (after deadlock_timeout, 1 s by default) would wake it once.
  PQclear(PQexec(waiter, "SET deadlock_timeout = '60s'"));
  PQclear(PQexec(holder, "BEGIN"));
  PQclear(PQexec(holder, "UPDATE trace_lock SET id = 1 WHERE id = 1"));
  ASSERT_TRUE(source->read(model::SteadyClock::now()));  // the baseline
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(PQsendQuery(waiter, "UPDATE trace_lock SET id = 1 WHERE id = 1"), 1);
  std::this_thread::sleep_for(1s);
  const auto committed = std::chrono::steady_clock::now();
  PQclear(PQexec(holder, "COMMIT"));
  while (PGresult* result = PQgetResult(waiter)) PQclear(result);
  const double held = std::chrono::duration<double>(committed - sent).count();
  auto profile = source->read(model::SteadyClock::now());
  PQfinish(holder);
  PQfinish(waiter);
  psql("DROP TABLE IF EXISTS trace_lock");
  ASSERT_TRUE(profile) << profile.error().message;
  const auto lock = client(*profile, "Lock", "transactionid");
  EXPECT_EQ(lock.waits, 1u) << describe(*profile);
  EXPECT_NEAR(lock.blocked_s, held, held * 0.05) << describe(*profile);
  EXPECT_NEAR(lock.longest_s(), held, held * 0.05);
}

// /proc/<pid>/schedstat: on a CPU and waiting for one, in nanoseconds.
std::pair<double, double> schedstat(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/schedstat", pid));
  double on_cpu = 0, waiting = 0;
  in >> on_cpu >> waiting;
  return {on_cpu * 1e-9, waiting * 1e-9};
}

// The client backends of the postmaster (over the socket, "[local]" in their title).
std::vector<pid_t> client_backends(pid_t postmaster) {
  std::vector<pid_t> found;
  for (const pid_t pid : collectors::trace::process_tree(postmaster)) {
    if (read_text(fmt::format("/proc/{}/cmdline", pid)).find("[local]") != std::string::npos) {
      found.push_back(pid);
    }
  }
  return found;
}

// /proc/<pid>/status: the process's voluntary context switches, the kernel's count of the
// times it blocked.
uint64_t voluntary_switches(pid_t pid) {
  const auto text = read_text(fmt::format("/proc/{}/status", pid));
  const auto at = text.find("voluntary_ctxt_switches:");
  return at == std::string::npos ? 0 : std::stoull(text.substr(at + 24));
}

// pgbench -S -M prepared -c 1: every blocking wait of its backend is a ClientRead, and each is
// one of the kernel's voluntary switches of that backend. (How many of the transactions block
// depends on the scheduler: on this 6.18 kernel, quiet, pgbench's wake-up preempts the backend
// and its next query is there when it runs again in about 3 transactions of 4; on a loaded
// machine 19,998 of 20,000 blocked. The kernel's own count is the witness that holds.)
TEST_F(TraceSourceTest, BlockingClientReadsAreTheKernelsVoluntarySwitchesOfPgbenchSelectOnly) {
  auto source = attached();
  const pid_t postmaster = source->attachment().postmaster;
  std::thread pgbench([&] {
    const auto result = engine::run_command({base::find_executable("pgbench"), "-n", "-S", "-M",
                                             "prepared", "-c", "1", "-T", "5", test_conninfo()});
    EXPECT_EQ(result.exit_code, 0) << result.output;
  });
  std::this_thread::sleep_for(1500ms);
  const auto pids = client_backends(postmaster);
  ASSERT_EQ(pids.size(), 1u);
  ASSERT_TRUE(source->read(model::SteadyClock::now()));
  const uint64_t before = voluntary_switches(pids.front());
  std::this_thread::sleep_for(2s);
  auto profile = source->read(model::SteadyClock::now());
  const uint64_t blocked = voluntary_switches(pids.front()) - before;
  pgbench.join();
  ASSERT_TRUE(profile) << profile.error().message;
  const auto reads = client(*profile, "Client", "ClientRead");
  ASSERT_GT(blocked, 1000u);
  EXPECT_GE(static_cast<double>(reads.waits), 0.95 * static_cast<double>(blocked))
      << describe(*profile);
  EXPECT_LE(static_cast<double>(reads.waits), 1.01 * static_cast<double>(blocked))
      << describe(*profile);
}

TEST_F(TraceSourceTest, OnCpuAndRunQueueTimeOfClientBackendsIsTheKernelsSchedstat) {
  auto source = attached();
  const pid_t postmaster = source->attachment().postmaster;
  std::thread pgbench([&] {
    const auto result = engine::run_command({base::find_executable("pgbench"), "-n", "-S", "-c",
                                             "4", "-j", "2", "-T", "6", test_conninfo()});
    EXPECT_EQ(result.exit_code, 0) << result.output;
  });
  std::this_thread::sleep_for(1500ms);
  const auto pids = client_backends(postmaster);
  ASSERT_EQ(pids.size(), 4u);
  ASSERT_TRUE(source->read(model::SteadyClock::now()));
  std::map<pid_t, std::pair<double, double>> before;
  for (const pid_t pid : pids) before[pid] = schedstat(pid);
  std::this_thread::sleep_for(3s);
  auto profile = source->read(model::SteadyClock::now());
  double kernel_cpu = 0, kernel_queue = 0;
  for (const pid_t pid : pids) {
    const auto [on_cpu, waiting] = schedstat(pid);
    kernel_cpu += on_cpu - before[pid].first;
    kernel_queue += waiting - before[pid].second;
  }
  pgbench.join();
  ASSERT_TRUE(profile) << profile.error().message;
  double traced_cpu = 0, traced_queue = 0;
  for (const auto& [key, traced] : profile->traced()) {
    if (key.backend_type != "client backend") continue;
    traced_cpu += traced.on_cpu_s;
    traced_queue += traced.runqueue_s;
  }
  ASSERT_GT(kernel_cpu, 0.5);
  EXPECT_NEAR(traced_cpu + traced_queue, kernel_cpu + kernel_queue,
              (kernel_cpu + kernel_queue) * 0.02)
      << describe(*profile);
  // The split alone is printed, not bounded: 2.4 % apart in one of four runs on a loaded
  // machine, and 10 % (3.65 s traced on a CPU against schedstat's 3.32 s, the sum within 2 %) in
  // the merged tree's full test run beside two other lanes. Where the traced source puts the
  // boundary between a wake-up's run-queue time and the time on a CPU is an open question of
  // issue 48; the witness is the sum.
  std::cout << "on a CPU: traced " << traced_cpu << " s, schedstat " << kernel_cpu
            << " s; waiting for one: traced " << traced_queue << " s, schedstat " << kernel_queue
            << " s\n";
}

// The run's own programs and links, by id: the earlier tests' (freed after an RCU grace
// period) and other traced runs on this machine (the fault lane's) do not count.
TEST_F(TraceSourceTest, NothingStaysLoadedAfterATracedRunIsKilled) {
  const auto data = temp_dir("trace-kill");
  const std::vector<std::string> argv{pgwaitprof_binary(),
                                      "run",
                                      test_conninfo(),
                                      "--source",
                                      "trace",
                                      "--data-dir",
                                      data.string(),
                                      "--",
                                      "-n",
                                      "-S",
                                      "-T",
                                      "60"};
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t run = 0;
  ASSERT_EQ(posix_spawn(&run, args[0], &actions, nullptr, args.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  // Every program, and a link for each tracepoint program (the perf links follow them).
  BpfObjects held;
  EXPECT_TRUE(eventually(30s,
                         [&] {
                           held = bpf_objects_of(run);
                           return held.programs.size() == traced_program_names().size() &&
                                  held.links.size() >= traced_program_names().size() - 1;
                         }))
      << held.programs.size() << " programs, " << held.links.size() << " links";
  std::this_thread::sleep_for(200ms);
  held.merge(bpf_objects_of(run));
  // pgbench, its child, would run on for its 60 s: it goes too, by its pid.
  const auto tree = collectors::trace::process_tree(run);
  ::kill(run, SIGKILL);
  int status = 0;
  ::waitpid(run, &status, 0);
  for (const pid_t pid : tree) {
    if (pid != run) ::kill(pid, SIGKILL);
  }
  EXPECT_FALSE(any_left(held));
  std::filesystem::remove_all(data);
}

}  // namespace
}  // namespace pgwaitprof::testing
