// The sampling daemon against the real scratch cluster of deploy/test.sh: sampling rate at
// 1000 Hz, the exposition (checked by promtool), reconnection, signals, reload, privileges,
// the pg_wait_sampling source, and the traced source's series (as root).
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "base/programs.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

using namespace std::chrono_literals;

struct Daemon {
  std::filesystem::path dir;
  int port;
  std::unique_ptr<ChildProcess> process;

  Daemon(const std::string& name, const std::string& targets_yaml) {
    dir = temp_dir(name);
    port = engine::free_port();
    write_text(dir / "pgwaitprof.yaml", config(targets_yaml));
    process =
        std::make_unique<ChildProcess>(std::vector<std::string>{pgwaitprof_binary(), "daemon", "-c",
                                                                (dir / "pgwaitprof.yaml").string()},
                                       dir / "daemon.log");
  }
  std::string config(const std::string& targets_yaml) const {
    return "listen: 127.0.0.1:" + std::to_string(port) + "\ndata_dir: " + (dir / "data").string() +
           "\ntargets:\n" + targets_yaml;
  }
  std::string metrics() const { return scrape(port); }
  std::optional<double> value(const std::string& series) const { return metric(metrics(), series); }
};

std::string target_yaml(const std::string& name, int hz, const std::string& source = "activity",
                        const std::string& dsn = test_conninfo()) {
  // A rate is refused with pg_wait_sampling, which samples at its own period.
  const std::string rate =
      source != "pg_wait_sampling" ? "    hz: " + std::to_string(hz) + "\n" : "";
  return "  - name: " + name + "\n    dsn: \"" + dsn + "\"\n" + rate + "    source: " + source +
         "\n    pg_wait_sampling_poll_ms: 200\n";
}

