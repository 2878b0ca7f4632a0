// sysbench as a load generator, on strings and vectors: its interval reports and summary parsed
// from the real output of sysbench 1.0.20 (Debian bookworm) against PostgreSQL 15
// (fixtures/sysbench/), and its command line: what pgwaitprof adds and what it leaves alone.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "loadgen/loadgen_command.h"
#include "loadgen/sysbench_parser.h"

namespace pgwaitprof::loadgen {
namespace {

using Args = std::vector<std::string>;

std::string fixture(const std::string& name) {
  std::ifstream file(std::string(PGWAITPROF_FIXTURES) + "/sysbench/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(SysbenchProgress, AnIntervalReport) {
  const auto progress = parse_sysbench_progress(
      "[ 2s ] thds: 2 tps: 208.62 qps: 4177.37 (r/w/o: 2921.67/835.47/420.23) lat (ms,95%): "
      "23.10 err/s: 1.00 reconn/s: 0.00",
      1);
  ASSERT_TRUE(progress);
  EXPECT_DOUBLE_EQ(progress->elapsed.count(), 2);
  EXPECT_DOUBLE_EQ(progress->tps, 208.62);
  EXPECT_DOUBLE_EQ(*progress->qps, 4177.37);
  EXPECT_DOUBLE_EQ(progress->latency_percentile, 95);
  EXPECT_DOUBLE_EQ(progress->latency_at_percentile->count(), 23.10);
  EXPECT_EQ(progress->failed, 1u);
  EXPECT_TRUE(std::isnan(progress->latency_avg.count()));
}

TEST(SysbenchProgress, OtherLinesAreNotReports) {
  EXPECT_FALSE(parse_sysbench_progress("Threads started!", 1));
  EXPECT_FALSE(parse_sysbench_progress("progress: 1.0 s, 100.0 tps, lat 1.0 ms stddev 0.1", 1));
  EXPECT_FALSE(parse_sysbench_progress("[ 1s ] thds: 2", 1));
  EXPECT_FALSE(parse_sysbench_progress("", 1));
}

TEST(SysbenchProgress, EveryReportOfARealRun) {
  const auto output = fixture("oltp_read_write_run.txt");
  std::istringstream lines(output);
  std::vector<double> tps;
  for (std::string line; std::getline(lines, line);) {
    if (auto progress = parse_sysbench_progress(line, 1)) tps.push_back(progress->tps);
  }
  EXPECT_EQ(tps, (std::vector<double>{191.64, 208.62}));
}

TEST(SysbenchSummary, TheSummaryOfARealRun) {
  const auto summary =
      parse_sysbench_summary(fixture("oltp_read_write_run.txt"), "oltp_read_write");
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->transaction_type, "sysbench oltp_read_write");
  EXPECT_EQ(summary->clients, 2);
  EXPECT_EQ(summary->threads, 2);
  EXPECT_EQ(summary->transactions, 694u);
  EXPECT_DOUBLE_EQ(summary->tps, 230.99);
  EXPECT_DOUBLE_EQ(*summary->qps, 4637.80);
  EXPECT_EQ(summary->failed, 3u);
  EXPECT_DOUBLE_EQ(summary->duration->count(), 3.0040);
  EXPECT_DOUBLE_EQ(summary->latency_avg.count(), 8.64);
  EXPECT_DOUBLE_EQ(summary->latency_percentile, 95);
  EXPECT_DOUBLE_EQ(summary->latency_at_percentile->count(), 23.10);
}

TEST(SysbenchSummary, NoneWithoutTheStatistics) {
  EXPECT_FALSE(parse_sysbench_summary("Creating table 'sbtest1'...\n", "oltp_read_write"));
  EXPECT_FALSE(parse_sysbench_summary(
      "FATAL: invalid database driver name: 'pgsql'\nFATAL: failed to initialize database "
      "driver!\n",
      "oltp_read_write"));
}

TargetAddress target() { return {"/tmp/sock", "5433", "bench", "bench_db", "secret"}; }

TEST(SysbenchCommand, TheTargetTheDriverTheReportsAndTheStepAdded) {
  const auto command =
      build_sysbench_command("/usr/bin/sysbench", {"oltp_read_write", "--threads=4", "--time=10"},
                             target(), base::Seconds(2));
  EXPECT_EQ(command.argv,
            (Args{"/usr/bin/sysbench", "oltp_read_write", "--threads=4", "--time=10",
                  "--db-driver=pgsql", "--pgsql-host=/tmp/sock", "--pgsql-port=5433",
                  "--pgsql-user=bench", "--pgsql-db=bench_db", "--report-interval=2", "run"}));
  EXPECT_EQ(command.clients, 4);
  EXPECT_EQ(command.interval, base::Seconds(2));
  // The password only in the child's environment.
  for (const auto& word : command.argv) EXPECT_EQ(word.find("secret"), std::string::npos);
  EXPECT_EQ(command.environment, (Args{"PGPASSWORD=secret"}));
  EXPECT_EQ(command.display_argv.front(), "sysbench");
}

TEST(SysbenchCommand, WhatTheUserGaveIsKept) {
  const auto command = build_sysbench_command(
      "sysbench",
      {"oltp_read_only", "--db-driver=pgsql", "--pgsql-db=other", "--report-interval=5", "run"},
      target(), base::Seconds(1));
  EXPECT_EQ(command.argv,
            (Args{"sysbench", "oltp_read_only", "--db-driver=pgsql", "--pgsql-db=other",
                  "--report-interval=5", "run", "--pgsql-host=/tmp/sock", "--pgsql-port=5433",
                  "--pgsql-user=bench"}));
  EXPECT_EQ(command.interval, base::Seconds(5));
  EXPECT_EQ(command.clients, 1);
}

TEST(SysbenchCommand, AStepReplacesTheOneGiven) {
  const auto prepare = build_sysbench_command("sysbench", {"oltp_read_write", "--tables=1", "run"},
                                              {}, base::Seconds(1), "prepare");
  EXPECT_EQ(prepare.argv,
            (Args{"sysbench", "oltp_read_write", "--tables=1", "--db-driver=pgsql", "prepare"}));
  EXPECT_EQ(sysbench_step({"oltp_read_write", "cleanup"}), "cleanup");
  EXPECT_EQ(sysbench_step({"oltp_read_write"}), std::nullopt);
}

TEST(AnyCommand, TheArgvAsGivenAndTheTargetInPgVariables) {
  const auto command =
      build_any_command("/usr/local/bin/load.sh", {"load.sh", "-c", "3"}, target());
  EXPECT_EQ(command.argv, (Args{"/usr/local/bin/load.sh", "-c", "3"}));
  EXPECT_EQ(command.display_argv, (Args{"load.sh", "-c", "3"}));
  EXPECT_EQ(command.environment, (Args{"PGHOST=/tmp/sock", "PGPORT=5433", "PGUSER=bench",
                                       "PGDATABASE=bench_db", "PGPASSWORD=secret"}));
  EXPECT_EQ(command.clients, 0);
}

TEST(LoadgenKind, NamesAUserGives) {
  EXPECT_EQ(parse_loadgen_kind("pgbench"), LoadgenKind::kPgbench);
  EXPECT_EQ(parse_loadgen_kind("sysbench"), LoadgenKind::kSysbench);
  EXPECT_EQ(parse_loadgen_kind("command"), LoadgenKind::kCommand);
  EXPECT_EQ(parse_loadgen_kind("none"), std::nullopt);
  EXPECT_EQ(parse_loadgen_kind("hammerdb"), std::nullopt);
  EXPECT_EQ(
      describe_loadgen_failure(1, "FATAL: invalid database driver name: 'pgsql'\n", "sysbench"),
      "sysbench exited with code 1: FATAL: invalid database driver name: 'pgsql'");
}

}  // namespace
}  // namespace pgwaitprof::loadgen
