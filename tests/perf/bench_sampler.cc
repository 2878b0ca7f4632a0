// Benchmark of the sampler against a real PostgreSQL (the PG* environment variables name it):
// its maximum snapshot rate next to a pgbench loop of the same prepared query, its tick
// accuracy and client CPU per snapshot at 1000 Hz, and the real daemon's memory and achieved
// rate under pgbench load, and what reading /proc costs with 100 backends. It prints figures and a
// summary against the targets; it never fails on a figure, only when something could not be
// measured (exit 1). deploy/bench.sh runs it.
#include <libpq-fe.h>
#include <time.h>

#include "base/programs.h"
#include "tests/perf/bench_support.h"

namespace pgwaitprof::bench {
namespace {

// 1. Maximum rate, side by side with pgbench and alternating, since the machine is noisy: the
// median of the ratios of the two pairs.
double measure_max_rate(const std::string& pgbench, const fs::path& dir,
                        std::chrono::seconds rate_window) {
  fmt::print(
      "\n# 1. maximum rate: sampler at hz={:.0f} vs pgbench -M prepared -c 1 -T {} on the "
      "same query, alternating\n",
      kMaxRateHz, rate_window.count());
  const fs::path script = dir / "query.sql";
  std::vector<double> ratios;
  int server_version = 0;
  for (int pair = 1; pair <= 2; ++pair) {
    const auto ours = run_sampler(kMaxRateHz, rate_window);
    if (server_version == 0) {
      server_version = ours.server_version;
      line("server_version_num", std::to_string(server_version));
      std::ofstream(script) << collectors::activity_query(server_version) << ";\n";
    }
    const auto theirs = run_pgbench_loop(pgbench, script, rate_window);
    const double ratio = ours.achieved_hz() / theirs.tps;
    ratios.push_back(ratio);
    const auto name = [pair](const char* what) { return fmt::format("pair{}_{}", pair, what); };
    line(name("ours_hz"), ours.achieved_hz());
    line(name("ours_snapshots"), std::to_string(ours.taken_at.size()));
    line(name("ours_query_p50_us"), ours.query_percentile_us(0.5));
    line(name("ours_query_p99_us"), ours.query_percentile_us(0.99));
    line(name("ours_missed_ticks"), std::to_string(ours.missed_ticks));
    line(name("pgbench_tps"), theirs.tps);
    line(name("pgbench_latency_avg_us"), theirs.latency_avg_ms * 1000);
    line(name("ratio_ours_over_pgbench"), ratio, 3);
    // The sampler never ticks faster than hz: when pgbench beats hz, no sampler could reach 1.
    line(name("ratio_ceiling_at_hz_limit"), std::min(1.0, kMaxRateHz / theirs.tps), 3);
    std::fflush(stdout);
  }
  const double median_ratio = median(ratios);
  line("median_ratio_ours_over_pgbench", median_ratio, 3);
  return median_ratio;
}

struct TickFigures {
  double achieved_hz = 0;
  double error_p99_pct = 0;
  double cpu_per_snapshot_us = 0;
};

// 2 and 3. Tick accuracy and client CPU at 1000 Hz.
TickFigures measure_ticks() {
  fmt::print("\n# 2. tick interval at hz={:.0f} for {} s; 3. client CPU per snapshot\n", kTickHz,
             std::chrono::seconds(kTickWindow).count());
  const auto ticks = run_sampler(kTickHz, kTickWindow);
  const auto errors = interval_errors(ticks);
  const TickFigures figures{
      ticks.achieved_hz(), percentile(errors, 0.99) * 100,
      Microseconds(ticks.cpu).count() / static_cast<double>(ticks.taken_at.size())};
  line("tick_achieved_hz", ticks.achieved_hz());
  line("tick_snapshots", std::to_string(ticks.taken_at.size()));
  line("tick_missed_ticks", std::to_string(ticks.missed_ticks));
  line("tick_interval_error_p50_pct", percentile(errors, 0.5) * 100, 2);
  line("tick_interval_error_p99_pct", figures.error_p99_pct, 2);
  line("tick_interval_error_max_pct", percentile(errors, 1.0) * 100, 2);
  line("tick_query_p50_us", ticks.query_percentile_us(0.5));
  line("client_cpu_s", Seconds(ticks.cpu).count(), 3);
  line("client_cpu_per_snapshot_us", figures.cpu_per_snapshot_us);
  std::fflush(stdout);
  return figures;
}

struct DaemonFigures {
  double max_hwm_mib = 0;
  double rss_at_2s = 0;
  double rss_at_end = 0;
  size_t end_second = 0;
  double achieved_hz = 0;
};

// 4 and 5. The real daemon under load.
DaemonFigures measure_daemon(const fs::path& daemon_binary, const std::string& pgbench,
                             const fs::path& dir) {
  fmt::print(
      "\n# 4. daemon memory and 5. achieved rate at hz={:.0f} under pgbench -c 4 -j 2 -T {}\n",
      kTickHz, std::chrono::seconds(kLoadDuration).count());
  const auto daemon_run = run_daemon(daemon_binary.string(), pgbench, dir);
  long max_rss_kib = 0, max_hwm_kib = 0;
  for (size_t index = 0; index < daemon_run.memory_by_second.size(); ++index) {
    const auto& memory = daemon_run.memory_by_second[index];
    line(fmt::format("daemon_rss_mib_at_{}s", index + 1), mib(memory.rss_kib), 2);
    max_rss_kib = std::max(max_rss_kib, memory.rss_kib);
    max_hwm_kib = std::max(max_hwm_kib, memory.hwm_kib);
  }
  const DaemonFigures figures{mib(max_hwm_kib), mib(daemon_run.memory_by_second.at(1).rss_kib),
                              mib(daemon_run.memory_by_second.back().rss_kib),
                              daemon_run.memory_by_second.size(), daemon_run.achieved_hz};
  line("daemon_rss_max_mib", mib(max_rss_kib), 2);
  line("daemon_hwm_max_mib", figures.max_hwm_mib, 2);
  line(fmt::format("daemon_rss_growth_2s_to_{}s_mib", figures.end_second),
       figures.rss_at_end - figures.rss_at_2s, 2);
  line("daemon_achieved_hz_under_load", daemon_run.achieved_hz);
  line("daemon_missed_ticks_per_s_under_load", daemon_run.missed_ticks_per_s);
  line("daemon_scrape_window_s", Seconds(daemon_run.scrape_window).count(), 2);
  line("load_tps", daemon_run.load_tps);
  line("daemon_exit_code_after_sigterm", std::to_string(daemon_run.exit_code));
  line("load_average_at_end", load_average());
  return figures;
}

// Backends that sit in pg_sleep for the whole measurement: connected and active, so the kernel
// stage reads each one's schedstat every interval. Cancelled and closed on destruction.
class SleepingBackends {
 public:
  explicit SleepingBackends(int count) {
    for (int index = 0; index < count; ++index) {
      PGconn* connection = PQconnectdb("application_name=pgwaitprof_bench_sleeper");
      connections_.push_back(connection);
      if (PQstatus(connection) != CONNECTION_OK ||
          PQsendQuery(connection, "SELECT pg_sleep(3600)") != 1) {
        throw BenchError(fmt::format("could not start sleeping backend {} of {}", index + 1, count),
                         PQerrorMessage(connection),
                         "The scratch cluster of deploy/bench.sh allows 200 connections.");
      }
    }
  }
  SleepingBackends(const SleepingBackends&) = delete;
  SleepingBackends& operator=(const SleepingBackends&) = delete;
  ~SleepingBackends() {
    for (PGconn* connection : connections_) {
      if (PGcancel* cancel = PQgetCancel(connection)) {
        char error[256];
        (void)PQcancel(cancel, error, sizeof error);
        PQfreeCancel(cancel);
      }
      PQfinish(connection);
    }
  }

