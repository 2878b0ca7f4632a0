// The streaming reader of pgbench's per-transaction logs, on synthetic multi-thread logs (exact
// percentiles by sorting) and on real pgbench 15 logs under tests/fixtures/pgbench/txlog/ (see
// the README there).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "loadgen/pgbench_log.h"
#include "loadgen/pgbench_parser.h"
#include "tests/loadgen/pgbench_log_fixture.h"

namespace pgwaitprof::loadgen {
namespace {

using namespace test_support;

// ---- the reader on synthetic logs --------------------------------------------------------

struct Synthetic {
  int client = 0;
  SysMicroseconds end;
  loadgen::TransactionStatus status = loadgen::TransactionStatus::completed;
  std::int64_t latency_us = 0;
  std::int64_t lag_us = 0;
  std::uint32_t retries = 0;
};

std::string line_of(const Synthetic& tx, std::int64_t number) {
  const std::int64_t end_us = tx.end.time_since_epoch().count();
  std::ostringstream line;
  line << tx.client << ' ' << number << ' ';
  switch (tx.status) {
    case loadgen::TransactionStatus::completed:
      line << tx.latency_us;
      break;
    case loadgen::TransactionStatus::failed:
      line << "serialization";
      break;
    case loadgen::TransactionStatus::skipped:
      line << "skipped";
      break;
  }
  line << ' ' << 0 << ' ' << end_us / 1'000'000 << ' ' << end_us % 1'000'000 << ' ' << tx.lag_us
       << ' ' << tx.retries << '\n';
  return line.str();
}

// What the reader must find, computed the obvious way: every interval's latencies sorted.
struct Expected {
  std::map<std::int64_t, std::vector<std::int64_t>> latencies;
  std::map<std::int64_t, model::LatencySummary> counts;
  std::vector<std::int64_t> all;
  model::LatencySummary run;
  std::uint64_t outside = 0;
};

Expected expect(const std::vector<Synthetic>& transactions, SysMicroseconds start,
                microseconds interval) {
  Expected expected;
  for (const auto& tx : transactions) {
    const std::int64_t offset = (tx.end - start).count();
    const bool inside = offset >= 0;
    const std::int64_t index = inside ? offset / interval.count() : -1;
    if (!inside) ++expected.outside;
    auto tally = [&](model::LatencySummary& summary) {
      if (tx.status == loadgen::TransactionStatus::failed) ++summary.failed;
      if (tx.status == loadgen::TransactionStatus::skipped) ++summary.skipped;
      summary.retries += tx.retries;
    };
    tally(expected.run);
    if (inside) tally(expected.counts[index]);
    if (tx.status != loadgen::TransactionStatus::completed) continue;
    expected.all.push_back(tx.latency_us);
    if (inside) expected.latencies[index].push_back(tx.latency_us);
  }
  return expected;
}

double exact_ms(std::vector<std::int64_t> values, double q) {
  std::sort(values.begin(), values.end());
  return static_cast<double>(values[model::nearest_rank(q, values.size()) - 1]) / 1000.0;
}

void expect_summary(const model::LatencySummary& summary, const std::vector<std::int64_t>& values,
                    const model::LatencySummary& counts, const std::string& what) {
  EXPECT_EQ(summary.failed, counts.failed) << what;
  EXPECT_EQ(summary.skipped, counts.skipped) << what;
  EXPECT_EQ(summary.retries, counts.retries) << what;
  EXPECT_EQ(summary.count, values.size()) << what;
  if (values.empty()) {
    EXPECT_TRUE(std::isnan(summary.p50.count())) << what;
    EXPECT_TRUE(std::isnan(summary.max.count())) << what;
    EXPECT_TRUE(std::isnan(summary.mean.count())) << what;
    return;
  }
  const double bound = model::LatencyHistogram::relative_error_bound();
  for (const auto& [q, reported] :
       {std::pair{50.0, summary.p50.count()}, std::pair{95.0, summary.p95.count()},
        std::pair{99.0, summary.p99.count()}}) {
    const double exact = exact_ms(values, q);
    EXPECT_LE(std::abs(reported - exact), exact * bound) << what << " p" << q;
  }
  EXPECT_DOUBLE_EQ(summary.max.count(), exact_ms(values, 100)) << what;
  EXPECT_DOUBLE_EQ(summary.min.count(), exact_ms(values, 0)) << what;
  double sum = 0;
  for (const auto value : values) sum += static_cast<double>(value);
  EXPECT_NEAR(summary.mean.count(), sum / static_cast<double>(values.size()) / 1000.0, 1e-9)
      << what;
}

void expect_timeline(const model::LatencyTimeline& timeline, const Expected& expected,
                     std::size_t intervals) {
  ASSERT_EQ(timeline.intervals.size(), intervals);
  for (std::size_t index = 0; index < intervals; ++index) {
    const auto key = static_cast<std::int64_t>(index);
    const auto found = expected.latencies.find(key);
    const auto counts = expected.counts.find(key);
    expect_summary(timeline.intervals[index],
                   found == expected.latencies.end() ? std::vector<std::int64_t>{} : found->second,
                   counts == expected.counts.end() ? model::LatencySummary{} : counts->second,
                   "interval " + std::to_string(index));
  }
  expect_summary(timeline.run, expected.all, expected.run, "run");
  EXPECT_EQ(timeline.outside_intervals, expected.outside);
}

// Three threads' logs over 7 s, each file in end-time order as pgbench writes it: the latency
// distribution changes every second (median 1 ms, 2 ms, ...), interval 3 is a stall with no
// transaction at all, some transactions end before the run's start, a few fail or are skipped.
class SyntheticLogs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 random(42);
    std::uniform_int_distribution<std::int64_t> gap(0, 4000);
    std::uniform_real_distribution<double> unit(0, 1);
    for (int thread = 0; thread < 3; ++thread) {
      std::vector<Synthetic> file;
      SysMicroseconds end = start_ - milliseconds(200) + microseconds(thread * 333);
      while (end < start_ + milliseconds(6800)) {
        end += microseconds(gap(random));
        if (end >= start_ + seconds(3) && end < start_ + seconds(4)) end = start_ + seconds(4);
        const std::int64_t offset_s = std::max<std::int64_t>(0, (end - start_).count() / 1'000'000);
        std::lognormal_distribution<double> latency(
            std::log(1000.0 * static_cast<double>(1 + offset_s)), 0.8);
        Synthetic tx;
        tx.client = thread * 2 + static_cast<int>(file.size() % 2);
        tx.end = end;
        const double draw = unit(random);
        tx.status = draw < 0.02   ? loadgen::TransactionStatus::failed
                    : draw < 0.03 ? loadgen::TransactionStatus::skipped
                                  : loadgen::TransactionStatus::completed;
        if (tx.status == loadgen::TransactionStatus::completed) {
          tx.latency_us = std::llround(latency(random));
          tx.lag_us = gap(random) / 10;
        }
        tx.retries = draw < 0.1 ? 1 + static_cast<std::uint32_t>(draw * 30) : 0;
        file.push_back(tx);
        transactions_.push_back(tx);
      }
      std::string text;
      for (std::size_t index = 0; index < file.size(); ++index) {
        text += line_of(file[index], static_cast<std::int64_t>(index + 1));
        ++lines_;
        if (thread == 1 && index == 100) {
          text += "this is not a pgbench line\n";
          ++lines_;
        }
      }
      if (thread == 2) {
        text += "5 9999 12";  // pgbench stopped while writing: no newline
        ++lines_;
      }
      const fs::path path =
          dir_.path() /
          (thread == 0 ? "pgbench_log.4242" : "pgbench_log.4242." + std::to_string(thread));
      write_file(path, text);
      files_.push_back(path);
    }
  }

