// Server-side throughput between two readings of pg_stat_database (and pg_stat_statements):
// pgwaitprof's own statements taken out, counters that went backwards giving no reading.
#include "collectors/server_throughput.h"

#include <gtest/gtest.h>

namespace pgwaitprof::collectors {
namespace {

using namespace std::chrono_literals;

ServerCounters counters(double at_s, uint64_t transactions, std::optional<uint64_t> calls,
                        uint64_t own) {
  ServerCounters reading;
  reading.at =
      model::SteadyClock::time_point(std::chrono::duration_cast<model::SteadyClock::duration>(
          std::chrono::duration<double>(at_s)));
  reading.transactions = transactions;
  reading.calls = calls;
  reading.own_statements = own;
  return reading;
}

TEST(ServerThroughput, OwnStatementsAreTakenOut) {
  const auto reading =
      throughput_between(counters(10, 5000, 20000, 300), counters(11, 6120, 24120, 420));
  ASSERT_TRUE(reading);
  EXPECT_DOUBLE_EQ(reading->transactions, 1000);
  EXPECT_DOUBLE_EQ(*reading->calls, 4000);
  EXPECT_EQ(reading->to - reading->from, 1s);
}

TEST(ServerThroughput, NoCallsWithoutPgStatStatements) {
  const auto reading =
      throughput_between(counters(0, 10, std::nullopt, 0), counters(1, 20, std::nullopt, 2));
  ASSERT_TRUE(reading);
  EXPECT_DOUBLE_EQ(reading->transactions, 8);
  EXPECT_FALSE(reading->calls);
}

TEST(ServerThroughput, ResetCountersGiveNoReading) {
  EXPECT_FALSE(throughput_between(counters(0, 5000, 10, 0), counters(1, 20, 10, 5)));
  EXPECT_FALSE(throughput_between(counters(1, 10, 10, 0), counters(1, 20, 10, 5)));
  // Calls reset alone (pg_stat_statements_reset()): transactions still count.
  const auto reading = throughput_between(counters(0, 10, 900, 0), counters(1, 20, 5, 0));
  ASSERT_TRUE(reading);
  EXPECT_FALSE(reading->calls);
}

}  // namespace
}  // namespace pgwaitprof::collectors