std::unique_ptr<ChildProcess> pgbench_load(const std::filesystem::path& dir,
                                           std::vector<std::string> args) {
  std::vector<std::string> argv{base::find_executable("pgbench"), "-n"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(test_conninfo());
  return std::make_unique<ChildProcess>(argv, dir / "pgbench.log");
}

// How far a series moved from one scrape to the next; both scrapes must have it.
double metric_delta(const std::string& before, const std::string& after,
                    const std::string& series) {
  const auto from = metric(before, series);
  const auto to = metric(after, series);
  EXPECT_TRUE(from && to) << series;
  return to.value_or(0) - from.value_or(0);
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

TEST_F(DaemonTest, SamplesAt1000HzAndServesValidMetrics) {
  Daemon daemon("rate", target_yaml("local", 1000));
  ASSERT_TRUE(eventually(10s, [&] {
    return daemon.value("pgwaitprof_up{target=\"local\"}") == 1.0;
  })) << daemon.process->log();
  // Light, rate-limited load: on a 2-core machine a saturating pgbench would starve the sampler
  // of CPU and measure the machine, not the sampler.
  auto load = pgbench_load(daemon.dir, {"-c", "2", "-j", "1", "-R", "200", "-T", "8"});
  std::this_thread::sleep_for(1500ms);
  const auto first_at = std::chrono::steady_clock::now();
  const std::string before = daemon.metrics();
  std::this_thread::sleep_for(4s);
  const auto second_at = std::chrono::steady_clock::now();
  const std::string exposition = daemon.metrics();
  auto delta = [&](const std::string& series) { return metric_delta(before, exposition, series); };
  const double seconds = std::chrono::duration<double>(second_at - first_at).count();
  const double rate = delta("pgwaitprof_snapshots_total{target=\"local\"}") / seconds;
  const double missed = delta("pgwaitprof_missed_ticks_total{target=\"local\"}") / seconds;
  std::cout << "achieved " << rate << " Hz, missed " << missed << " ticks/s over " << seconds
            << " s\n";
  // Every tick is taken or counted missed. How many are taken is the machine's as much as the
  // sampler's (this 2-core VM has minutes at half speed: two tries in a row measured 699 and
  // 746 Hz in one CI run, 1000 alone right after): the rate is a figure of tests/perf/suite.sh;
  // here it must be well above half the rate asked.
  EXPECT_NEAR((rate + missed) / 1000, 1.0, 0.15) << rate << " + " << missed;
  EXPECT_GT(rate, 600) << "achieved " << rate << " Hz over " << seconds << " s";

  // pgbench's backends were seen, in DESIGN.md's labels.
  EXPECT_GT(metric(exposition,
                   "pgwaitprof_wait_samples_total{target=\"local\",backend_type=\"client "
                   "backend\",state=\"active\"")
                .value_or(0),
            0);
  EXPECT_EQ(metric(exposition, "pgwaitprof_up{target=\"local\"}"), 1.0);
  EXPECT_TRUE(metric(exposition, "pgwaitprof_snapshot_duration_seconds_count{target=\"local\"}"));
  EXPECT_TRUE(metric(exposition, "pgwaitprof_wait_duration_seconds_bucket{target=\"local\""));
  EXPECT_TRUE(metric(exposition, "pgwaitprof_build_info{"));
  EXPECT_EQ(
      metric(exposition, "pgwaitprof_collector_success{target=\"local\",collector=\"activity\"}"),
      1.0);
  EXPECT_EQ(exposition.find("pid="), std::string::npos);
  // The server runs on this host: its backends' CPU and run-queue time, by backend type.
  EXPECT_GT(metric(exposition,
                   "pgwaitprof_backend_cpu_seconds_total{target=\"local\","
                   "backend_type=\"client backend\"}")
                .value_or(0),
            0);
  EXPECT_TRUE(metric(exposition,
                     "pgwaitprof_backend_runqueue_seconds_total{target=\"local\","
                     "backend_type=\"client backend\"}"));

  write_text(daemon.dir / "metrics.txt", exposition);
  auto check = engine::run_command(
      {"/bin/sh", "-c", "promtool check metrics < " + (daemon.dir / "metrics.txt").string()});
  EXPECT_EQ(check.exit_code, 0) << check.output;
  load->wait(15s);
}

// The sum of every sample of the series whose name and labels start with `series`.
double metric_sum(const std::string& exposition, const std::string& series) {
  double sum = 0;
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(series)) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// At the 10 kHz cap the server's answers set the pace: every tick is taken or counted as missed,
// and each snapshot is counted once with all its rows. The next tick's query goes out before an
// answer is parsed, so an answer lost, parsed twice or mixed with the next would show here.
TEST_F(DaemonTest, AtTheRateCapEveryTickIsTakenOrMissedAndEverySnapshotCountedOnce) {
  Daemon daemon("cap", target_yaml("local", 10000));
  ASSERT_TRUE(eventually(10s, [&] {
    return daemon.value("pgwaitprof_up{target=\"local\"}") == 1.0;
  })) << daemon.process->log();
  std::this_thread::sleep_for(1s);
  struct Reading {
    std::chrono::steady_clock::time_point at;
    double snapshots, missed, samples;
  };
  auto read = [&] {
    const auto exposition = daemon.metrics();
    return Reading{
        std::chrono::steady_clock::now(),
        metric(exposition, "pgwaitprof_snapshots_total{target=\"local\"}").value_or(0),
        metric(exposition, "pgwaitprof_missed_ticks_total{target=\"local\"}").value_or(0),
        metric_sum(exposition, "pgwaitprof_wait_samples_total{target=\"local\"")};
  };
  // Every backend but the daemon's own and psql's.
  auto backends = [] {
    return std::stod(
        psql("SELECT count(*) - 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid()").output);
  };
  const double backends_before = backends();
  const auto first = read();
  std::this_thread::sleep_for(5s);
  const auto second = read();
  const double backends_after = backends();
  const double seconds = std::chrono::duration<double>(second.at - first.at).count();
  const double taken = second.snapshots - first.snapshots;
  const double ticks = taken + second.missed - first.missed;
  // Scrapes see counters published every 100 ms: up to 0.2 s of ticks either way.
  EXPECT_NEAR(ticks / (10000 * seconds), 1.0, 0.06)
      << taken << " snapshots and " << second.missed - first.missed << " missed in " << seconds
      << " s";
  EXPECT_GT(taken / seconds, 1000) << daemon.process->log();
  ASSERT_GT(taken, 0);
  const double rows = (second.samples - first.samples) / taken;
  EXPECT_GE(rows, std::min(backends_before, backends_after) - 0.5);
  EXPECT_LE(rows, std::max(backends_before, backends_after) + 0.5);
}

TEST_F(DaemonTest, ServerRestartTurnsUpToZeroAndBackWithoutDaemonRestart) {
  Daemon daemon("restart", target_yaml("local", 100));
  ASSERT_TRUE(
      eventually(10s, [&] { return daemon.value("pgwaitprof_up{target=\"local\"}") == 1.0; }));
  ASSERT_EQ(pg_ctl({"stop", "-w", "-m", "fast"}).exit_code, 0);
  EXPECT_TRUE(
      eventually(5s, [&] { return daemon.value("pgwaitprof_up{target=\"local\"}") == 0.0; }));
  // /metrics keeps being served while the target is down.
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(daemon.value("pgwaitprof_up{target=\"local\"}"), 0.0);
  const auto missed_before =
      daemon.value("pgwaitprof_missed_ticks_total{target=\"local\"}").value_or(0);
  ASSERT_EQ(
      pg_ctl({"start", "-w", "-l",
              std::filesystem::path(env("PGWAITPROF_TEST_PGDATA")).parent_path() / "server.log"})
          .exit_code,
      0);
  EXPECT_TRUE(
      eventually(10s, [&] { return daemon.value("pgwaitprof_up{target=\"local\"}") == 1.0; }));
  EXPECT_TRUE(daemon.process->running());
  // The gap is counted as missed ticks (about 100 Hz x 2 s).
  EXPECT_GT(daemon.value("pgwaitprof_missed_ticks_total{target=\"local\"}").value_or(0),
            missed_before + 100);
  // Logged once per state change, not once per reconnection attempt (they back off from 100 ms): a
  // server going down can give three different errors in turn ("the database system is
  // shutting down", "server closed the connection unexpectedly", then no socket file).
  const std::string log = daemon.process->log();
  size_t failures = 0;
  for (size_t at = log.find("could not connect"); at != std::string::npos;
       at = log.find("could not connect", at + 1))
    ++failures;
  EXPECT_LE(failures, 3u) << log;
  EXPECT_NE(log.find("connection restored"), std::string::npos) << log;
}

TEST_F(DaemonTest, SigtermStopsWithinOneSecond) {
  Daemon daemon("sigterm", target_yaml("local", 1000));
  ASSERT_TRUE(
      eventually(10s, [&] { return daemon.value("pgwaitprof_up{target=\"local\"}") == 1.0; }));
  const auto sent = std::chrono::steady_clock::now();
  daemon.process->signal(SIGTERM);
  const auto code = daemon.process->wait(3s);
  const auto took = std::chrono::steady_clock::now() - sent;
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
  EXPECT_LT(took, 1s);
}

TEST_F(DaemonTest, SighupRejectsBadConfigAndKeepsCountersOfUnchangedTargets) {
  Daemon daemon("reload", target_yaml("local", 200));
  ASSERT_TRUE(eventually(10s, [&] {
    return daemon.value("pgwaitprof_snapshots_total{target=\"local\"}").value_or(0) > 200;
  }));
  write_text(daemon.dir / "pgwaitprof.yaml",
             daemon.config(target_yaml("local", 200) + "    hzz: 5\n"));
  daemon.process->signal(SIGHUP);
  ASSERT_TRUE(eventually(
      5s, [&] { return daemon.process->log().find("could not reload") != std::string::npos; }));
  EXPECT_NE(daemon.process->log().find("unrecognized configuration key \"hzz\""), std::string::npos)
      << daemon.process->log();
  EXPECT_TRUE(daemon.process->running());

  const double before = daemon.value("pgwaitprof_snapshots_total{target=\"local\"}").value_or(0);
  write_text(daemon.dir / "pgwaitprof.yaml",
             daemon.config(target_yaml("local", 200) + target_yaml("second", 50)));
  daemon.process->signal(SIGHUP);
  EXPECT_TRUE(
      eventually(10s, [&] { return daemon.value("pgwaitprof_up{target=\"second\"}") == 1.0; }));
  // The unchanged target kept its counters.
  EXPECT_GE(daemon.value("pgwaitprof_snapshots_total{target=\"local\"}").value_or(0), before);
  EXPECT_TRUE(daemon.process->running());
}

// The data directory is locked and holds the control socket: a reload that changes it says so
// and keeps the running one (it was silently taken for the next runs); the rest of the new
// configuration applies.
TEST_F(DaemonTest, SighupWithAnotherDataDirWarnsAndKeepsTheRunningOne) {
  Daemon daemon("reload-data-dir", target_yaml("local", 100));
  ASSERT_TRUE(
      eventually(10s, [&] { return daemon.value("pgwaitprof_up{target=\"local\"}") == 1.0; }));
  std::string changed = daemon.config(target_yaml("local", 100) + target_yaml("second", 50));
  const std::string data_line = "data_dir: " + (daemon.dir / "data").string();
  changed.replace(changed.find(data_line), data_line.size(),
                  "data_dir: " + (daemon.dir / "other").string());
  write_text(daemon.dir / "pgwaitprof.yaml", changed);
  daemon.process->signal(SIGHUP);
  EXPECT_TRUE(
      eventually(10s, [&] { return daemon.value("pgwaitprof_up{target=\"second\"}") == 1.0; }));
  EXPECT_NE(daemon.process->log().find(
                "configuration changes that need a restart were not applied, keeping data_dir=" +
                (daemon.dir / "data").string()),
            std::string::npos)
      << daemon.process->log();
  EXPECT_TRUE(std::filesystem::exists(daemon.dir / "data" / "pgwaitprof.sock"));
  EXPECT_FALSE(std::filesystem::exists(daemon.dir / "other"));
}

TEST_F(DaemonTest, RoleWithoutPgMonitorGetsHintAndHiddenBackends) {
  ASSERT_EQ(
      psql("DROP ROLE IF EXISTS pgwaitprof_unprivileged; CREATE ROLE pgwaitprof_unprivileged LOGIN")
          .exit_code,
      0);
  const std::string dsn = "host=" + env("PGHOST") + " port=" + env("PGPORT") +
                          " user=pgwaitprof_unprivileged dbname=postgres";
  Daemon daemon("hidden", target_yaml("local", 100, "activity", dsn));
  auto load = pgbench_load(daemon.dir, {"-c", "2", "-R", kModestRate, "-T", "4"});
  EXPECT_TRUE(eventually(10s, [&] {
    return daemon.value("pgwaitprof_hidden_backends{target=\"local\"}").value_or(0) > 0;
  }));
  const std::string log = daemon.process->log();
  EXPECT_NE(log.find("GRANT pg_monitor TO \"pgwaitprof_unprivileged\""), std::string::npos) << log;
  load->wait(15s);
}

TEST_F(DaemonTest, BadConfigIsRejectedWithFileLineColumn) {
  auto dir = temp_dir("badconfig");
  write_text(dir / "bad.yaml", "listen: 127.0.0.1:1\ntargets:\n  - name: x\n    hz: 20000\n");
  auto result =
      engine::run_command({pgwaitprof_binary(), "daemon", "-c", (dir / "bad.yaml").string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("bad.yaml:4:9:"), std::string::npos) << result.output;
  EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
}

TEST_F(DaemonTest, PgWaitSamplingSourceFeedsTheSameMetrics) {
  Daemon daemon("waitsampling", target_yaml("local", 100, "pg_wait_sampling"));
  auto load = pgbench_load(daemon.dir, {"-c", "2", "-R", kModestRate, "-T", "5"});
  EXPECT_TRUE(eventually(10s, [&] {
    return daemon
               .value(
                   "pgwaitprof_wait_samples_total{target=\"local\",backend_type=\"client backend\"")
               .value_or(0) > 0;
  })) << daemon.metrics();
  const std::string exposition = daemon.metrics();
  EXPECT_EQ(metric(exposition,
                   "pgwaitprof_collector_success{target=\"local\",collector=\"pg_wait_sampling\"}"),
            1.0);
  EXPECT_GT(metric(exposition, "pgwaitprof_snapshots_total{target=\"local\"}").value_or(0), 0);
  load->wait(15s);
}

// The memory source in the daemon at its cap, under load: every tick taken or counted missed,
// the same series as activity, and the source named in pgwaitprof_sampler_info.
TEST_F(DaemonTest, MemorySourceSamplesAt10kHzUnderLoad) {
  Daemon daemon("memory", target_yaml("local", 10000, "memory"));
  ASSERT_TRUE(eventually(10s, [&] {
    return daemon.value("pgwaitprof_up{target=\"local\"}") == 1.0;
  })) << daemon.process->log();
  auto load = pgbench_load(daemon.dir, {"-c", "4", "-j", "2", "-T", "6"});
  std::this_thread::sleep_for(1s);
  const auto first = daemon.metrics();
  const auto started = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(4s);
  const auto second = daemon.metrics();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto delta = [&](const std::string& series) { return metric_delta(first, second, series); };
  const double taken = delta("pgwaitprof_snapshots_total{target=\"local\"}");
  const double missed = delta("pgwaitprof_missed_ticks_total{target=\"local\"}");
  // The sinks learn of missed ticks when the I/O thread takes its next batch, and up to 100 ms
  // of snapshots wait for it: under the sanitizers, beside the release suite, that is a few
  // hundred milliseconds of ticks not yet counted either way at a scrape.
  EXPECT_NEAR((taken + missed) / (10000 * seconds), 1.0, 0.15) << taken << " + " << missed;
  // Not a rate check (that is the perf suite's): under the sanitizers the program runs -O0.
  EXPECT_GT(taken / seconds, 1000) << daemon.process->log();
  EXPECT_GT(metric_sum(second,
                       "pgwaitprof_wait_samples_total{target=\"local\",backend_type=\"client "
                       "backend\",state=\"active\""),
            0);
  EXPECT_EQ(metric(second, "pgwaitprof_collector_success{target=\"local\",collector=\"memory\"}"),
            1.0);
  EXPECT_NE(second.find("source=\"memory\""), std::string::npos);
  // As root the reader runs in real time, and says so.
  if (::geteuid() == 0) {
    EXPECT_NE(daemon.process->log().find("scheduling=\"real time (SCHED_FIFO 1)\""),
              std::string::npos)
        << daemon.process->log();
  }
  load->wait(15s);
}

// One histogram series of an exposition: its buckets (le -> cumulative count), _sum and _count.
struct HistogramSeries {
  std::map<double, double> buckets;
  std::optional<double> sum, count;
};

// Every series of histogram `name`, by its labels without le.
std::map<std::string, HistogramSeries> histograms(const std::string& exposition,
                                                  const std::string& name) {
  std::map<std::string, HistogramSeries> found;
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with('#')) continue;
    const auto open = line.find('{');
    const auto close = line.rfind('}');
    if (open == std::string::npos || close == std::string::npos) continue;
    const std::string series = line.substr(0, open);
    std::string labels = line.substr(open + 1, close - open - 1);
    const double value = std::stod(line.substr(close + 2));
    if (series == name + "_bucket") {
      const auto le = labels.rfind(",le=\"");
      const double bound = std::stod(labels.substr(le + 5, labels.size() - le - 6));
      found[labels.substr(0, le)].buckets[bound] = value;
    } else if (series == name + "_sum") {
      found[labels].sum = value;
    } else if (series == name + "_count") {
      found[labels].count = value;
    }
  }
  return found;
}

// Valid exposition of a histogram: cumulative buckets ending at +Inf, which equals _count, and a
// _sum that the buckets allow (each wait between its bucket's bounds).
void expect_valid_histogram(const std::string& labels, const HistogramSeries& series) {
  ASSERT_TRUE(series.sum && series.count) << labels;
  ASSERT_FALSE(series.buckets.empty()) << labels;
  EXPECT_TRUE(std::isinf(series.buckets.rbegin()->first)) << labels;
  EXPECT_EQ(series.buckets.rbegin()->second, *series.count) << labels;
  double previous = 0, lowest = 0, highest = 0, below = 0;
  for (const auto& [bound, cumulative] : series.buckets) {
    const double in_bucket = cumulative - previous;
    EXPECT_GE(in_bucket, 0) << labels << " le=" << bound;
    if (in_bucket > 0) {
      highest += in_bucket * bound;
      lowest += in_bucket * below;
    }
    previous = cumulative;
    below = bound;
  }
  EXPECT_GE(*series.sum, lowest * (1 - 1e-9)) << labels;
  if (!std::isinf(highest)) {
    EXPECT_LE(*series.sum, highest * (1 + 1e-9)) << labels;
  }
}

class DaemonTraceTest : public DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    ASSERT_EQ(getuid(), 0u) << "the traced source's tests run as root, like CI";
  }
};

