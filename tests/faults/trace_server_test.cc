// The traced source under what a server does to it (issue 48 item 7), on real PostgreSQL 15
// servers with real pgbench: a restart in the middle of a traced run (the new postmaster is
// followed, the outage is in the report), two runs tracing one server at once (each its own
// programs and maps, the same waits), 1,000 backends (all tracked, no map full, memory bounded)
// and pgbench -C (backends that come and go charged from fork to exit, as the kernel counts
// them). Nothing of any run stays loaded.
#include <fmt/format.h>
#include <libpq-fe.h>
#include <sys/resource.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "collectors/kernel.h"
#include "collectors/pg_session.h"
#include "collectors/trace/trace_source.h"
#include "tests/faults/trace_harness.h"
#include "tests/integration/own_cluster.h"

namespace pgwaitprof::testing {
namespace {

class TraceServerFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cluster();
    if (::geteuid() != 0) GTEST_SKIP() << "the traced source's fault tests run as root, like CI";
  }
};

// The BPF objects a running process holds, watched every 50 ms on a thread of its own until it
// exits: every one it ever held, and the most programs it held at once.
class BpfWatch {
 public:
  explicit BpfWatch(pid_t pid)
      : thread_([this, pid] {
          while (!done_ && ::kill(pid, 0) == 0) {
            const auto now = bpf_objects_of(pid);
            {
              std::lock_guard lock(mutex_);
              seen_.merge(now);
              most_programs_ = std::max(most_programs_, now.programs.size());
            }
            std::this_thread::sleep_for(50ms);
          }
        }) {}
  ~BpfWatch() { stop(); }
  void stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
  }
  BpfObjects seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  size_t most_programs() {
    std::lock_guard lock(mutex_);
    return most_programs_;
  }

 private:
  std::mutex mutex_;
  BpfObjects seen_;
  size_t most_programs_ = 0;
  std::atomic<bool> done_ = false;
  std::thread thread_;
};

pid_t postmaster_of(const std::string& data) {
  const auto text = read_text(std::filesystem::path(data) / "postmaster.pid");
  return text.empty() ? 0 : static_cast<pid_t>(std::stol(text));
}

// 14 s of one-statement psql sessions on the run's target (the command load generator's PG*
// variables); a session that finds the server away waits a little and tries again.
constexpr const char* kSelectLoopScript = R"sh(#!/bin/sh
end=$(( $(date +%s) + 14 ))
while [ "$(date +%s)" -lt "$end" ]; do
  psql -X -q -c "SELECT 1" >/dev/null 2>&1 || sleep 0.1
done
)sh";