  loadgen::LatencyTimelineOptions options(microseconds interval) const {
    loadgen::LatencyTimelineOptions result;
    result.start = std::chrono::system_clock::time_point(start_.time_since_epoch());
    result.interval = interval;
    result.columns = kBoth;
    return result;
  }

  TempDir dir_;
  // Not aligned to a second: intervals follow the run's start, not the wall clock.
  const SysMicroseconds start_ = at(1'700'000'000, 250'000);
  std::vector<Synthetic> transactions_;
  std::vector<fs::path> files_;
  std::uint64_t lines_ = 0;
};

TEST_F(SyntheticLogs, PerSecondIntervalsMatchSorting) {
  const auto timeline = loadgen::read_latency_timeline(files_, options(seconds(1)));
  EXPECT_TRUE(timeline.errors.empty());
  EXPECT_EQ(timeline.lines, lines_);
  EXPECT_EQ(timeline.unparsable_lines, 2u);
  EXPECT_EQ(timeline.interval, seconds(1));
  const Expected expected = expect(transactions_, start_, seconds(1));
  ASSERT_GT(expected.outside, 0u);
  expect_timeline(timeline, expected, 7);
  EXPECT_EQ(timeline.intervals[3].count, 0u);  // the stall is there, empty
  EXPECT_GT(timeline.intervals[6].p50.count(), timeline.intervals[0].p50.count() * 4);
}

