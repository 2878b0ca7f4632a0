// pgbench per-transaction logs: every line format of PG 13-17, the file naming and the argument
// scan (the streaming reader is tested in pgbench_log_read_test.cc).
#include "loadgen/pgbench_log.h"

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

#include "loadgen/pgbench_parser.h"
#include "tests/loadgen/pgbench_log_fixture.h"

namespace pgwaitprof::loadgen {
namespace {

using namespace test_support;

TEST(ParseLogLine, Plain) {
  // doLog(), PG 14-17: "%d " INT64_FORMAT " %.0f %d " INT64_FORMAT " " INT64_FORMAT
  // (PG 13: "%d " INT64_FORMAT " %.0f %d %ld %ld", the same text).
  const auto transaction = loadgen::parse_log_line("0 1 5859 0 1796107150 187638", kPlain);
  ASSERT_TRUE(transaction);
  EXPECT_EQ(transaction->client, 0);
  EXPECT_EQ(transaction->transaction_no, 1);
  EXPECT_EQ(transaction->status, loadgen::TransactionStatus::completed);
  EXPECT_EQ(transaction->cause, loadgen::FailureCause::none);
  EXPECT_EQ(transaction->latency, microseconds(5859));
  EXPECT_EQ(transaction->script, 0);
  EXPECT_EQ(transaction->end, at(1796107150, 187638));
  EXPECT_FALSE(transaction->schedule_lag);
  EXPECT_FALSE(transaction->retries);
}

TEST(ParseLogLine, NewlineAndCarriageReturnAreIgnored) {
  const auto transaction = loadgen::parse_log_line("12 345678 42 3 1700000000 999999\r\n", kPlain);
  ASSERT_TRUE(transaction);
  EXPECT_EQ(transaction->client, 12);
  EXPECT_EQ(transaction->transaction_no, 345678);
  EXPECT_EQ(transaction->script, 3);
  EXPECT_EQ(transaction->end, at(1700000000, 999999));
}

TEST(ParseLogLine, ScheduleLagWithRate) {
  const auto transaction = loadgen::parse_log_line("0 1 5161 0 1796107156 957613 83", kLag);
  ASSERT_TRUE(transaction);
  EXPECT_EQ(transaction->latency, microseconds(5161));
  ASSERT_TRUE(transaction->schedule_lag);
  EXPECT_EQ(*transaction->schedule_lag, microseconds(83));
  EXPECT_FALSE(transaction->retries);
}

TEST(ParseLogLine, RetriesWithMaxTries) {
  const auto transaction = loadgen::parse_log_line("3 40 12000 1 1796107160 5 2", kRetries);
  ASSERT_TRUE(transaction);
  EXPECT_EQ(transaction->script, 1);
  ASSERT_TRUE(transaction->retries);
  EXPECT_EQ(*transaction->retries, 2u);
  EXPECT_FALSE(transaction->schedule_lag);
}

TEST(ParseLogLine, LagAndRetries) {
  const auto transaction = loadgen::parse_log_line("1 4 3000 0 1700000003 10 20 1", kBoth);
  ASSERT_TRUE(transaction);
  EXPECT_EQ(*transaction->schedule_lag, microseconds(20));
  EXPECT_EQ(*transaction->retries, 1u);
}

TEST(ParseLogLine, FailedSkippedAndDetailedFailures) {
  // doLog(), PG 15+: "%d " INT64_FORMAT " %s %d ..." with getResultString(): "skipped",
  // "failed", or with --failures-detailed "serialization" / "deadlock" (later: "other").
  struct Case {
    std::string word;
    loadgen::TransactionStatus status;
    loadgen::FailureCause cause;
  };
  const std::vector<Case> cases = {
      {"skipped", loadgen::TransactionStatus::skipped, loadgen::FailureCause::none},
      {"failed", loadgen::TransactionStatus::failed, loadgen::FailureCause::unspecified},
      {"serialization", loadgen::TransactionStatus::failed, loadgen::FailureCause::serialization},
      {"deadlock", loadgen::TransactionStatus::failed, loadgen::FailureCause::deadlock},
      {"other", loadgen::TransactionStatus::failed, loadgen::FailureCause::other},
  };
  for (const auto& test : cases) {
    const auto transaction =
        loadgen::parse_log_line("2 7 " + test.word + " 0 1700000000 250000 0 2", kBoth);
    ASSERT_TRUE(transaction) << test.word;
    EXPECT_EQ(transaction->status, test.status) << test.word;
    EXPECT_EQ(transaction->cause, test.cause) << test.word;
    EXPECT_EQ(transaction->latency, microseconds(0)) << test.word;
    EXPECT_EQ(transaction->end, at(1700000000, 250000)) << test.word;
    EXPECT_EQ(*transaction->retries, 2u) << test.word;
  }
  // PG 13-14 "skipped" with --rate: "%d " INT64_FORMAT " skipped %d %ld %ld" and the lag.
  const auto old = loadgen::parse_log_line("0 38 skipped 0 1796107157 241670 0", kLag);
  ASSERT_TRUE(old);
  EXPECT_EQ(old->status, loadgen::TransactionStatus::skipped);
}

TEST(ParseLogLine, GarbageIsRejected) {
  const std::vector<std::string> garbage = {
      "",
      "   ",
      "hello world",
      "progress: 1.0 s, 605.0 tps, lat 6.476 ms stddev 5.056, 0 failed",
      "0 1 5859 0 1796107150",                 // truncated: no time_us
      "0 1 5859 0 1796107150 18",              // fine as a line, tested below with columns
      "0 1 5859 0 1796107150 1000000",         // time_us out of range
      "0 1 -5 0 1796107150 1",                 // negative latency
      "0 1 +5 0 1796107150 1",                 // sign
      "0 1 58x9 0 1796107150 187638",          // not a number
      "0 1 5.5 0 1796107150 187638",           // not an integer
      "0 1 unknown 0 1796107150 187638",       // not a status word
      "a 1 5859 0 1796107150 187638",          // client not a number
      "0 1 5859 0 1796107150 187638 83",       // a 7th field without columns
      "0 1 5859 0 99999999999999 187638",      // absurd epoch
      "0 1 5859 0 1796107150 187638 1 2 3",    // too many fields
      "1796107150 2 13000 169000000 0 0 0 0",  // an aggregate (--aggregate-interval) line
  };
  for (const auto& line : garbage) {
    if (line == "0 1 5859 0 1796107150 18") {
      EXPECT_TRUE(loadgen::parse_log_line(line, kPlain)) << line;
      EXPECT_FALSE(loadgen::parse_log_line(line, kLag)) << line;  // a lag column is missing
      continue;
    }
    EXPECT_FALSE(loadgen::parse_log_line(line, kPlain)) << line;
  }
  // Wrong columns: a plain line read as if it had a lag, a lag line as if it had both.
  EXPECT_FALSE(loadgen::parse_log_line("0 1 5161 0 1796107156 957613", kLag));
  EXPECT_FALSE(loadgen::parse_log_line("0 1 5161 0 1796107156 957613 83", kBoth));
  EXPECT_FALSE(loadgen::parse_log_line("0 1 5161 0 1796107156 957613 x", kLag));
  EXPECT_FALSE(loadgen::parse_log_line("0 1 5161 0 1796107156 957613 -1", kRetries));
}

// ---- arguments and file names ------------------------------------------------------------

TEST(LogArgs, ColumnsPrefixAndSampling) {
  const auto args =
      loadgen::log_args_of({"-c", "4", "-j", "2", "-T", "3", "-R", "500", "--max-tries=3", "-l",
                            "--log-prefix=/tmp/run/pgbench_log", "--sampling-rate", "0.25"});
  EXPECT_TRUE(args.logging);
  EXPECT_EQ(args.log_prefix, "/tmp/run/pgbench_log");
  EXPECT_TRUE(args.columns.schedule_lag);
  EXPECT_TRUE(args.columns.retries);
  EXPECT_DOUBLE_EQ(args.sampling_rate, 0.25);
  EXPECT_FALSE(args.aggregated);
}

TEST(LogArgs, Defaults) {
  const auto args = loadgen::log_args_of({"-c", "4", "-T", "3", "-P", "1", "postgres"});
  EXPECT_FALSE(args.logging);
  EXPECT_FALSE(args.log_prefix);
  EXPECT_FALSE(args.columns.schedule_lag);
  EXPECT_FALSE(args.columns.retries);
  EXPECT_DOUBLE_EQ(args.sampling_rate, 1.0);
}

TEST(LogArgs, Spellings) {
  EXPECT_TRUE(loadgen::log_args_of({"-nl"}).logging);
  EXPECT_TRUE(loadgen::log_args_of({"--log"}).logging);
  EXPECT_FALSE(loadgen::log_args_of({"-nS"}).logging);
  EXPECT_TRUE(loadgen::log_args_of({"-R500"}).columns.schedule_lag);
  EXPECT_TRUE(loadgen::log_args_of({"--rate=500"}).columns.schedule_lag);
  EXPECT_TRUE(loadgen::log_args_of({"--rate", "500"}).columns.schedule_lag);
  EXPECT_FALSE(
      loadgen::log_args_of({"--max-tries=1"}).columns.retries);  // pgbench omits the column
  EXPECT_FALSE(loadgen::log_args_of({"--max-tries", "1"}).columns.retries);
  EXPECT_TRUE(loadgen::log_args_of({"--max-tries", "0"}).columns.retries);  // unlimited
  EXPECT_TRUE(loadgen::log_args_of({"-l", "--aggregate-interval=5"}).aggregated);
  EXPECT_EQ(loadgen::log_args_of({"--log-prefix", "x/y"}).log_prefix, "x/y");
  EXPECT_DOUBLE_EQ(loadgen::log_args_of({"--sampling-rate=2"}).sampling_rate,
                   1.0);  // invalid: ignored
}

TEST(LogFileName, ThreadZeroHasNoSuffix) {
  auto name = loadgen::parse_log_file_name("pgbench_log", "pgbench_log.16082");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->pid, 16082);
  EXPECT_EQ(name->thread, 0);
  name = loadgen::parse_log_file_name("pgbench_log", "pgbench_log.16082.1");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->pid, 16082);
  EXPECT_EQ(name->thread, 1);
  name = loadgen::parse_log_file_name("run", "run.7.31");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->thread, 31);
}