TEST_F(TraceServerFaults, ARestartedServersNewPostmasterIsFollowed) {
  const auto dir = temp_dir("trace-restart");
  OwnCluster cluster(dir);
  write_text(dir / "loop.sh", kSelectLoopScript);
  std::filesystem::permissions(dir / "loop.sh", std::filesystem::perms::owner_all);
  const pid_t first = postmaster_of(cluster.data);
  ChildProcess run(
      {pgwaitprof_binary(), "run", cluster.conninfo, "--source", "trace", "--loadgen", "command",
       "--no-daemon", "--data-dir", (dir / "data").string(), "--", (dir / "loop.sh").string()},
      dir / "run.log");
  BpfWatch watch(run.pid());
  ASSERT_TRUE(eventually(30s, [&] { return !bpf_objects_of(run.pid()).programs.empty(); }))
      << run.log();
  std::this_thread::sleep_for(4s);
  std::string bin = read_text(cluster.dir / "bin-dir");
  bin.erase(bin.find_last_not_of('\n') + 1);
  const auto restarted =
      engine::run_command({bin + "/pg_ctl", "-D", cluster.data, "-l",
                           (cluster.dir / "server.log").string(), "-w", "-m", "fast", "restart"},
                          {engine::unprivileged_account(), {}});
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;
  const pid_t second = postmaster_of(cluster.data);
  ASSERT_NE(first, second);
  const auto code = run.wait(90s);
  ASSERT_TRUE(code.has_value()) << run.log();
  EXPECT_EQ(*code, 0) << run.log();
  watch.stop();
  const auto report = report_of(dir / "data");
  ASSERT_TRUE(report.is_object()) << run.log();

  // The sampler noticed the old postmaster's exit and came back on the new one.
  EXPECT_NE(run.log().find(fmt::format("the server's postmaster (pid {}) has exited", first)),
            std::string::npos)
      << run.log();
  const nlohmann::json* lost = nullptr;
  for (const auto& outage : report["outages"]) {
    if (outage["connection"] == "sampler") lost = &outage;
  }
  ASSERT_NE(lost, nullptr) << report["outages"].dump(2) << run.log();
  const double back_s = (*lost)["start_s"].get<double>() + (*lost)["duration_s"].get<double>();
  EXPECT_LT(back_s, 12.0) << "the sampler came back too late (or never): " << lost->dump();
  // The new postmaster's backends are traced: client time in the intervals after the outage
  // (the last may be cut by the loop's end).
  int traced_after = 0;
  const auto& timeline = report["timeline"];
  for (size_t index = 0; index + 1 < timeline.size(); ++index) {
    if (timeline[index]["start_s"].get<double>() > back_s + 0.5 &&
        traced_in(timeline[index]["profile"], "client backend").time_s() > 0) {
      ++traced_after;
    }
  }
  EXPECT_GE(traced_after, 2) << timeline.dump().substr(0, 4000);
  // One set of programs at a time (the old postmaster's detached before the new one's load),
  // and none left after the run.
  EXPECT_LE(watch.most_programs(), traced_program_names().size());
  EXPECT_GT(watch.seen().programs.size(), traced_program_names().size())
      << "the programs were not loaded again for the new postmaster";
  EXPECT_FALSE(any_left(watch.seen()));
  cluster.stop();  // before its directory goes: a server without one would run on
}

// pgbench -S -c 2 -t 2000 run while two windows trace the server: both see the same switches,
// so both count the same ClientRead waits and the same client time on a CPU (each also sees
// the other's two idle sessions: a few waits, no CPU to speak of).
TEST_F(TraceServerFaults, TwoRunsTracingOneServerAtOnceCountTheSameWaits) {
  const auto dir = temp_dir("trace-twice");
  const auto record = [&](const std::string& name) {
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{pgwaitprof_binary(), "record", test_conninfo(), "--source",
                                 "trace", "--duration", "12", "--no-daemon", "--data-dir",
                                 (dir / name).string()},
        dir / (name + ".log"));
  };
  auto first = record("a");
  auto second = record("b");
  BpfWatch watch_first(first->pid()), watch_second(second->pid());
  // Both loaded at once, each its own programs; then the load, inside both windows.
  BpfObjects first_held, second_held;
  ASSERT_TRUE(eventually(30s,
                         [&] {
                           first_held = bpf_objects_of(first->pid());
                           second_held = bpf_objects_of(second->pid());
                           return !first_held.programs.empty() && !second_held.programs.empty();
                         }))
      << first->log() << second->log();
  for (const auto id : first_held.programs) EXPECT_FALSE(second_held.programs.contains(id));
  std::this_thread::sleep_for(1s);
  const auto started = std::chrono::steady_clock::now();
  const auto pgbench =
      engine::run_command({base::find_executable("pgbench"), "-n", "-S", "-M", "prepared", "-c",
                           "2", "-j", "2", "-t", "2000", test_conninfo()});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(pgbench.exit_code, 0) << pgbench.output;
  EXPECT_TRUE(first->running() && second->running())
      << "the load outlasted a window: " << std::chrono::duration<double>(took).count() << " s";
  const auto first_code = first->wait(60s);
  const auto second_code = second->wait(60s);
  watch_first.stop();
  watch_second.stop();
  ASSERT_EQ(first_code, 0) << first->log();
  ASSERT_EQ(second_code, 0) << second->log();
  const auto first_report = report_of(dir / "a");
  const auto second_report = report_of(dir / "b");
  EXPECT_EQ(first_report["sampler"]["source"], "trace");
  EXPECT_EQ(second_report["sampler"]["source"], "trace");
  const auto reads = [](const nlohmann::json& report) {
    return static_cast<double>(
        traced_in(report["profile"], "client backend", "Client", "ClientRead").waits);
  };
  const auto on_cpu = [](const nlohmann::json& report) {
    return traced_in(report["profile"], "client backend").on_cpu_s;
  };
  std::cout << fmt::format(
      "ClientRead waits {:.0f} and {:.0f}; client on a CPU {:.3f} and {:.3f} s\n",
      reads(first_report), reads(second_report), on_cpu(first_report), on_cpu(second_report));
  ASSERT_GT(reads(first_report), 500);
  EXPECT_NEAR(reads(second_report), reads(first_report), 0.02 * reads(first_report));
  // Each run's own connection queries the server every second (its tps, background
  // activity), client time that both see over windows that start and end apart: 30 ms more.
  EXPECT_NEAR(on_cpu(second_report), on_cpu(first_report), 0.05 * on_cpu(first_report) + 0.03);
  auto held = watch_first.seen();
  held.merge(watch_second.seen());
  EXPECT_FALSE(any_left(held));
}

