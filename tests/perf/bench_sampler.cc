// Benchmark of the sampler against a real PostgreSQL (the PG* environment variables name it):
// its maximum snapshot rate next to a pgbench loop of the same prepared query, its tick
// accuracy and client CPU per snapshot at 1000 Hz, and the real daemon's memory and achieved
// rate under pgbench load. It prints figures and a summary against the targets; it never fails
// on a figure, only when something could not be measured (exit 1). deploy/bench.sh runs it.
#include <fcntl.h>
#include <fmt/format.h>
#include <libpq-fe.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <asio/co_spawn.hpp>
#include <asio/connect.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "collectors/activity.h"
#include "collectors/pgbench_parser.h"
#include "collectors/target_sampler.h"
#include "config/logging.h"
#include "daemon/engine/process.h"
#include "daemon/engine/scratch_cluster.h"
#include "daemon/model/sample_sink.h"
#include "tests/support/child_and_metrics.h"

namespace pgwaitprof::bench {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Seconds = std::chrono::duration<double>;
using Microseconds = std::chrono::duration<double, std::micro>;
using testing::ChildProcess;
using testing::scrape;

constexpr auto kConnectTimeout = 10s;
constexpr double kMaxRateHz = 10000;  // the highest rate the configuration accepts
constexpr double kTickHz = 1000;
constexpr auto kTickWindow = 5s;
constexpr auto kLoadDuration = 12s;
constexpr auto kDaemonStartTimeout = 15s;
constexpr auto kDaemonStopTimeout = 15s;
constexpr const char* kTargetName = "bench";

// Something could not be measured: one line, then optionally a detail (what we saw) and a
// hint (what to do), each a full sentence, as PostgreSQL's programs report errors.
class BenchError : public std::runtime_error {
 public:
  explicit BenchError(const std::string& message, std::string detail = "", std::string hint = "")
      : std::runtime_error(message), detail_(std::move(detail)), hint_(std::move(hint)) {}
  const std::string& detail() const { return detail_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string detail_;
  std::string hint_;
};

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// What "" as a connection string means here, for messages (never the password).
std::string target_description() {
  std::string description;
  for (const char* name : {"PGHOST", "PGPORT", "PGUSER", "PGDATABASE"}) {
    if (env(name).empty()) continue;
    if (!description.empty()) description += ' ';
    description += fmt::format("{}={}", name, env(name));
  }
  return description.empty() ? "PG* defaults" : description;
}

std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

// Nearest-rank percentile of an unsorted sample (copied: callers keep their order).
double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(fraction * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// User plus system CPU time of this process so far.
std::chrono::microseconds cpu_time() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto to_micros = [](const timeval& time) {
    return std::chrono::seconds(time.tv_sec) + std::chrono::microseconds(time.tv_usec);
  };
  return to_micros(usage.ru_utime) + to_micros(usage.ru_stime);
}

// Records what the sampler delivers while a measurement window is open; reserved up front so
// that growing the vectors does not show up in the tick timing or the CPU figure.
class RecordingSink : public model::SampleSink {
 public:
  explicit RecordingSink(size_t expected_snapshots) {
    taken_at_.reserve(expected_snapshots);
    query_durations_.reserve(expected_snapshots);
  }
  void open() { recording_ = true; }
  void close() { recording_ = false; }

  void on_snapshot(const model::Snapshot& snapshot) override {
    if (!recording_) return;
    taken_at_.push_back(snapshot.taken_at_steady);
    query_durations_.push_back(snapshot.query_duration);
  }
  void on_profile_delta(const model::Profile& delta,
                        model::SystemClock::time_point read_at) override {
    (void)delta, (void)read_at;
  }
  void on_missed_ticks(uint64_t ticks) override {
    if (recording_) missed_ticks_ += ticks;
  }

  const std::vector<Clock::time_point>& taken_at() const { return taken_at_; }
  const std::vector<std::chrono::nanoseconds>& query_durations() const { return query_durations_; }
  uint64_t missed_ticks() const { return missed_ticks_; }

 private:
  bool recording_ = false;
  std::vector<Clock::time_point> taken_at_;
  std::vector<std::chrono::nanoseconds> query_durations_;
  uint64_t missed_ticks_ = 0;
};

struct SamplerRun {
  double hz = 0;
  Clock::duration window{};
  std::chrono::microseconds cpu{};
  std::vector<Clock::time_point> taken_at;
  std::vector<std::chrono::nanoseconds> query_durations;
  uint64_t missed_ticks = 0;
  int server_version = 0;

