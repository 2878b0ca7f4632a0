// The one check of every number users give: NaN, infinities, hexadecimal and trailing
// characters are not numbers; ranges are inclusive; pgbench's numeric options are found however
// they are written (separate, attached, combined with flags, long with "=").
#include "config/numbers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace pgwaitprof::config {
namespace {

TEST(Numbers, OnlyFiniteDecimalNumbersParse) {
  for (const char* text : {"nan", "NaN", "-nan", ".nan", "inf", "-inf", "Infinity", "0x10", "1e",
                           "1.5x", " 1", "1 ", "", "+", "-", "1e999"}) {
    EXPECT_FALSE(parse_number(text)) << text;
  }
  EXPECT_EQ(parse_number("100"), 100.0);
  EXPECT_EQ(parse_number("-0.5"), -0.5);
  EXPECT_EQ(parse_number(".5"), 0.5);
  EXPECT_EQ(parse_number("1e3"), 1000.0);
  EXPECT_EQ(parse_number("+2"), 2.0);

  for (const char* text : {"1.0", "1e3", "0x10", "nan", "", "-", "10 "}) {
    EXPECT_FALSE(parse_integer(text)) << text;
  }
  EXPECT_EQ(parse_integer("010"), 10);  // decimal, never octal
  EXPECT_EQ(parse_integer("-7"), -7);
  EXPECT_EQ(parse_integer("99999999999999999999"), std::numeric_limits<long long>::max());
}

TEST(Numbers, RangesAreInclusiveAndNaNIsNeverInOne) {
  EXPECT_FALSE(finite_in_range(1, 1, 10000));
  EXPECT_FALSE(finite_in_range(10000, 1, 10000));
  EXPECT_EQ(finite_in_range(0.5, 1, 10000), "must be between 1 and 10000");
  EXPECT_EQ(finite_in_range(std::nan(""), 1, 10000), "must be a finite number");
  EXPECT_EQ(finite_in_range(std::numeric_limits<double>::infinity(), 1, 10000),
            "must be a finite number");
  // NaN compares false with everything: a bound written as "value < min" would let it through.
  EXPECT_EQ(finite_in_range(std::nan(""), -std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::max()),
            "must be a finite number");
  EXPECT_EQ(integer_in_range(0, 1, 3600), "must be between 1 and 3600");
  EXPECT_FALSE(integer_in_range(3600, 1, 3600));

  EXPECT_EQ(check_number("nan", 1, 10000), "must be a number between 1 and 10000");
  EXPECT_EQ(check_number("20000", 1, 10000), "must be between 1 and 10000");
  EXPECT_FALSE(check_number("2.5", 1, 10000));
  EXPECT_EQ(check_integer("2.5", 1, 100), "must be an integer between 1 and 100");
  EXPECT_EQ(check_integer("99999999999999999999", 1, 100), "must be between 1 and 100");
}

TEST(PgbenchNumbers, EveryWayOfWritingANumericOptionIsChecked) {
  struct Case {
    std::vector<std::string> args;
    std::string option;
    std::string value;
    std::size_t index;
  };
  const std::vector<Case> cases = {
      {{"-R", "nan"}, "-R", "nan", 1},
      {{"-Rnan"}, "-R", "nan", 0},
      {{"-nR", "inf"}, "-R", "inf", 1},
      {{"--rate=nan"}, "--rate", "nan", 0},
      {{"--rate", "0"}, "--rate", "0", 1},
      {{"-T", "10", "-L", "-1"}, "-L", "-1", 3},
      {{"--sampling-rate", "1.5"}, "--sampling-rate", "1.5", 1},
      {{"-P", "0"}, "-P", "0", 1},
      {{"-P", "3601"}, "-P", "3601", 1},
      {{"-c", "1e3"}, "-c", "1e3", 1},
      {{"-j", "0x4"}, "-j", "0x4", 1},
      {{"--max-tries=-1"}, "--max-tries", "-1", 0},
  };
  for (const auto& bad : cases) {
    const auto error = check_pgbench_numbers(bad.args);
    ASSERT_TRUE(error) << bad.args.front();
    EXPECT_EQ(error->option, bad.option);
    EXPECT_EQ(error->value, bad.value);
    EXPECT_EQ(error->index, bad.index);
  }
  EXPECT_EQ(check_pgbench_numbers({"-R", "nan"})->message(),
            "invalid value for pgbench option \"-R\": \"nan\" (must be a number between 0.001 and "
            "1000000000)");
}

TEST(PgbenchNumbers, OtherOptionsAndTheirValuesAreLeftToPgbench) {
  // Values of non-numeric options are skipped even when they look like numeric options.
  EXPECT_FALSE(check_pgbench_numbers({"-D", "-R=nan", "-f", "-c", "-M", "prepared"}));
  EXPECT_FALSE(check_pgbench_numbers({"--define", "rate=nan", "--log-prefix", "-P"}));
  EXPECT_FALSE(check_pgbench_numbers({"-nS", "-c", "8", "-j4", "-T", "30", "-P", "5", "-R",
                                      "1500.5", "--latency-limit=10", "--max-tries=0", "bench"}));
  // A missing value is pgbench's to report.
  EXPECT_FALSE(check_pgbench_numbers({"-c"}));
  // After "--" nothing is an option.
  EXPECT_FALSE(check_pgbench_numbers({"--", "-R", "nan"}));
}

}  // namespace
}  // namespace pgwaitprof::config