// `sessions` psql sessions at once, each running `SELECT pg_sleep(0.2)` `sleeps` times.
void sleep_in_sessions(const std::filesystem::path& dir, int sessions, int sleeps) {
  std::vector<std::unique_ptr<ChildProcess>> running;
  for (int session = 0; session < sessions; ++session) {
    std::vector<std::string> argv{base::find_executable("psql"), "-X", "-q", "-At"};
    for (int sleep = 0; sleep < sleeps; ++sleep) {
      argv.insert(argv.end(), {"-c", "SELECT pg_sleep(0.2)"});
    }
    argv.push_back(test_conninfo());
    running.push_back(
        std::make_unique<ChildProcess>(argv, dir / ("sleeps-" + std::to_string(session) + ".log")));
  }
  for (auto& session : running) EXPECT_EQ(session->wait(30s).value_or(-1), 0) << session->log();
}

// How far the histogram series `labels` grew from `before` to `after`: per bucket, and its sum.
HistogramSeries histogram_growth(const std::string& before, const std::string& after,
                                 const std::string& labels) {
  const auto then = histograms(before, "pgwaitprof_wait_duration_seconds");
  auto now = histograms(after, "pgwaitprof_wait_duration_seconds")[labels];
  const auto was = then.contains(labels) ? then.at(labels) : HistogramSeries{};
  for (auto& [bound, cumulative] : now.buckets) {
    if (was.buckets.contains(bound)) cumulative -= was.buckets.at(bound);
  }
  if (now.sum) *now.sum -= was.sum.value_or(0);
  if (now.count) *now.count -= was.count.value_or(0);
  return now;
}