 private:
  std::vector<PGconn*> connections_;
};

struct KernelCostFigures {
  double rate_ratio_100hz = 0;  // median of achieved rate with /proc reads over without
  double rate_ratio_max = 0;    // the same at the highest rate the configuration accepts
  double extra_cpu_per_snapshot_us = 0;
};

// 6. What reading /proc (the kernel stage: schedstat of every backend each interval, the state
// of each backend without a wait event at every snapshot) costs, with `backends` sleeping
// backends: the sampler with local false and true, alternating, three pairs at each rate.
KernelCostFigures measure_kernel_cost(int backends, std::chrono::seconds window) {
  fmt::print(
      "\n# 6. /proc reading cost: {} backends in pg_sleep, local=false vs local=true, "
      "alternating, 3 pairs at 100 Hz and at hz={:.0f}, {} s each\n",
      backends, kMaxRateHz, window.count());
  const SleepingBackends sleepers(backends);
  KernelCostFigures figures;
  for (const double hz : {100.0, kMaxRateHz}) {
    std::vector<double> ratios, extra_cpu;
    for (int pair = 1; pair <= 3; ++pair) {
      const auto off = run_sampler(hz, window, config::LocalMode::kNo);
      const auto on = run_sampler(hz, window, config::LocalMode::kYes);
      const auto cpu_us = [](const SamplerRun& run) {
        return Microseconds(run.cpu).count() / static_cast<double>(run.taken_at.size());
      };
      ratios.push_back(on.achieved_hz() / off.achieved_hz());
      extra_cpu.push_back(cpu_us(on) - cpu_us(off));
      const auto name = [&](const char* what) {
        return fmt::format("kernel_{:.0f}hz_pair{}_{}", hz, pair, what);
      };
      line(name("off_hz"), off.achieved_hz());
      line(name("on_hz"), on.achieved_hz());
      line(name("off_cpu_per_snapshot_us"), cpu_us(off));
      line(name("on_cpu_per_snapshot_us"), cpu_us(on));
      line(name("ratio_on_over_off"), ratios.back(), 3);
      std::fflush(stdout);
    }
    const double ratio = median(ratios);
    line(fmt::format("kernel_{:.0f}hz_median_ratio_on_over_off", hz), ratio, 3);
    line(fmt::format("kernel_{:.0f}hz_ratio_spread", hz),
         fmt::format("{:.3f}-{:.3f}", *std::min_element(ratios.begin(), ratios.end()),
                     *std::max_element(ratios.begin(), ratios.end())));
    if (hz == 100.0) {
      figures.rate_ratio_100hz = ratio;
      figures.extra_cpu_per_snapshot_us = median(extra_cpu);
      line("kernel_100hz_median_extra_cpu_per_snapshot_us", figures.extra_cpu_per_snapshot_us);
    } else {
      figures.rate_ratio_max = ratio;
    }
  }
  return figures;
}

void print_summary(double median_ratio, const TickFigures& ticks, const DaemonFigures& daemon,
                   const KernelCostFigures& kernel, int kernel_backends) {
  const std::vector<SummaryRow> summary{
      {"1. max rate ours/pgbench (median of 2)", ">= 0.90", fmt::format("{:.3f}", median_ratio),
       median_ratio >= 0.9},
      {"2. tick interval error p99 at 1000 Hz", "<= 20 %",
       fmt::format("{:.2f} %", ticks.error_p99_pct), ticks.error_p99_pct <= 20},
      {"2. achieved rate at 1000 Hz, no load", ">= 990 Hz",
       fmt::format("{:.1f} Hz", ticks.achieved_hz), ticks.achieved_hz >= 990},
      {"3. client CPU per snapshot", "none set",
       fmt::format("{:.1f} us", ticks.cpu_per_snapshot_us), std::nullopt},
      {"4. daemon peak RSS (VmHWM) under load", "<= 30 MiB",
       fmt::format("{:.2f} MiB", daemon.max_hwm_mib), daemon.max_hwm_mib <= 30},
      {fmt::format("4. daemon RSS at 2 s -> {} s", daemon.end_second), "< +0.5 MiB",
       fmt::format("{:.2f} -> {:.2f} MiB", daemon.rss_at_2s, daemon.rss_at_end),
       daemon.rss_at_end <= daemon.rss_at_2s + 0.5},
      {"5. daemon achieved rate at 1000 Hz, load", ">= 990 Hz",
       fmt::format("{:.1f} Hz", daemon.achieved_hz), daemon.achieved_hz >= 990},
      {fmt::format("6. /proc reads: rate, 100 Hz, {} backends", kernel_backends), ">= 0.98",
       fmt::format("{:.3f} of without", kernel.rate_ratio_100hz), kernel.rate_ratio_100hz >= 0.98},
      {"6. /proc reads: rate at hz=10000", "none set",
       fmt::format("{:.3f} of without", kernel.rate_ratio_max), std::nullopt},
  };
  fmt::print("\n{:<44} {:<11} {:<22} {}\n", "figure", "target", "result", "status");
  for (const auto& row : summary) {
    fmt::print("{:<44} {:<11} {:<22} {}\n", row.figure, row.target, row.result,
               !row.met   ? "-"
               : *row.met ? "met"
                          : "MISSED");
  }
}

// The floor under any sampler that wakes once a tick: a loop that only sleeps to the next tick
// the way the memory source's reader does (absolute clock_nanosleep, 1 ns timer slack, real time
// where allowed, else nice -10), its CPU per tick over `seconds`, printed as one JSON line for
// tests/perf/suite.sh.
int run_benchmark(int argc, char** argv) {
  CLI::App app{
      "Sampler benchmark: prints rate, tick accuracy, CPU and memory figures for the "
      "server the PG* environment variables name."};
  std::string pgwaitprof = default_daemon_binary().string();
  int rate_seconds = 5;
  int kernel_backends = 100;
  app.add_option("--pgwaitprof", pgwaitprof, "pgwaitprof binary for the daemon figures")
      ->capture_default_str();
  app.add_option("--seconds", rate_seconds, "length of each maximum-rate measurement")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  int query_version = 0;
  app.add_option("--print-snapshot-query", query_version,
                 "print the snapshot query for this server_version_num and exit");
  app.add_option("--kernel-backends", kernel_backends,
                 "sleeping backends for the /proc reading cost (6.)")
      ->check(CLI::Range(1, 180))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (query_version > 0) {
    fmt::print("{};\n", collectors::activity_query(query_version));
    return 0;
  }
  const auto rate_window = std::chrono::seconds(rate_seconds);

  // The sampler's lifecycle lines would interleave with the figures.
  base::set_log_level("warn");

  std::string command = target_description();
  for (int index = 0; index < argc; ++index) command += fmt::format(" {}", argv[index]);
  const std::string pgbench = base::find_executable("pgbench");
  if (pgbench.empty()) {
    throw BenchError("could not find \"pgbench\" on PATH or in /usr/lib/postgresql/*/bin", "",
                     "Install postgresql-15 (deploy/install-deps.sh).");
  }
  const std::string found_daemon = base::find_executable(pgwaitprof);
  if (found_daemon.empty()) {
    throw BenchError(fmt::format("could not find the pgwaitprof binary \"{}\"", pgwaitprof), "",
                     "Build it with deploy/build.sh or pass --pgwaitprof PATH.");
  }
  const fs::path daemon_binary = fs::absolute(found_daemon);
  const TempDir temp;
  const fs::path& dir = temp.path();

  fmt::print("pgwaitprof sampler benchmark\n");
  line("command", command);
  line("cpus", std::to_string(std::thread::hardware_concurrency()));
  line("pgbench", pgbench);
  line("pgwaitprof", daemon_binary.string());
  line("load_average_at_start", load_average());
  std::fflush(stdout);

  const double median_ratio = measure_max_rate(pgbench, dir, rate_window);
  const auto ticks = measure_ticks();
  const auto daemon = measure_daemon(daemon_binary, pgbench, dir);
  const auto kernel = measure_kernel_cost(kernel_backends, rate_window);
  print_summary(median_ratio, ticks, daemon, kernel, kernel_backends);
  fmt::print("command: {}\n", command);
  return 0;
}

}  // namespace
}  // namespace pgwaitprof::bench

int main(int argc, char** argv) {
  try {
    return pgwaitprof::bench::run_benchmark(argc, argv);
  } catch (const pgwaitprof::bench::BenchError& error) {
    std::fflush(stdout);
    fmt::print(stderr, "pgwaitprof_bench: error: {}\n", error.what());
    if (!error.detail().empty()) {
      fmt::print(stderr, "pgwaitprof_bench: detail: {}\n", error.detail());
    }
    if (!error.hint().empty()) fmt::print(stderr, "pgwaitprof_bench: hint: {}\n", error.hint());
    return 1;
  } catch (const std::exception& error) {
    std::fflush(stdout);
    fmt::print(stderr, "pgwaitprof_bench: error: {}\n", error.what());
    return 1;
  }
}
