// pgbench's end-of-run summary and aborted-client lines (PG 13-17 fixtures), and the parsers
// under random input.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "loadgen/pgbench_parser.h"
#include "tests/loadgen/pgbench_parser_fixture.h"

namespace pgwaitprof::loadgen {
namespace {

using namespace test_support;

TEST(PgbenchSummary, Pg15Tpcb) {
  auto summary = loadgen::parse_summary(read_fixture("pg15_tpcb_progress.stdout"));
  EXPECT_EQ(summary.transaction_type, "<builtin: TPC-B (sort of)>");
  EXPECT_DOUBLE_EQ(summary.scale, 1);
  EXPECT_EQ(summary.query_mode, "simple");
  EXPECT_EQ(summary.clients, 2);
  EXPECT_EQ(summary.threads, 1);
  ASSERT_TRUE(summary.duration);
  EXPECT_DOUBLE_EQ(summary.duration->count(), 5);
  EXPECT_EQ(summary.transactions, 10879u);
  EXPECT_EQ(summary.failed, 0u);
  EXPECT_DOUBLE_EQ(summary.latency_avg.count(), 0.915);
  ASSERT_TRUE(summary.latency_stddev);
  EXPECT_DOUBLE_EQ(summary.latency_stddev->count(), 0.270);
  ASSERT_TRUE(summary.initial_connection_time);
  EXPECT_DOUBLE_EQ(summary.initial_connection_time->count(), 12.272);
  EXPECT_DOUBLE_EQ(summary.tps, 2180.759046);
  EXPECT_TRUE(summary.aborted.empty());
}

TEST(PgbenchSummary, Pg15SelectOnly) {
  auto summary = loadgen::parse_summary(read_fixture("pg15_select_only.stdout"));
  EXPECT_EQ(summary.transaction_type, "<builtin: select only>");
  EXPECT_EQ(summary.transactions, 86179u);
  EXPECT_DOUBLE_EQ(summary.tps, 28767.730097);
}

TEST(PgbenchSummary, Pg15TransactionsPerClient) {
  auto summary = loadgen::parse_summary(read_fixture("pg15_custom_transactions.stdout"));
  EXPECT_EQ(summary.transaction_type, "custom.sql");
  EXPECT_FALSE(summary.duration);          // -t run: "number of transactions per client: 1000"
  EXPECT_EQ(summary.transactions, 2000u);  // of "2000/2000"
  EXPECT_DOUBLE_EQ(summary.tps, 23752.404931);
}

TEST(PgbenchSummary, Pg15RateLimitedRun) {
  auto summary = loadgen::parse_summary(read_fixture("pg15_rate_latency_limit.stdout"));
  EXPECT_EQ(summary.transactions, 5682u);
  EXPECT_DOUBLE_EQ(summary.latency_avg.count(), 1.830);
  EXPECT_DOUBLE_EQ(summary.tps, 1896.132517);
}

TEST(PgbenchSummary, Pg15FailuresDetailedAndRetries) {
  auto summary = loadgen::parse_summary(read_fixture("pg15_serialization_retries.stdout"));
  EXPECT_EQ(summary.query_mode, "prepared");
  EXPECT_EQ(summary.threads, 2);
  EXPECT_EQ(summary.transactions, 20208u);
  EXPECT_EQ(summary.failed, 187u);
  EXPECT_DOUBLE_EQ(summary.latency_avg.count(), 0.576);
  EXPECT_DOUBLE_EQ(summary.tps, 6744.372014);
}

TEST(PgbenchSummary, Pg15MultipleScriptsReadsTotalsNotPerScript) {
  auto summary = loadgen::parse_summary(read_fixture("pg15_multiple_scripts_retries.stdout"));
  EXPECT_EQ(summary.transaction_type, "multiple scripts");
  EXPECT_EQ(summary.failed, 512u);
  // Per-script " - latency average = 1.737 ms" and "tps = 1553.070583" must not win.
  EXPECT_DOUBLE_EQ(summary.latency_avg.count(), 1.245);
  ASSERT_TRUE(summary.latency_stddev);
  EXPECT_DOUBLE_EQ(summary.latency_stddev->count(), 2.691);
  EXPECT_DOUBLE_EQ(summary.tps, 2898.998376);
}

TEST(PgbenchSummary, Pg15ConnectPerTransaction) {
  // -C: "average connection time" (not an initial one) and the only tps includes reconnects.
  auto summary = loadgen::parse_summary(read_fixture("pg15_connect_per_transaction.stdout"));
  EXPECT_FALSE(summary.initial_connection_time);
  EXPECT_FALSE(summary.latency_stddev);  // no -P/-R/-L: pgbench measured none
  EXPECT_DOUBLE_EQ(summary.latency_avg.count(), 4.083);
  EXPECT_DOUBLE_EQ(summary.tps, 489.895469);
}

TEST(PgbenchSummary, Pg15OneClientAbortedStillHasSummary) {
  const std::string stdout_text = read_fixture("pg15_one_client_aborted.stdout");
  const std::string stderr_text = read_fixture("pg15_one_client_aborted.stderr");
  auto summary = loadgen::parse_summary(stdout_text);
  EXPECT_DOUBLE_EQ(summary.tps, 9430.338026);
  EXPECT_TRUE(summary.aborted.empty());  // stdout alone has no aborted lines
  // The orchestrator may hand over both streams as one log; aborted clients are then kept.
  auto combined = loadgen::parse_summary(stdout_text + stderr_text);
  EXPECT_DOUBLE_EQ(combined.tps, 9430.338026);
  ASSERT_EQ(combined.aborted.size(), 1u);
  EXPECT_TRUE(combined.aborted[0].starts_with("client 0 script 0 aborted in command 3 query 0"));
}

TEST(PgbenchSummary, Pg15AllClientsAbortedHasNoSummary) {
  const std::string text = read_fixture("pg15_all_clients_aborted.stdout");
  EXPECT_EQ(summary_error(text), "could not parse pgbench output: no \"tps =\" line found");
}

// pgbench -c 64 -T 2 on a saturated machine: the connections took the whole duration. pgbench
// 15 stops its summary after the count (the lines above it as pgbench prints them).
TEST(PgbenchSummary, NoTransactionInTheDurationSaysSo) {
  const std::string text =
      "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 10\nquery mode: simple\n"
      "number of clients: 64\nnumber of threads: 1\nmaximum number of tries: 1\n"
      "duration: 2 s\nnumber of transactions actually processed: 0\n";
  EXPECT_EQ(summary_error(text),
            "could not parse pgbench output: pgbench processed no transaction in its 2 s, so it "
            "gave no tps");
}

TEST(PgbenchSummary, Pg15FailedBeforeRunningHasNoSummary) {
  EXPECT_EQ(summary_error(read_fixture("pg15_connection_refused.stderr")),
            "could not parse pgbench output: no \"tps =\" line found");
  EXPECT_EQ(summary_error(read_fixture("pg15_bad_arguments.stderr")),
            "could not parse pgbench output: no \"tps =\" line found");
}

// --- summaries, other versions (reconstructed from pgbench.c printResults) ---

TEST(PgbenchSummary, Pg13PrefersTpsExcludingConnections) {
  // Reconstructed from PG 13 printResults: no version banner, no failures, two tps lines.
  const std::string text =
      "transaction type: <builtin: TPC-B (sort of)>\n"
      "scaling factor: 10\n"
      "query mode: simple\n"
      "number of clients: 10\n"
      "number of threads: 1\n"
      "number of transactions per client: 1000\n"
      "number of transactions actually processed: 10000/10000\n"
      "latency average = 11.013 ms\n"
      "latency stddev = 7.351 ms\n"
      "tps = 896.967014 (including connections establishing)\n"
      "tps = 897.896346 (excluding connections establishing)\n";
  auto summary = loadgen::parse_summary(text);
  EXPECT_DOUBLE_EQ(summary.scale, 10);
  EXPECT_EQ(summary.transactions, 10000u);
  EXPECT_FALSE(summary.duration);
  EXPECT_FALSE(summary.initial_connection_time);
  EXPECT_DOUBLE_EQ(summary.tps, 897.896346);
  // Order must not matter either.
  const std::string reversed =
      "tps = 897.896346 (excluding connections establishing)\n"
      "tps = 896.967014 (including connections establishing)\n";
  EXPECT_DOUBLE_EQ(loadgen::parse_summary(reversed).tps, 897.896346);
}

TEST(PgbenchSummary, OnlyIncludingConnectionsLineIsUsedWhenAlone) {
  // As quoted on the mailing list (DESIGN.md): just the including line survives.
  auto summary =
      loadgen::parse_summary("tps = 27651.562835 (including connections establishing)\n");
  EXPECT_DOUBLE_EQ(summary.tps, 27651.562835);
}

TEST(PgbenchSummary, Pg14WithoutInitialConnectionTime) {
  // Reconstructed from PG 14 printResults: version banner, initial connection time, one tps
  // line, and no failure lines yet.
  const std::string text =
      "pgbench (14.11)\r\n"
      "transaction type: <builtin: select only>\r\n"
      "scaling factor: 100\r\n"
      "query mode: prepared\r\n"
      "number of clients: 64\r\n"
      "number of threads: 8\r\n"
      "duration: 60 s\r\n"
      "number of transactions actually processed: 30123456\r\n"
      "latency average = 0.127 ms\r\n"
      "initial connection time = 45.758 ms\r\n"
      "tps = 502059.325617 (without initial connection time)\r\n";
  auto summary = loadgen::parse_summary(text);
  EXPECT_EQ(summary.transaction_type, "<builtin: select only>");  // no "\r" kept
  EXPECT_EQ(summary.clients, 64);
  EXPECT_EQ(summary.threads, 8);
  ASSERT_TRUE(summary.duration);
  EXPECT_DOUBLE_EQ(summary.duration->count(), 60);
  EXPECT_EQ(summary.transactions, 30123456u);
  EXPECT_EQ(summary.failed, 0u);
  ASSERT_TRUE(summary.initial_connection_time);
  EXPECT_DOUBLE_EQ(summary.initial_connection_time->count(), 45.758);
  EXPECT_DOUBLE_EQ(summary.tps, 502059.325617);
}

TEST(PgbenchSummary, Pg17LatencyIncludingFailures) {
  // Reconstructed from PG 17/master printResults: without -P the average latency notes
  // " (including failures)" when some transactions failed.
  const std::string text =
      "number of transactions actually processed: 900\n"
      "number of failed transactions: 100 (10.000%)\n"
      "latency average = 2.500 ms (including failures)\n"
      "initial connection time = 3.000 ms\n"
      "tps = 300.000000 (without initial connection time)\n";
  auto summary = loadgen::parse_summary(text);
  EXPECT_EQ(summary.failed, 100u);
  EXPECT_DOUBLE_EQ(summary.latency_avg.count(), 2.5);
  EXPECT_DOUBLE_EQ(summary.tps, 300);
}

TEST(PgbenchSummary, ErrorsAreOneLine) {
  EXPECT_EQ(summary_error(""), "could not parse pgbench output: no \"tps =\" line found");
  EXPECT_EQ(
      summary_error("tps = fast (without initial connection time)\n"),
      "could not parse pgbench output: invalid tps \"fast (without initial connection time)\"");
  EXPECT_EQ(summary_error("number of clients: two\ntps = 1\n"),
            "could not parse pgbench output: invalid number of clients \"two\"");
  EXPECT_EQ(summary_error("duration: 5 min\ntps = 1\n"),
            "could not parse pgbench output: invalid duration \"5 min\"");
  EXPECT_EQ(summary_error("tps = \n"), "could not parse pgbench output: invalid tps \"\"");
}

// --- aborted clients ---

TEST(PgbenchAborted, Pg15LinesWithoutContinuationOrRunAborted) {
  auto aborted = loadgen::aborted_clients(read_fixture("pg15_all_clients_aborted.stderr"));
  ASSERT_EQ(aborted.size(), 2u);
  EXPECT_EQ(aborted[0],
            "client 1 script 0 aborted in command 2 query 0: ERROR:  relation \"no_such_table\" "
            "does not exist");
  EXPECT_TRUE(aborted[1].starts_with("client 0 script 0 aborted in command 2"));
}

TEST(PgbenchAborted, Pg14FormatWithAndWithoutPrefix) {
  // Reconstructed from pgbench.c commandFailed ("client %d aborted in command %d (%s) of
  // script %d; %s"): "(SQL)" for SQL errors up to PG 11 (bare, no prefix), meta-command
  // errors since, logged with "pgbench: error: " from PG 12 on.
  const std::string text =
      "pgbench: error: client 0 aborted in command 1 (SQL) of script 0; ERROR:  division by zero\n"
      "\n"
      "client 3 aborted in command 4 (set) of script 1; evaluation of meta-command failed\n"
      "pgbench: error: client 7 aborted while establishing connection\n"
      "pgbench: error: Run was aborted; the above results are incomplete.\n"
      "progress: 1.0 s, 10.0 tps, lat 1.000 ms stddev 0.100, 0 failed\n"
      "pgbench: error: client-side problem aborted\n"
      "client x aborted in command 1\n";
  auto aborted = loadgen::aborted_clients(text);
  ASSERT_EQ(aborted.size(), 3u);
  EXPECT_EQ(aborted[0],
            "client 0 aborted in command 1 (SQL) of script 0; ERROR:  division by zero");
  EXPECT_EQ(aborted[1],
            "client 3 aborted in command 4 (set) of script 1; evaluation of meta-command failed");
  EXPECT_EQ(aborted[2], "client 7 aborted while establishing connection");
}

TEST(PgbenchAborted, NoneInCleanRunsOrEmptyInput) {
  EXPECT_TRUE(loadgen::aborted_clients("").empty());
  EXPECT_TRUE(loadgen::aborted_clients(read_fixture("pg15_tpcb_progress.stderr")).empty());
  EXPECT_TRUE(loadgen::aborted_clients(read_fixture("pg15_connection_refused.stderr")).empty());
}

// --- garbage ---

const std::vector<std::string> kFixtures = {
    "pg15_tpcb_progress",
    "pg15_progress_timestamp",
    "pg15_rate",
    "pg15_rate_latency_limit",
    "pg15_select_only",
    "pg15_serialization_retries",
    "pg15_multiple_scripts_retries",
    "pg15_serialization_no_retries",
    "pg15_empty_intervals",
    "pg15_one_client_aborted",
};

// Calls every parser on `text`; only PgbenchParseError may leave parse_summary.
void parse_everything(const std::string& text) {
  for (const std::string& line : lines_of(text)) {
    EXPECT_NO_THROW(loadgen::parse_progress_line(line));
  }
  EXPECT_NO_THROW(loadgen::aborted_clients(text));
  try {
    loadgen::parse_summary(text);
  } catch (const loadgen::PgbenchParseError& error) {
    EXPECT_TRUE(std::string_view(error.what()).starts_with("could not parse pgbench output: "));
    EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
  } catch (const std::exception& error) {
    ADD_FAILURE() << "unexpected exception: " << error.what();
  }
}

TEST(PgbenchFuzz, TruncatedSummaryFailsUntilTheTpsLine) {
  for (const std::string& name : kFixtures) {
    const std::string text = read_fixture(name + ".stdout");
    const size_t tps_line = text.find("\ntps = ");
    ASSERT_NE(tps_line, std::string::npos) << name;
    const double full_tps = loadgen::parse_summary(text).tps;
    for (size_t length = 0; length <= text.size(); ++length) {
      const std::string prefix = text.substr(0, length);
      if (length <= tps_line + std::string_view("\ntps = ").size()) {
        EXPECT_NE(summary_error(prefix), "") << name << " truncated to " << length;
      } else if (text.find('\n', tps_line + 1) < length) {
        EXPECT_DOUBLE_EQ(loadgen::parse_summary(prefix).tps, full_tps)
            << name << " truncated to " << length;
      } else {
        parse_everything(prefix);  // cut inside the tps number: any prefix of it may parse
      }
    }
  }
}

TEST(PgbenchFuzz, TruncatedProgressLinesNeverThrow) {
  int accepted = 0;
  int rejected = 0;
  for (const std::string& name : kFixtures) {
    for (const std::string& line : lines_of(read_fixture(name + ".stderr"))) {
      for (size_t length = 0; length <= line.size(); ++length) {
        std::optional<model::LoadgenProgress> point;
        EXPECT_NO_THROW(point =
                            loadgen::parse_progress_line(std::string_view(line).substr(0, length)));
        if (point) {
          ++accepted;
          EXPECT_GE(point->tps, 0);
        } else {
          ++rejected;
        }
      }
    }
  }
  // Most cuts of a progress line break it; whole lines and cuts inside the last number parse.
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, accepted);
}

TEST(PgbenchFuzz, MutatedFixtureBytesNeverCrash) {
  std::mt19937 random(20240601);  // fixed seed: failures must reproduce
  std::uniform_int_distribution<int> byte(0, 255);
  int parsed_summaries = 0;
  for (const std::string& name : kFixtures) {
    const std::string original = read_fixture(name + ".stdout") + read_fixture(name + ".stderr");
    for (int round = 0; round < 200; ++round) {
      std::string text = original;
      std::uniform_int_distribution<size_t> position(0, text.size() - 1);
      const int mutations = 1 + round % 8;
      for (int mutation = 0; mutation < mutations; ++mutation) {
        text[position(random)] = static_cast<char>(byte(random));
      }
      text.resize(position(random) + 1);
      parse_everything(text);
      if (summary_error(text).empty()) ++parsed_summaries;
    }
  }
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(byte(random));
  parse_everything(noise);
  EXPECT_NE(summary_error(noise), "");
  EXPECT_GT(parsed_summaries, 0);  // the loop did reach texts that still have a summary
}

}  // namespace
}  // namespace pgwaitprof::loadgen