// A number after `name=` in a log ("" when absent).
std::optional<long> logged_number(const std::string& log, const std::string& name) {
  const auto at = log.find(" " + name + "=");
  if (at == std::string::npos) return std::nullopt;
  return std::stol(log.substr(at + name.size() + 2));
}

// The high-water mark of a process's resident memory, in MiB (/proc/<pid>/status VmHWM).
double peak_resident_mib(pid_t pid) {
  const auto text = read_text("/proc/" + std::to_string(pid) + "/status");
  const auto at = text.find("VmHWM:");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + 6)) / 1024;
}

TEST_F(TraceServerFaults, AThousandBackendsAreAllTrackedWithinTheMapsBounds) {
  constexpr int kSessions = 1000;
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::max<rlim_t>(files.rlim_cur, std::min<rlim_t>(files.rlim_max, 4096));
  ::setrlimit(RLIMIT_NOFILE, &files);
  ASSERT_GE(files.rlim_cur, static_cast<rlim_t>(kSessions + 100)) << "too few descriptors";
  const auto dir = temp_dir("trace-thousand");
  OwnCluster cluster(dir, std::nullopt, "", "", kSessions + 100);
  std::vector<PGconn*> sessions;
  for (int index = 0; index < kSessions; ++index) {
    sessions.push_back(PQconnectdb(cluster.conninfo.c_str()));
    ASSERT_EQ(PQstatus(sessions.back()), CONNECTION_OK)
        << index << ": " << PQerrorMessage(sessions.back());
  }
  ChildProcess run(
      {pgwaitprof_binary(), "run", cluster.conninfo, "--source", "trace", "--no-daemon",
       "--data-dir", (dir / "data").string(), "--", "-n", "-S", "-c", "4", "-j", "2", "-T", "10"},
      dir / "run.log");
  BpfWatch watch(run.pid());
  ASSERT_TRUE(eventually(60s, [&] { return run.log().find("source=trace") != std::string::npos; }))
      << run.log();
  // Every idle session was there before the programs: found in /proc, and each sleeps once.
  const auto tracked = logged_number(run.log(), "tracked");
  ASSERT_TRUE(tracked) << run.log();
  EXPECT_GE(*tracked, kSessions) << run.log();
  std::this_thread::sleep_for(1s);
  for (auto* session : sessions) ASSERT_EQ(PQsendQuery(session, "SELECT pg_sleep(0.3)"), 1);
  for (auto* session : sessions) {
    while (PGresult* result = PQgetResult(session)) {
      EXPECT_EQ(PQresultStatus(result), PGRES_TUPLES_OK) << PQerrorMessage(session);
      PQclear(result);
    }
  }
  const double peak_mib = peak_resident_mib(run.pid());
  const auto code = run.wait(90s);
  watch.stop();
  for (auto* session : sessions) PQfinish(session);
  ASSERT_EQ(code, 0) << run.log();
  const auto report = report_of(dir / "data");
  const auto sleeps = traced_in(report["profile"], "client backend", "Timeout", "PgSleep");
  EXPECT_GE(sleeps.waits, static_cast<uint64_t>(kSessions)) << report["profile"].dump();
  EXPECT_LE(sleeps.waits, static_cast<uint64_t>(kSessions + 10));
  // No map was full and no charge lost (each would be a warning line), and the program's
  // memory stays bounded whatever the number of backends.
  for (const char* full : {"trace tracked_full=", "trace keys_full=", "trace lost="}) {
    EXPECT_EQ(run.log().find(full), std::string::npos) << run.log();
  }
  // The sanitizer build (deploy/test.sh sets ASAN_OPTIONS for it) keeps shadow memory and a
  // quarantine of 256 MB of freed blocks: 526 MiB there against 44 MiB for the release build.
  const double bound_mib = env("ASAN_OPTIONS").empty() ? 256 : 1024;
  std::cout << fmt::format("tracked {}, peak resident {:.0f} MiB (bound {:.0f})\n", *tracked,
                           peak_mib, bound_mib);
  EXPECT_LT(peak_mib, bound_mib);
  EXPECT_FALSE(any_left(watch.seen()));
  cluster.stop();  // before its directory goes: a server without one would run on
}

