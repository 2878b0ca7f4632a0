// A daemon with many targets on one local server (issue 47 item 11), against the real daemon
// and a cluster of the test's own: 300 targets, each sampled at 10 Hz with the default source.
// Every target must take the memory source though the others' sessions change state during its live
// check; under pgbench -C (a backend per transaction) the daemon's descriptors stay bounded (it
// once kept up to 256 pairs of /proc/<pid>/{stat,wchan} per target for exited backends and ran out)
// and /metrics answers; SIGTERM stops it within a second with a busy loop per CPU beside (once 10.2
// s with 500 targets).
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/thread_priority.h"
#include "tests/faults/fault_harness.h"
#include "tests/integration/own_cluster.h"

namespace pgwaitprof::testing {
namespace {

// How many lines of the exposition start with `prefix` and end with value `value`.
size_t count_series(const std::string& exposition, const std::string& prefix,
                    const std::string& contains, double value) {
  size_t count = 0;
  size_t start = 0;
  while (start < exposition.size()) {
    auto end = exposition.find('\n', start);
    if (end == std::string::npos) end = exposition.size();
    const std::string line = exposition.substr(start, end - start);
    if (line.starts_with(prefix) && line.find(contains) != std::string::npos &&
        std::stod(line.substr(line.rfind(' ') + 1)) == value) {
      ++count;
    }
    start = end + 1;
  }
  return count;
}

size_t open_descriptors(pid_t pid) {
  std::error_code error;
  size_t count = 0;
  for (auto entry =
           std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error);
       !error && entry != std::filesystem::directory_iterator(); entry.increment(error)) {
    ++count;
  }
  return count;
}

TEST(ManyTargets, MemorySourceForAllBoundedDescriptorsUnderChurnAndAPromptStop) {
  require_cluster();
  ASSERT_EQ(getuid(), 0u) << "the memory source runs as root here, like CI";
  // A cluster of the test's own: 300 targets, 4 connections for pgbench -C, 26 spare.
  constexpr int targets = 300;
  const auto dir = temp_dir("many-targets");
  OwnCluster cluster(dir, std::nullopt, "", "", targets + 30);
  // A descriptor limit of 4,096 for the daemon: a quarter for backends' /proc files. The old
  // daemon kept up to 512 per target.
  constexpr size_t kDescriptorLimit = 4096;
  const int port = engine::free_port();
  std::string config = "listen: 127.0.0.1:" + std::to_string(port) +
                       "\ndata_dir: " + (dir / "data").string() + "\ntargets:\n";
  for (int index = 0; index < targets; ++index) {
    config += "  - name: t" + std::to_string(index) + "\n    dsn: \"" + cluster.conninfo +
              "\"\n    hz: 10\n";
  }
  write_text(dir / "pgwaitprof.yaml", config);
  ChildProcess daemon(
      {base::find_executable("prlimit"), "--nofile=" + std::to_string(kDescriptorLimit), "--",
       pgwaitprof_binary(), "daemon", "-c", (dir / "pgwaitprof.yaml").string()},
      dir / "daemon.log");
  std::cout << "targets " << targets << "\n";

  // Every target up, and every one on the memory source.
  std::string exposition;
  const bool all_up = eventually(120s, [&] {
    exposition = get_metrics(port, "", 10s);
    return count_series(exposition, "pgwaitprof_up{", "", 1) == static_cast<size_t>(targets) &&
           count_series(exposition, "pgwaitprof_sampler_info{", "source=\"memory\"", 1) +
                   count_series(exposition, "pgwaitprof_sampler_info{", "source=\"activity\"", 1) ==
               static_cast<size_t>(targets);
  });
  ASSERT_TRUE(all_up) << count_series(exposition, "pgwaitprof_up{", "", 1) << " of " << targets
                      << " up\n"
                      << daemon.log().substr(0, 20000);
  const size_t on_memory =
      count_series(exposition, "pgwaitprof_sampler_info{", "source=\"memory\"", 1);
  EXPECT_EQ(on_memory, static_cast<size_t>(targets))
      << "fell back to activity:\n"
      << [&] {
           std::string lines;
           std::istringstream log(daemon.log());
           for (std::string line; std::getline(log, line);) {
             if (line.find("does not match") != std::string::npos) lines += line + "\n";
           }
           return lines.substr(0, 5000);
         }();

  // pgbench -C beside: hundreds of backends a second come and go, each read by every target.
  const size_t before = open_descriptors(daemon.pid());
  ChildProcess churn({base::find_executable("pgbench"), "-n", "-C", "-S", "-c", "4", "-j", "2",
                      "-T", "15", cluster.conninfo},
                     dir / "pgbench.log");
  size_t most = before;
  std::chrono::milliseconds slowest_scrape{0};
  size_t scrapes = 0;
  size_t answered = 0;
  while (churn.running()) {
    most = std::max(most, open_descriptors(daemon.pid()));
    const auto asked = std::chrono::steady_clock::now();
    const auto answer = get_metrics(port, "", 20s);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - asked);
    ++scrapes;
    if (answer.starts_with("HTTP/1.1 200")) ++answered;
    slowest_scrape = std::max(slowest_scrape, took);
    std::this_thread::sleep_for(500ms);
  }
  EXPECT_EQ(churn.wait(0s), 0) << churn.log();
  std::cout << "descriptors: " << before << " before pgbench -C, at most " << most
            << " during it (limit " << kDescriptorLimit << "); /metrics answered " << answered
            << " of " << scrapes << ", the slowest in " << slowest_scrape.count() << " ms\n";
  EXPECT_LE(most, before + kDescriptorLimit / 4 + 64);
  EXPECT_EQ(answered, scrapes);
  // Within Prometheus' default scrape_timeout (10 s). The test saturates both CPUs itself (the
  // daemon's 300 readers took one CPU, pgbench -C and its backends the other), and a scrape waits
  // for a CPU at both ends, the daemon's HTTP thread and this test: with two busy loops beside it,
  // the slowest of 6-12 scrapes took 0.57-4.98 s in nine runs here (2026-12-06), 5.2 s once in
  // CI against the 5 s bound this test had.
  EXPECT_LT(slowest_scrape, 10s);
  EXPECT_EQ(daemon.log().find("out of file descriptors"), std::string::npos)
      << daemon.log().substr(0, 20000);

