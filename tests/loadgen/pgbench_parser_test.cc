// pgbench output parsing: progress lines of PG 13-17, summaries, aborted clients, and garbage.
// Fixtures under tests/fixtures/pgbench/ are real pgbench 15.20 output (see the README there);
// lines written inline for other versions say where their format comes from.
#include "loadgen/pgbench_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/loadgen/pgbench_parser_fixture.h"

namespace pgwaitprof::loadgen {
namespace {

using namespace test_support;

TEST(PgbenchProgress, Pg15PlainLine) {
  // Real: pg15_tpcb_progress.stderr, line 2.
  auto point = loadgen::parse_progress_line(
      "progress: 1.0 s, 2173.0 tps, lat 0.907 ms stddev 0.247, 0 failed");
  ASSERT_TRUE(point);
  EXPECT_DOUBLE_EQ(point->elapsed.count(), 1.0);
  EXPECT_DOUBLE_EQ(point->tps, 2173.0);
  EXPECT_DOUBLE_EQ(point->latency_avg.count(), 0.907);
  EXPECT_DOUBLE_EQ(point->latency_stddev.count(), 0.247);
  EXPECT_EQ(point->failed, 0u);
  EXPECT_FALSE(point->lag);
  EXPECT_EQ(point->skipped, 0u);
}

TEST(PgbenchProgress, Pg15FixtureSkipsNonProgressLines) {
  auto points = progress_of(read_fixture("pg15_tpcb_progress.stderr"));
  ASSERT_EQ(points.size(), 5u);  // "starting vacuum...end." is not a progress line
  EXPECT_DOUBLE_EQ(points[0].elapsed.count(), 1.0);
  EXPECT_DOUBLE_EQ(points[4].elapsed.count(), 5.0);
  EXPECT_DOUBLE_EQ(points[3].tps, 2090.8);
  EXPECT_DOUBLE_EQ(points[3].latency_avg.count(), 0.954);
}

TEST(PgbenchProgress, Pg15ProgressTimestampIsUnixTime) {
  auto points = progress_of(read_fixture("pg15_progress_timestamp.stderr"));
  ASSERT_EQ(points.size(), 3u);
  EXPECT_DOUBLE_EQ(points[0].elapsed.count(), 1795983408.869);
  EXPECT_NEAR(points[1].elapsed.count() - points[0].elapsed.count(), 1.0, 1e-6);
  EXPECT_DOUBLE_EQ(points[2].tps, 1895.9);
}

TEST(PgbenchProgress, Pg15RateLimitedHasLag) {
  auto points = progress_of(read_fixture("pg15_rate.stderr"));
  ASSERT_EQ(points.size(), 2u);
  ASSERT_TRUE(points[0].lag);
  EXPECT_DOUBLE_EQ(points[0].lag->count(), 0.119);
  EXPECT_DOUBLE_EQ(points[1].tps, 495.0);
  EXPECT_EQ(points[1].skipped, 0u);
}

TEST(PgbenchProgress, Pg15LatencyLimitHasLagAndSkipped) {
  auto points = progress_of(read_fixture("pg15_rate_latency_limit.stderr"));
  ASSERT_EQ(points.size(), 3u);
  ASSERT_TRUE(points[1].lag);
  EXPECT_DOUBLE_EQ(points[1].lag->count(), 0.787);
  EXPECT_EQ(points[0].skipped, 3059u);
  EXPECT_EQ(points[1].skipped, 3236u);
  EXPECT_EQ(points[2].skipped, 3154u);
}

TEST(PgbenchProgress, Pg15FailuresAndRetries) {
  auto points = progress_of(read_fixture("pg15_serialization_retries.stderr"));
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].failed, 63u);
  EXPECT_EQ(points[1].failed, 68u);
  EXPECT_DOUBLE_EQ(points[2].tps, 5993.5);
  EXPECT_FALSE(points[2].lag);
}