TEST_F(SyntheticLogs, OtherIntervalLength) {
  const auto timeline = loadgen::read_latency_timeline(files_, options(milliseconds(250)));
  expect_timeline(timeline, expect(transactions_, start_, milliseconds(250)), 28);
}

TEST_F(SyntheticLogs, SmallBufferGivesTheSameResult) {
  auto small = options(seconds(1));
  small.buffer_bytes = 256;  // lines cross buffer boundaries all the time
  const auto timeline = loadgen::read_latency_timeline(files_, small);
  EXPECT_EQ(timeline.lines, lines_);
  EXPECT_EQ(timeline.unparsable_lines, 2u);
  expect_timeline(timeline, expect(transactions_, start_, seconds(1)), 7);
}

TEST_F(SyntheticLogs, SamplingRateIsRecordedNotApplied) {
  auto sampled = options(seconds(1));
  sampled.sampling_rate = 0.1;
  const auto timeline = loadgen::read_latency_timeline(files_, sampled);
  EXPECT_DOUBLE_EQ(timeline.sampling_rate, 0.1);
  expect_timeline(timeline, expect(transactions_, start_, seconds(1)), 7);
}

TEST_F(SyntheticLogs, MissingFileIsReportedOthersRead) {
  auto files = files_;
  files.push_back(dir_.path() / "pgbench_log.4242.9");
  const auto timeline = loadgen::read_latency_timeline(files, options(seconds(1)));
  ASSERT_EQ(timeline.errors.size(), 1u);
  EXPECT_NE(timeline.errors[0].find("could not open file"), std::string::npos);
  EXPECT_NE(timeline.errors[0].find("pgbench_log.4242.9"), std::string::npos);
  expect_timeline(timeline, expect(transactions_, start_, seconds(1)), 7);
}