  // SIGTERM on a loaded host: a busy loop per CPU beside the daemon. The daemon stops within a
  // second, as the docs promise; the bound leaves half a second to this machine's other load.
  // 92318cb took 11.9 s with 300 targets; c3dc255 3.5-6.3 s with these busy loops, its I/O
  // thread saturated by every target reading every backend's /proc/<pid>/schedstat once a
  // second (kernel_round.h); 7231054 2.5-3.3 s, its I/O thread preempted by the backends its
  // stop had woken to exit (DaemonApp::shutdown).
  const unsigned loops = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::unique_ptr<ChildProcess>> busy;
  for (unsigned cpu = 0; cpu < loops; ++cpu) {
    busy.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{base::find_executable("sh"), "-c", "while :; do :; done"},
        dir / ("busy" + std::to_string(cpu) + ".log")));
  }
  std::this_thread::sleep_for(3s);
  // The daemon's stop ends with 300 sessions closed, whose backends then exit at once: this
  // thread watches for the daemon's exit at real time, or those exits would delay the watching
  // (bash's `wait` saw a daemon that had exited after 0.14 s 2.2 s late).
  ASSERT_EQ(base::raise_thread_priority(), base::kRealTime);
  const auto signalled = std::chrono::steady_clock::now();
  daemon.signal(SIGTERM);
  const auto code = daemon.wait(120s);
  const auto stop_time = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - signalled);
  const sched_param normal{.sched_priority = 0};
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
  busy.clear();
  const auto log = daemon.log();
  const auto took = log.find("stop took");
  std::cout << "SIGTERM to exit: " << stop_time.count() << " ms with " << targets << " targets and "
            << loops << " busy loops ("
            << (took == std::string::npos ? "no stop line"
                                          : log.substr(took, log.find('\n', took) - took))
            << ")\n";
  EXPECT_EQ(code, 0) << log.substr(0, 20000);
  EXPECT_LE(stop_time, 1500ms) << log.substr(log.size() > 5000 ? log.size() - 5000 : 0);
  cluster.stop();
}

}  // namespace
}  // namespace pgwaitprof::testing