TEST(PgbenchProgress, Pg15FailuresWithoutRetries) {
  auto points = progress_of(read_fixture("pg15_serialization_no_retries.stderr"));
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].failed, 951u);
  EXPECT_EQ(points[2].failed, 1009u);
}

TEST(PgbenchProgress, Pg15EmptyIntervalPrintsZeroLatency) {
  // pgbench 15 prints "0.0 tps, lat 0.000 ms stddev 0.000" for a second with no transaction
  // (a \sleep 1500 ms script); only older versions printed -nan.
  auto points = progress_of(read_fixture("pg15_empty_intervals.stderr"));
  ASSERT_EQ(points.size(), 6u);
  EXPECT_DOUBLE_EQ(points[0].tps, 0.0);
  EXPECT_DOUBLE_EQ(points[0].latency_avg.count(), 0.0);
  EXPECT_FALSE(std::isnan(points[0].latency_avg.count()));
  EXPECT_DOUBLE_EQ(points[1].tps, 1.0);
  EXPECT_DOUBLE_EQ(points[1].latency_avg.count(), 1501.127);
  // A report after the -T 5 deadline: pgbench waits for the last transaction to end.
  EXPECT_DOUBLE_EQ(points[5].elapsed.count(), 6.0);
}

TEST(PgbenchProgress, Pg15AbortInterleavedWithProgress) {
  auto points = progress_of(read_fixture("pg15_one_client_aborted.stderr"));
  ASSERT_EQ(points.size(), 3u);
  EXPECT_DOUBLE_EQ(points[0].tps, 10394.2);
}

// --- progress lines, other versions (reconstructed from pgbench.c format strings) ---

TEST(PgbenchProgress, Pg13And14PlainLine) {
  // Reconstructed from PG 13/14 printProgressReport:
  // "progress: %s s, %.1f tps, lat %.3f ms stddev %.3f" (no failures field before PG 15).
  auto point =
      loadgen::parse_progress_line("progress: 12.0 s, 7237.6 tps, lat 1.997 ms stddev 4.365");
  ASSERT_TRUE(point);
  EXPECT_DOUBLE_EQ(point->elapsed.count(), 12.0);
  EXPECT_DOUBLE_EQ(point->tps, 7237.6);
  EXPECT_DOUBLE_EQ(point->latency_avg.count(), 1.997);
  EXPECT_DOUBLE_EQ(point->latency_stddev.count(), 4.365);
  EXPECT_EQ(point->failed, 0u);
  EXPECT_FALSE(point->lag);
}

TEST(PgbenchProgress, Pg13And14LagAndSkipped) {
  // Reconstructed from PG 13/14: ", lag %.3f ms" with -R, then ", %lld skipped" with -L too.
  auto lag = loadgen::parse_progress_line(
      "progress: 3.0 s, 499.0 tps, lat 0.810 ms stddev 0.301, lag 0.102 ms");
  ASSERT_TRUE(lag);
  ASSERT_TRUE(lag->lag);
  EXPECT_DOUBLE_EQ(lag->lag->count(), 0.102);
  auto skipped = loadgen::parse_progress_line(
      "progress: 4.0 s, 1842.8 tps, lat 1.849 ms stddev 0.376, lag 0.777 ms, 5 skipped");
  ASSERT_TRUE(skipped);
  ASSERT_TRUE(skipped->lag);
  EXPECT_DOUBLE_EQ(skipped->lag->count(), 0.777);
  EXPECT_EQ(skipped->skipped, 5u);
}

TEST(PgbenchProgress, Pg13ProgressTimestamp) {
  // Reconstructed from PG 13/14: with --progress-timestamp tbuf is "%.3f" of Unix time.
  auto point = loadgen::parse_progress_line(
      "progress: 1609459200.123 s, 100.0 tps, lat 9.990 ms stddev 1.000");
  ASSERT_TRUE(point);
  EXPECT_DOUBLE_EQ(point->elapsed.count(), 1609459200.123);
}