// The server's processes' time on a CPU as the kernel counts it: every live one's schedstat
// and the postmaster's reaped children's CPU time (the kernel check's sources).
double kernel_cpu_s(pid_t postmaster) {
  double seconds =
      collectors::read_reaped_children_cpu(postmaster).value_or(base::Seconds(0)).count();
  for (const pid_t pid : collectors::trace::process_tree(postmaster)) {
    if (const auto stat = collectors::read_schedstat(pid)) seconds += stat->on_cpu_ns * 1e-9;
  }
  return seconds;
}

double traced_cpu_s(const collectors::trace::TraceTotals& totals) {
  double seconds = 0;
  for (const auto& [key, value] : totals.values)
    seconds += static_cast<double>(value.oncpu_ns) * 1e-9;
  return seconds;
}

TEST_F(TraceServerFaults, BackendsThatComeAndGoAreChargedAsTheKernelCountsThem) {
  const auto dir = temp_dir("trace-connect");
  OwnCluster cluster(dir);
  auto owned = std::make_unique<collectors::trace::TraceSource>();
  auto& source = *owned;
  run_coroutine([&]() -> asio::awaitable<void> {
    collectors::PgSession session(co_await asio::this_coro::executor);
    EXPECT_FALSE(co_await session.connect(cluster.conninfo, 5s));
    auto refused = co_await source.prepare(session);
    EXPECT_FALSE(refused) << refused->message;
  });
  const pid_t postmaster = source.attachment().postmaster;
  ASSERT_GT(postmaster, 0);
  std::this_thread::sleep_for(200ms);  // the attach session's backend reaped
  ASSERT_TRUE(source.read(model::SteadyClock::now()));
  const double traced_before = traced_cpu_s(source.totals());
  const double kernel_before = kernel_cpu_s(postmaster);
  // Every backend of the window is born and reaped inside it: a connection per transaction.
  const auto pgbench = engine::run_command({base::find_executable("pgbench"), "-n", "-S", "-C",
                                            "-c", "4", "-j", "2", "-T", "4", cluster.conninfo});
  ASSERT_EQ(pgbench.exit_code, 0) << pgbench.output;
  std::this_thread::sleep_for(300ms);
  auto profile = source.read(model::SteadyClock::now());
  ASSERT_TRUE(profile) << profile.error().message;
  const double traced = traced_cpu_s(source.totals()) - traced_before;
  const double kernel = kernel_cpu_s(postmaster) - kernel_before;
  double client = 0;
  for (const auto& [key, time] : profile->traced()) {
    if (key.backend_type == "client backend") client += time.on_cpu_s;
  }
  std::cout << fmt::format(
      "on a CPU: traced {:.3f} s (client backends once they have a status entry {:.3f} s), "
      "kernel {:.3f} s; failed reads {}\n",
      traced, client, kernel, source.totals().counters[kTraceReadFailures]);
  ASSERT_GT(kernel, 0.5);
  EXPECT_NEAR(traced, kernel, 0.05 * kernel);
  EXPECT_GT(client, 0.0);
  EXPECT_EQ(source.totals().counters[kTraceTrackedFull], 0u);
  EXPECT_EQ(source.totals().counters[kTraceLost], 0u);
  const auto held = bpf_objects_of(::getpid());
  EXPECT_FALSE(held.programs.empty());
  owned.reset();
  EXPECT_FALSE(any_left(held));
}

}  // namespace
}  // namespace pgwaitprof::testing