TEST(LogFileName, OthersAreRejected) {
  for (const char* file :
       {"pgbench_log", "pgbench_log.", "pgbench_log.abc", "pgbench_log.1.", "pgbench_log.1.0",
        "pgbench_log.1.2.3", "pgbench_log.1.x", "pgbench_logx.1", "pgbench_log_1", "other.1",
        "pgbench_log.-1", "pgbench_log.1.tmp"}) {
    EXPECT_FALSE(loadgen::parse_log_file_name("pgbench_log", file)) << file;
  }
  EXPECT_FALSE(loadgen::parse_log_file_name("", ".1"));
}

TEST(ListLogFiles, SortedByPidAndThread) {
  TempDir dir;
  for (const char* name :
       {"pgbench_log.100.10", "pgbench_log.100", "pgbench_log.100.2", "pgbench_log.99",
        "pgbench_log.100.1", "pgbench_log.100.0", "pgbench_log.txt", "other.100", "pgbench.log"}) {
    write_file(dir.path() / name, "");
  }
  fs::create_directory(dir.path() / "pgbench_log.5");  // not a regular file
  std::error_code error;
  const auto files = loadgen::list_log_files(dir.path() / "pgbench_log", error);
  EXPECT_FALSE(error);
  std::vector<std::string> names;
  names.reserve(files.size());
  for (const auto& file : files) names.push_back(file.path.filename().string());
  EXPECT_EQ(names,
            (std::vector<std::string>{"pgbench_log.99", "pgbench_log.100", "pgbench_log.100.1",
                                      "pgbench_log.100.2", "pgbench_log.100.10"}));
  EXPECT_EQ(files[4].pid, 100);
  EXPECT_EQ(files[4].thread, 10);
  EXPECT_EQ(loadgen::paths_of(files).size(), 5u);
}

TEST(ListLogFiles, MissingDirectoryIsAnError) {
  std::error_code error;
  const auto files = loadgen::list_log_files("/nonexistent-pgwaitprof-dir/pgbench_log", error);
  EXPECT_TRUE(error);
  EXPECT_TRUE(files.empty());
}

}  // namespace
}  // namespace pgwaitprof::loadgen