// A daemon target of the traced source (issue 48) under pgbench: no samples or snapshots (its
// profiles count microseconds), the time per wait key and part, its waits, and the exact
// histogram of their durations, valid exposition. Four sessions sleep five times 0.2 s: 20
// PgSleep waits, all between 2^27 and 2^28 ns, 4 s of blocked time.
TEST_F(DaemonTraceTest, ExportsWaitTimeWaitsAndTheirExactDurations) {
  Daemon daemon("trace", target_yaml("traced", 1000, "trace"));
  ASSERT_TRUE(eventually(
      20s,
      [&] { return daemon.value("pgwaitprof_wait_seconds_total{target=\"traced\"").has_value(); }))
      << daemon.process->log() << daemon.metrics();
  auto load = pgbench_load(daemon.dir, {"-c", "2", "-j", "1", "-R", "200", "-T", "10"});
  const std::string sleep_histogram =
      "target=\"traced\",backend_type=\"client backend\",wait_event_type=\"Timeout\","
      "wait_event=\"PgSleep\"";
  std::this_thread::sleep_for(1s);
  const std::string before = daemon.metrics();
  constexpr int kSessions = 4, kSleeps = 5;
  constexpr double kWaits = kSessions * kSleeps, kSlept = kWaits * 0.2;
  sleep_in_sessions(daemon.dir, kSessions, kSleeps);
  // Every wait that ended is read within a read period (200 ms).
  ASSERT_TRUE(eventually(10s, [&] {
    return histogram_growth(before, daemon.metrics(), sleep_histogram).count.value_or(0) >= kWaits;
  })) << daemon.metrics();
  std::this_thread::sleep_for(500ms);
  const std::string after = daemon.metrics();
  load->wait(15s);

  EXPECT_FALSE(metric(after, "pgwaitprof_wait_samples_total{target=\"traced\"")) << after;
  EXPECT_FALSE(metric(after, "pgwaitprof_snapshots_total{target=\"traced\""));
  EXPECT_EQ(metric(after,
                   "pgwaitprof_sampler_info{target=\"traced\",source=\"trace\","
                   "requested=\"trace\",hz=\"1000\"}"),
            1.0)
      << after;
  for (const auto& [labels, series] : histograms(after, "pgwaitprof_wait_duration_seconds")) {
    expect_valid_histogram(labels, series);
  }
  const auto sleeps = histogram_growth(before, after, sleep_histogram);
  ASSERT_TRUE(sleeps.buckets.contains(0.134217728) && sleeps.buckets.contains(0.268435456))
      << after;
  EXPECT_EQ(sleeps.buckets.at(0.134217728), 0);
  EXPECT_EQ(sleeps.buckets.at(0.268435456), kWaits);
  EXPECT_EQ(sleeps.buckets.at(INFINITY), kWaits);
  EXPECT_EQ(sleeps.count.value_or(0), kWaits);
  EXPECT_NEAR(sleeps.sum.value_or(0), kSlept, kSlept * 0.05);

  // The counters: the sleeps' waits and blocked time (the sessions were active), and the time
  // pgbench's idle backends waited for a CPU after ClientRead.
  auto grown = [&](const std::string& series) {
    return metric_sum(after, series) - metric_sum(before, series);
  };
  const std::string sleep_key =
      "{target=\"traced\",backend_type=\"client backend\",state=\"active\","
      "wait_event_type=\"Timeout\",wait_event=\"PgSleep\"";
  EXPECT_EQ(grown("pgwaitprof_waits_total" + sleep_key + "}"), kWaits);
  EXPECT_NEAR(grown("pgwaitprof_wait_seconds_total" + sleep_key + ",part=\"blocked\"}"), kSlept,
              kSlept * 0.05);
  EXPECT_GT(grown("pgwaitprof_wait_seconds_total{target=\"traced\",backend_type=\"client "
                  "backend\",state=\"idle\",wait_event_type=\"Client\",wait_event=\"ClientRead\","
                  "part=\"runqueue\"}"),
            0)
      << after;
  EXPECT_GT(histogram_growth(before, after,
                             "target=\"traced\",backend_type=\"client backend\","
                             "wait_event_type=\"Client\",wait_event=\"ClientRead\"")
                .count.value_or(0),
            0)
      << after;

  write_text(daemon.dir / "metrics.txt", after);
  auto check = engine::run_command(
      {"/bin/sh", "-c", "promtool check metrics < " + (daemon.dir / "metrics.txt").string()});
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

}  // namespace
}  // namespace pgwaitprof::testing