TEST(ReadLatencyTimeline, OutOfOrderWithinTheWindowStillCounts) {
  TempDir dir;
  const auto start = at(1'700'000'000, 0);
  // Within one file: 5.2 s, then back to 3.5 s (kept: interval 3 is still open), then back to
  // 0.5 s (interval 0 was closed when 5.2 s arrived: counted in the run only).
  write_file(dir.path() / "pgbench_log.1",
             "0 1 1000 0 1700000000 100000\n"
             "0 2 2000 0 1700000005 200000\n"
             "0 3 3000 0 1700000003 500000\n"
             "0 4 4000 0 1700000000 500000\n");
  loadgen::LatencyTimelineOptions options;
  options.start = std::chrono::system_clock::time_point(start.time_since_epoch());
  const auto timeline = loadgen::read_latency_timeline({dir.path() / "pgbench_log.1"}, options);
  ASSERT_EQ(timeline.intervals.size(), 6u);
  EXPECT_EQ(timeline.intervals[0].count, 1u);
  EXPECT_DOUBLE_EQ(timeline.intervals[0].max.count(), 1.0);
  EXPECT_EQ(timeline.intervals[3].count, 1u);
  EXPECT_DOUBLE_EQ(timeline.intervals[3].max.count(), 3.0);
  EXPECT_EQ(timeline.intervals[5].count, 1u);
  EXPECT_EQ(timeline.outside_intervals, 1u);
  EXPECT_EQ(timeline.run.count, 4u);
  EXPECT_DOUBLE_EQ(timeline.run.max.count(), 4.0);
}

TEST(ReadLatencyTimeline, FarFutureTimestampDoesNotAllocateIntervals) {
  TempDir dir;
  write_file(dir.path() / "pgbench_log.1",
             "0 1 1000 0 1700000000 100000\n"
             "0 2 2000 0 1700090000 0\n");
  loadgen::LatencyTimelineOptions options;
  options.start = std::chrono::system_clock::time_point(seconds(1'700'000'000));
  options.max_intervals = 60;
  const auto timeline = loadgen::read_latency_timeline({dir.path() / "pgbench_log.1"}, options);
  EXPECT_EQ(timeline.intervals.size(), 1u);
  EXPECT_EQ(timeline.outside_intervals, 1u);
  EXPECT_EQ(timeline.run.count, 2u);
}

TEST(ReadLatencyTimeline, OverlongLineIsOneUnparsableLine) {
  TempDir dir;
  write_file(
      dir.path() / "pgbench_log.1",
      std::string(1000, 'x') + "\n" + "0 1 1000 0 1700000000 100000\n" + std::string(700, 'y'));
  loadgen::LatencyTimelineOptions options;
  options.start = std::chrono::system_clock::time_point(seconds(1'700'000'000));
  options.buffer_bytes = 256;
  const auto timeline = loadgen::read_latency_timeline({dir.path() / "pgbench_log.1"}, options);
  EXPECT_EQ(timeline.lines, 3u);
  EXPECT_EQ(timeline.unparsable_lines, 2u);
  EXPECT_EQ(timeline.run.count, 1u);
}

TEST(ReadLatencyTimeline, NoFilesAndBadInterval) {
  loadgen::LatencyTimelineOptions options;
  const auto timeline = loadgen::read_latency_timeline({}, options);
  EXPECT_TRUE(timeline.intervals.empty());
  EXPECT_EQ(timeline.run.count, 0u);
  EXPECT_TRUE(std::isnan(timeline.run.p99.count()));
  options.interval = microseconds(0);
  EXPECT_THROW(loadgen::read_latency_timeline({}, options), std::invalid_argument);
}

// ---- real pgbench 15 logs ----------------------------------------------------------------

std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file) << "missing fixture " << path;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::uint64_t stdout_number(const std::string& text, const std::string& label) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(label + ": ([0-9]+)"))) return 0;
  return std::stoull(match[1]);
}

struct RealCapture {
  std::string name;
  loadgen::LogColumns columns;
};

class RealLogs : public ::testing::TestWithParam<RealCapture> {};

TEST_P(RealLogs, EveryLineParsesAndTheMeanIsPgbenchs) {
  const auto& capture = GetParam();
  const fs::path dir = fs::path(PGWAITPROF_FIXTURES) / "pgbench" / "txlog" / capture.name;
  std::error_code error;
  const auto files = loadgen::list_log_files(dir / "pgbench_log", error);
  ASSERT_FALSE(error) << error.message();
  ASSERT_EQ(files.size(), 2u);  // -j 2: one file per thread, same pgbench pid
  EXPECT_EQ(files[0].pid, files[1].pid);
  EXPECT_EQ(files[0].thread, 0);
  EXPECT_EQ(files[1].thread, 1);

  // The run's start: the earliest transaction start (end - latency) in the logs.
  std::uint64_t lines = 0;
  std::uint64_t serialization = 0;
  std::uint64_t deadlock = 0;
  auto start = SysMicroseconds::max();
  for (const auto& file : files) {
    std::istringstream text(read_text(file.path));
    for (std::string line; std::getline(text, line);) {
      ++lines;
      const auto transaction = loadgen::parse_log_line(line, capture.columns);
      ASSERT_TRUE(transaction) << file.path << ": " << line;
      start = std::min(start, transaction->end - transaction->latency);
      serialization += transaction->cause == loadgen::FailureCause::serialization;
      deadlock += transaction->cause == loadgen::FailureCause::deadlock;
    }
  }

  loadgen::LatencyTimelineOptions options;
  options.start = std::chrono::system_clock::time_point(start.time_since_epoch());
  options.columns = capture.columns;
  const auto timeline = loadgen::read_latency_timeline(loadgen::paths_of(files), options);
  EXPECT_TRUE(timeline.errors.empty());
  EXPECT_EQ(timeline.unparsable_lines, 0u);
  EXPECT_EQ(timeline.lines, lines);
  EXPECT_EQ(timeline.outside_intervals, 0u);
  EXPECT_EQ(timeline.run.count + timeline.run.failed + timeline.run.skipped, lines);

  // -T 3 from the first transaction's start: intervals 0..3 (the last one partial).
  EXPECT_GE(timeline.intervals.size(), 3u);
  EXPECT_LE(timeline.intervals.size(), 4u);
  std::uint64_t in_intervals = 0;
  for (const auto& interval : timeline.intervals) {
    in_intervals += interval.count + interval.failed + interval.skipped;
    if (interval.count == 0) continue;
    EXPECT_LE(interval.min.count(), interval.p50.count());
    EXPECT_LE(interval.p50.count(), interval.p95.count());
    EXPECT_LE(interval.p95.count(), interval.p99.count());
    EXPECT_LE(interval.p99.count(), interval.max.count());
  }
  EXPECT_EQ(in_intervals, lines);
  const auto& run = timeline.run;
  EXPECT_LE(run.p50.count(), run.p95.count());
  EXPECT_LE(run.p95.count(), run.p99.count());
  EXPECT_LE(run.p99.count(), run.max.count());

  // Against what pgbench printed for the same run (stdout kept with the logs).
  const std::string output = read_text(dir / "stdout");
  const model::LoadgenSummary summary = loadgen::parse_summary(output);
  EXPECT_EQ(run.count, summary.transactions);
  EXPECT_EQ(run.failed, summary.failed);
  EXPECT_EQ(run.skipped, stdout_number(output, "number of transactions skipped"));
  EXPECT_EQ(run.retries, stdout_number(output, "total number of retries"));
  EXPECT_EQ(serialization, stdout_number(output, "number of serialization failures"));
  EXPECT_EQ(deadlock, stdout_number(output, "number of deadlock failures"));
  // pgbench prints the mean to 3 decimals from the same (unrounded) latencies: 0.1 % or better.
  ASSERT_GT(summary.latency_avg.count(), 0);
  EXPECT_NEAR(run.mean.count(), summary.latency_avg.count(), summary.latency_avg.count() * 0.001)
      << capture.name;
}

INSTANTIATE_TEST_SUITE_P(Pg15, RealLogs,
                         ::testing::Values(RealCapture{"pg15_tpcb", kPlain},
                                           RealCapture{"pg15_rate_latency_limit", kLag},
                                           RealCapture{"pg15_failures_retries", kRetries}),
                         [](const auto& info) { return info.param.name; });

TEST(RealLogs, RateLogHasLagAndSkips) {
  const fs::path dir = fs::path(PGWAITPROF_FIXTURES) / "pgbench/txlog/pg15_rate_latency_limit";
  std::error_code error;
  const auto files = loadgen::list_log_files(dir / "pgbench_log", error);
  ASSERT_EQ(files.size(), 2u);
  std::istringstream text(read_text(files[0].path));
  std::uint64_t with_lag = 0;
  for (std::string line; std::getline(text, line);) {
    const auto transaction = loadgen::parse_log_line(line, kLag);
    ASSERT_TRUE(transaction);
    ASSERT_TRUE(transaction->schedule_lag);
    with_lag += transaction->schedule_lag->count() > 0;
  }
  EXPECT_GT(with_lag, 0u);
  // Read as if it had no lag column, every line is rejected: the columns are not guessed.
  loadgen::LatencyTimelineOptions options;
  const auto wrong = loadgen::read_latency_timeline(loadgen::paths_of(files), options);
  EXPECT_EQ(wrong.unparsable_lines, wrong.lines);
  EXPECT_GT(wrong.lines, 0u);
}

}  // namespace
}  // namespace pgwaitprof::loadgen