  double achieved_hz() const {
    return static_cast<double>(taken_at.size()) / Seconds(window).count();
  }
  double query_percentile_us(double fraction) const {
    std::vector<double> micros;
    micros.reserve(query_durations.size());
    for (auto duration : query_durations) micros.push_back(Microseconds(duration).count());
    return percentile(std::move(micros), fraction);
  }
};

// The measurement window starts at the first snapshot, so that connecting and preparing the
// statement count no more than pgbench's connection time counts in its tps.
asio::awaitable<void> measure_window(collectors::TargetSampler& sampler, RecordingSink& sink,
                                     Clock::duration window, SamplerRun& run, bool& sampled) {
  sampled = co_await sampler.wait_for_sample(
      std::chrono::duration_cast<std::chrono::milliseconds>(kConnectTimeout));
  if (sampled) {
    const auto cpu_start = cpu_time();
    const auto start = Clock::now();
    sink.open();
    asio::steady_timer timer(co_await asio::this_coro::executor, window);
    co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
    sink.close();
    run.window = Clock::now() - start;
    run.cpu = cpu_time() - cpu_start;
  }
  sampler.stop();
}

SamplerRun run_sampler(double hz, Clock::duration window,
                       config::LocalMode local = config::LocalMode::kAuto) {
  asio::io_context io;
  collectors::SamplerOptions options;
  options.name = kTargetName;
  options.conninfo = "";  // PG* environment variables
  options.hz = hz;
  options.source = model::SamplerSource::kActivity;
  options.local = local;
  collectors::TargetSampler sampler(io.get_executor(), options);
  RecordingSink sink(static_cast<size_t>(hz * Seconds(window).count() * 1.2) + 1000);
  sampler.add_sink(&sink);

  SamplerRun run;
  run.hz = hz;
  bool sampled = false;
  std::exception_ptr failure;
  auto keep_failure = [&failure](const std::exception_ptr& error) {
    if (error && !failure) failure = error;
  };
  asio::co_spawn(io, sampler.run(), keep_failure);
  asio::co_spawn(io, measure_window(sampler, sink, window, run, sampled), keep_failure);
  io.run();
  if (failure) std::rethrow_exception(failure);
  if (!sampled) {
    throw BenchError(fmt::format("could not sample \"{}\": {}", target_description(),
                                 sampler.last_error().empty() ? "no snapshot within 10 s"
                                                              : sampler.last_error()),
                     "",
                     "Run it through deploy/bench.sh, which starts a scratch cluster and sets the "
                     "PG* variables.");
  }
  if (sink.taken_at().size() < 2) {
    throw BenchError(fmt::format("sampler at {} Hz delivered {} snapshots in {:.1f} s", hz,
                                 sink.taken_at().size(), Seconds(run.window).count()));
  }
  run.taken_at = sink.taken_at();
  run.query_durations = sink.query_durations();
  run.missed_ticks = sink.missed_ticks();
  run.server_version = sampler.server_version();
  return run;
}

// pgbench running the sampler's query in a prepared-statement loop on one connection: what a
// client that does nothing but this query achieves on this machine.
struct PgbenchRun {
  double tps = 0;
  double latency_avg_ms = 0;
};

PgbenchRun run_pgbench_loop(const std::string& pgbench, const fs::path& script,
                            std::chrono::seconds duration) {
  const std::vector<std::string> argv{
      pgbench, "-n",           "-M", "prepared", "-c", "1", "-T", std::to_string(duration.count()),
      "-f",    script.string()};
  const auto result = engine::run_command(argv);
  if (result.exit_code != 0) {
    throw BenchError(fmt::format("pgbench on \"{}\" failed with exit code {}: {}", script.string(),
                                 result.exit_code, last_line(result.output)));
  }
  try {
    const auto summary = collectors::parse_summary(result.output);
    return {summary.tps, summary.latency_avg_ms};
  } catch (const collectors::PgbenchParseError& error) {
    throw BenchError(fmt::format("could not parse the output of pgbench: {}", error.what()));
  }
}

struct Memory {
  long rss_kib = 0;
  long hwm_kib = 0;  // peak RSS so far
};

std::optional<Memory> read_memory(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  Memory memory;
  bool rss = false, hwm = false;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    long kib = 0;
    fields >> key >> kib;
    if (key == "VmRSS:") {
      memory.rss_kib = kib;
      rss = true;
    } else if (key == "VmHWM:") {
      memory.hwm_kib = kib;
      hwm = true;
    }
  }
  if (!rss || !hwm) return std::nullopt;
  return memory;
}

// The first three fields of /proc/loadavg: other work on the machine skews every figure here.
std::string load_average() {
  std::istringstream fields(read_text("/proc/loadavg"));
  std::string one, five, fifteen;
  fields >> one >> five >> fifteen;
  return fmt::format("{} {} {}", one, five, fifteen);
}

double mib(long kib) { return static_cast<double>(kib) / 1024.0; }

// The value of metric `name` for our target in an exposition.
std::optional<double> target_metric(const std::string& exposition, const std::string& name) {
  return testing::metric(exposition, fmt::format("{}{{target=\"{}\"}}", name, kTargetName));
}

struct Scrape {
  Clock::time_point at;
  double snapshots = 0;
  double missed_ticks = 0;
};

Scrape scrape_counters(int port) {
  const auto before = Clock::now();
  const auto exposition = scrape(port);
  const auto after = Clock::now();
  const auto snapshots = target_metric(exposition, "pgwaitprof_snapshots_total");
  const auto missed = target_metric(exposition, "pgwaitprof_missed_ticks_total");
  if (!snapshots || !missed) {
    throw BenchError(
        fmt::format("could not read pgwaitprof_snapshots_total{{target=\"{}\"}} from "
                    "\"http://127.0.0.1:{}/metrics\"",
                    kTargetName, port));
  }
  return {before + (after - before) / 2, *snapshots, *missed};
}

struct DaemonRun {
  std::vector<Memory> memory_by_second;  // index 0 = 1 s into the load
  double achieved_hz = 0;
  double missed_ticks_per_s = 0;
  Clock::duration scrape_window{};
  double load_tps = 0;
  int exit_code = 0;
};

// The real daemon at 1000 Hz while pgbench loads the server: its memory every second and its
// achieved rate from two scrapes of /metrics.
DaemonRun run_daemon(const std::string& pgwaitprof, const std::string& pgbench,
                     const fs::path& dir) {
  const int port = engine::free_port();
  const fs::path config = dir / "pgwaitprof.yaml";
  const fs::path log = dir / "daemon.log";
  std::ofstream(config) << fmt::format(
      "listen: 127.0.0.1:{}\n"
      "data_dir: \"{}\"\n"
      "targets:\n"
      "  - name: {}\n"
      "    dsn: \"\"\n"
      "    hz: {}\n"
      "    source: activity\n",
      port, (dir / "data").string(), kTargetName, kTickHz);

  ChildProcess daemon_process({pgwaitprof, "daemon", "-c", config.string()}, log);
  const auto daemon_failed = [&](const std::string& what) {
    // The log goes with the temporary directory: its last line is all that is kept.
    const auto last = last_line(read_text(log));
    return BenchError(what, last.empty() ? "The daemon wrote nothing to its log."
                                         : fmt::format("The daemon's last log line was: {}", last));
  };
  const auto up_deadline = Clock::now() + kDaemonStartTimeout;
  while (target_metric(scrape(port), "pgwaitprof_up") != 1.0) {
    if (!daemon_process.running()) {
      throw daemon_failed(fmt::format("pgwaitprof daemon exited at start-up with exit code {}",
                                      daemon_process.wait(0s).value_or(-1)));
    }
    if (Clock::now() > up_deadline) {
      throw daemon_failed(
          fmt::format("pgwaitprof daemon did not report pgwaitprof_up 1 within {} s",
                      Seconds(kDaemonStartTimeout).count()));
    }
    std::this_thread::sleep_for(100ms);
  }

  const fs::path load_log = dir / "load.log";
  ChildProcess load({pgbench, "-n", "-c", "4", "-j", "2", "-T",
                     std::to_string(std::chrono::seconds(kLoadDuration).count())},
                    load_log);
  const auto load_start = Clock::now();
  DaemonRun run;
  std::optional<Scrape> first, second;
  const auto seconds = std::chrono::seconds(kLoadDuration).count();
  for (long second_index = 1; second_index <= seconds; ++second_index) {
    std::this_thread::sleep_until(load_start + std::chrono::seconds(second_index));
    const auto memory = read_memory(daemon_process.pid());
    if (!memory || !daemon_process.running()) {
      throw daemon_failed("pgwaitprof daemon exited under load");
    }
    run.memory_by_second.push_back(*memory);
    // Both scrapes inside the load, clear of pgbench's connection start and of its end.
    if (second_index == 1) first = scrape_counters(port);
    if (second_index == seconds - 1) second = scrape_counters(port);
  }
  run.scrape_window = second->at - first->at;
  run.achieved_hz = (second->snapshots - first->snapshots) / Seconds(run.scrape_window).count();
  run.missed_ticks_per_s =
      (second->missed_ticks - first->missed_ticks) / Seconds(run.scrape_window).count();

  const auto load_exit = load.wait(kLoadDuration + 30s);
  if (load_exit != 0) {
    throw BenchError(fmt::format("pgbench load failed with exit code {}: {}",
                                 load_exit.value_or(-1), last_line(read_text(load_log))));
  }
  try {
    run.load_tps = collectors::parse_summary(read_text(load_log)).tps;
  } catch (const collectors::PgbenchParseError& error) {
    throw BenchError(fmt::format("could not parse the output of pgbench: {}", error.what()));
  }

  daemon_process.signal(SIGTERM);
  const auto exit_code = daemon_process.wait(kDaemonStopTimeout);
  if (!exit_code) {
    throw daemon_failed(fmt::format("pgwaitprof daemon did not exit within {} s of SIGTERM",
                                    Seconds(kDaemonStopTimeout).count()));
  }
  run.exit_code = *exit_code;
  return run;
}

// Tick interval errors relative to the period: |interval - period| / period.
std::vector<double> interval_errors(const SamplerRun& run) {
  const Seconds period(1.0 / run.hz);
  std::vector<double> errors;
  for (size_t index = 1; index < run.taken_at.size(); ++index) {
    const Seconds interval = run.taken_at[index] - run.taken_at[index - 1];
    errors.push_back(std::abs(interval.count() - period.count()) / period.count());
  }
  return errors;
}

void line(const std::string& name, const std::string& value) {
  fmt::print("{}: {}\n", name, value);
}
void line(const std::string& name, double value, int decimals = 1) {
  fmt::print("{}: {:.{}f}\n", name, value, decimals);
}

struct SummaryRow {
  std::string figure;
  std::string target;
  std::string result;
  std::optional<bool> met;  // none: a figure without a target, printed for comparison
};

// Holds the query script, the daemon's configuration and logs; removed however we leave.
class TempDir {
 public:
  TempDir() {
    std::string name = (fs::temp_directory_path() / "pgwaitprof-bench-XXXXXX").string();
    if (!::mkdtemp(name.data())) {
      throw BenchError(
          fmt::format("could not create directory \"{}\": {}", name, std::strerror(errno)));
    }
    path_ = name;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;  // a leftover directory in /tmp is not worth failing for
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

fs::path default_daemon_binary() {
  // The benchmark is built at BUILD/tests/pgwaitprof_bench, the daemon at BUILD/daemon/pgwaitprof.
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path("pgwaitprof")
               : self.parent_path().parent_path() / "daemon" / "pgwaitprof";
}

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
  app.add_option("--kernel-backends", kernel_backends,
                 "sleeping backends for the /proc reading cost (6.)")
      ->check(CLI::Range(1, 180))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const auto rate_window = std::chrono::seconds(rate_seconds);

  // The sampler's lifecycle lines would interleave with the figures.
  config::set_log_level("warn");

  std::string command = target_description();
  for (int index = 0; index < argc; ++index) command += fmt::format(" {}", argv[index]);
  const std::string pgbench = engine::find_executable("pgbench");
  if (pgbench.empty()) {
    throw BenchError("could not find \"pgbench\" on PATH or in /usr/lib/postgresql/*/bin", "",
                     "Install postgresql-15 (deploy/install-deps.sh).");
  }
  const std::string found_daemon = engine::find_executable(pgwaitprof);
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
