// What the sampler benchmark (bench_sampler.cc) measures with: its errors, the sampler and
// pgbench loops it times, the real daemon it starts and scrapes, memory and load readers, and
// the printing of figures.
#pragma once
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

#include "base/logging.h"
#include "collectors/activity.h"
#include "collectors/target_sampler.h"
#include "daemon/engine/process.h"
#include "daemon/engine/scratch_cluster.h"
#include "loadgen/pgbench_parser.h"
#include "model/sample_sink.h"
#include "tests/support/child_and_metrics.h"

namespace pgwaitprof::bench {

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

inline std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// What "" as a connection string means here, for messages (never the password).
inline std::string target_description() {
  std::string description;
  for (const char* name : {"PGHOST", "PGPORT", "PGUSER", "PGDATABASE"}) {
    if (env(name).empty()) continue;
    if (!description.empty()) description += ' ';
    description += fmt::format("{}={}", name, env(name));
  }
  return description.empty() ? "PG* defaults" : description;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

inline std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

// Nearest-rank percentile of an unsorted sample (copied: callers keep their order).
inline double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(fraction * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// User plus system CPU time of this process so far.
inline std::chrono::microseconds cpu_time() {
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
inline asio::awaitable<void> measure_window(collectors::TargetSampler& sampler, RecordingSink& sink,
                                            Clock::duration window, SamplerRun& run,
                                            bool& sampled) {
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

inline SamplerRun run_sampler(double hz, Clock::duration window,
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

inline PgbenchRun run_pgbench_loop(const std::string& pgbench, const fs::path& script,
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
    const auto summary = loadgen::parse_summary(result.output);
    return {summary.tps, summary.latency_avg.count()};
  } catch (const loadgen::PgbenchParseError& error) {
    throw BenchError(fmt::format("could not parse the output of pgbench: {}", error.what()));
  }
}

struct Memory {
  long rss_kib = 0;
  long hwm_kib = 0;  // peak RSS so far
};

inline std::optional<Memory> read_memory(pid_t pid) {
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
inline std::string load_average() {
  std::istringstream fields(read_text("/proc/loadavg"));
  std::string one, five, fifteen;
  fields >> one >> five >> fifteen;
  return fmt::format("{} {} {}", one, five, fifteen);
}

inline double mib(long kib) { return static_cast<double>(kib) / 1024.0; }

// The value of metric `name` for our target in an exposition.
inline std::optional<double> target_metric(const std::string& exposition, const std::string& name) {
  return testing::metric(exposition, fmt::format("{}{{target=\"{}\"}}", name, kTargetName));
}

struct Scrape {
  Clock::time_point at;
  double snapshots = 0;
  double missed_ticks = 0;
};

inline Scrape scrape_counters(int port) {
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
inline DaemonRun run_daemon(const std::string& pgwaitprof, const std::string& pgbench,
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
    run.load_tps = loadgen::parse_summary(read_text(load_log)).tps;
  } catch (const loadgen::PgbenchParseError& error) {
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
inline std::vector<double> interval_errors(const SamplerRun& run) {
  const Seconds period(1.0 / run.hz);
  std::vector<double> errors;
  for (size_t index = 1; index < run.taken_at.size(); ++index) {
    const Seconds interval = run.taken_at[index] - run.taken_at[index - 1];
    errors.push_back(std::abs(interval.count() - period.count()) / period.count());
  }
  return errors;
}

inline void line(const std::string& name, const std::string& value) {
  fmt::print("{}: {}\n", name, value);
}
inline void line(const std::string& name, double value, int decimals = 1) {
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

inline fs::path default_daemon_binary() {
  // The benchmark is built at BUILD/tests/pgwaitprof_bench, the daemon at BUILD/daemon/pgwaitprof.
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path("pgwaitprof")
               : self.parent_path().parent_path() / "daemon" / "pgwaitprof";
}

}  // namespace pgwaitprof::bench