TEST(PgbenchProgress, OldNanLatencyBecomesNan) {
  // Reconstructed from the mailing-list timeline in DESIGN.md (glibc printf of 0/0 before
  // pgbench guarded empty intervals).
  auto point = loadgen::parse_progress_line("progress: 250.0 s, 0.0 tps, lat -nan ms stddev -nan");
  ASSERT_TRUE(point);
  EXPECT_DOUBLE_EQ(point->tps, 0.0);
  EXPECT_TRUE(std::isnan(point->latency_avg.count()));
  EXPECT_TRUE(std::isnan(point->latency_stddev.count()));
  auto with_lag =
      loadgen::parse_progress_line("progress: 7.0 s, 0.0 tps, lat nan ms stddev nan, lag nan ms");
  ASSERT_TRUE(with_lag);
  ASSERT_TRUE(with_lag->lag);
  EXPECT_TRUE(std::isnan(with_lag->lag->count()));
}

TEST(PgbenchProgress, Pg16And17FullLine) {
  // Reconstructed from PG 16/17 (and current master) printProgressReport, whose format is
  // the same as PG 15's: failed always, lag/skipped with -R/-L, retried/retries when
  // --max-tries is not 1.
  auto point = loadgen::parse_progress_line(
      "progress: 9.0 s, 812.3 tps, lat 2.460 ms stddev 1.020, 7 failed, lag 0.050 ms, 2 skipped, "
      "31 retried, 40 retries");
  ASSERT_TRUE(point);
  EXPECT_DOUBLE_EQ(point->tps, 812.3);
  EXPECT_EQ(point->failed, 7u);
  ASSERT_TRUE(point->lag);
  EXPECT_DOUBLE_EQ(point->lag->count(), 0.050);
  EXPECT_EQ(point->skipped, 2u);
}

TEST(PgbenchProgress, TrailingCarriageReturnAndNewlineAreIgnored) {
  auto point = loadgen::parse_progress_line(
      "progress: 2.0 s, 10.0 tps, lat 1.000 ms stddev 0.100, 1 failed\r\n");
  ASSERT_TRUE(point);
  EXPECT_EQ(point->failed, 1u);
}

TEST(PgbenchProgress, RejectsOtherLinesAndMalformedOnes) {
  const std::vector<std::string> rejected = {
      "",
      "starting vacuum...end.",
      "progress:",
      "progress: ",
      "progress: 1.0 s",
      "progress: 1.0 s, 2173.0 tps",
      "progress: 1.0 s, 2173.0 tps, lat 0.907 ms",
      "progress: 1.0 s, 2173.0 tps, lat 0.907 ms stddev ",
      "progress: 1.0 s, 2173.0 tps, lat 0.907 ms stddev 0.247,",
      "progress: 1.0 s, 2173.0 tps, lat 0.907 ms stddev 0.247, 0 fai",
      "progress: 1.0 s, 2173.0 tps, lat 0.907 ms stddev 0.247, lag 0.1",
      "progress: 1.0 s, 2173.0 tps, lat 0.907 ms stddev 0.247, -1 failed",
      "progress: 1.0 s, 2173.0 tps, lat 0.907 ms stddev 0.247, 0 failed, 3 widgets",
      "progress: 1,0 s, 2173,0 tps, lat 0,907 ms stddev 0,247",  // a decimal-comma locale
      "progress: x s, 2173.0 tps, lat 0.907 ms stddev 0.247",
      "progress: 1.0 s, inf tps, lat 0.907 ms stddev 0.247",
      "progress: -1.0 s, 10.0 tps, lat 0.907 ms stddev 0.247",
      "progress: 1.0s, 10.0 tps, lat 0.907 ms stddev 0.247",
      " progress: 1.0 s, 10.0 tps, lat 0.907 ms stddev 0.247",
      "tps = 2180.759046 (without initial connection time)",
  };
  for (const std::string& line : rejected) {
    EXPECT_FALSE(loadgen::parse_progress_line(line)) << "accepted: \"" << line << "\"";
  }
}

// --- summaries, PG 15 (real output) ---

}  // namespace
}  // namespace pgwaitprof::loadgen
