// Statement texts as reports show them: literals out, one line, bounded.
#include "collectors/statements.h"

#include <gtest/gtest.h>

namespace pgwaitprof::collectors {
namespace {

TEST(NormalizeStatement, NumbersAndStringsBecomePlaceholders) {
  EXPECT_EQ(normalize_statement("UPDATE pgbench_accounts SET abalance = abalance + 4213 WHERE "
                                "aid = 77;"),
            "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?;");
  EXPECT_EQ(normalize_statement("SELECT 'it''s secret', 3.14 FROM t WHERE name = 'x'"),
            "SELECT ?, ? FROM t WHERE name = ?");
}

TEST(NormalizeStatement, ANegativeLiteralIsOneStatementWithThePositiveOne) {
  // pgbench's tpcb draws the delta with either sign: both are the same statement.
  EXPECT_EQ(normalize_statement("UPDATE pgbench_branches SET bbalance = bbalance + -4213 WHERE "
                                "bid = 1;"),
            normalize_statement("UPDATE pgbench_branches SET bbalance = bbalance + 4213 WHERE "
                                "bid = 1;"));
  EXPECT_EQ(normalize_statement("SELECT f(-1, -2.5)"), "SELECT f(?, ?)");
  // A binary minus stays.
  EXPECT_EQ(normalize_statement("SELECT x-1, x - 2"), "SELECT x-?, x - ?");
}

TEST(NormalizeStatement, IdentifiersAndParametersKeepTheirDigits) {
  EXPECT_EQ(normalize_statement("SELECT a1 FROM t2 WHERE c = $1"),
            "SELECT a1 FROM t2 WHERE c = $1");
}

TEST(NormalizeStatement, OneLineAndBounded) {
  EXPECT_EQ(normalize_statement("SELECT\n  a,\n\tb\n\nFROM t  \n"), "SELECT a, b FROM t");
  const std::string long_text = "SELECT " + std::string(500, 'x');
  const auto cut = normalize_statement(long_text);
  EXPECT_EQ(cut.size(), 200u);
  EXPECT_TRUE(cut.ends_with("..."));
  EXPECT_EQ(normalize_statement(long_text, 20), "SELECT xxxxxxxxxx...");
}

}  // namespace
}  // namespace pgwaitprof::collectors
