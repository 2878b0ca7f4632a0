// Parsing and range checks of the numbers users give.
#include "config/numbers.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <limits>

#include "config/quote.h"

namespace pgwaitprof::config {
namespace {

// pgbench's numeric options and the values pgwaitprof lets through. Integers are pgbench's own
// ranges (option_parse_int: 1..INT_MAX unless it says otherwise); the real-valued ones have
// bounds because pgbench's atof has none.
struct NumericOption {
  char short_name;  // '\0' when it has none
  std::string_view long_name;
  bool integer;
  double min;
  double max;
};
constexpr double kIntMax = INT_MAX;
constexpr auto kNumericOptions = std::to_array<NumericOption>({
    {'c', "client", true, 1, kIntMax},
    {'j', "jobs", true, 1, kIntMax},
    {'T', "time", true, 1, kIntMax},
    {'t', "transactions", true, 1, kIntMax},
    {'s', "scale", true, 1, kIntMax},
    {'P', "progress", true, 1, static_cast<double>(kMaxIntervalS)},
    {'R', "rate", false, 0.001, 1e9},           // transactions per second
    {'L', "latency-limit", false, 0.001, 1e9},  // milliseconds
    {'\0', "sampling-rate", false, 1e-6, 1},
    {'\0', "max-tries", true, 0, kIntMax},
    {'\0', "aggregate-interval", true, 1, kIntMax},
});

// pgbench's getopt string (PostgreSQL 15): the letters followed by ':' take a value.
constexpr std::string_view kShortOptions = "bc:CdD:Ef:F:h:iI:j:lL:M:nNp:P:qrR:s:St:T:U:v";
// Its long options that take a value and are not numeric options above.
constexpr auto kOtherLongValueOptions = std::to_array<std::string_view>(
    {"builtin", "define", "file", "fillfactor", "host", "index-tablespace", "init-steps",
     "log-prefix", "partition-method", "partitions", "port", "protocol", "random-seed",
     "show-script", "tablespace", "username"});

bool takes_value(char letter) {
  const auto at = kShortOptions.find(letter);
  return at != std::string_view::npos && at + 1 < kShortOptions.size() &&
         kShortOptions[at + 1] == ':';
}

const NumericOption* numeric_by_short(char letter) {
  const auto* found = std::find_if(kNumericOptions.begin(), kNumericOptions.end(),
                                   [&](const auto& option) { return option.short_name == letter; });
  return letter == '\0' || found == kNumericOptions.end() ? nullptr : found;
}

const NumericOption* numeric_by_long(std::string_view name) {
  const auto* found = std::find_if(kNumericOptions.begin(), kNumericOptions.end(),
                                   [&](const auto& option) { return option.long_name == name; });
  return found == kNumericOptions.end() ? nullptr : found;
}

std::optional<PgbenchNumberError> check_value(const NumericOption& option, std::string written,
                                              std::size_t index, const std::string& value) {
  auto rule = option.integer ? check_integer(value, static_cast<long long>(option.min),
                                             static_cast<long long>(option.max))
                             : check_number(value, option.min, option.max);
  if (!rule) return std::nullopt;
  return PgbenchNumberError{std::move(written), value, std::move(*rule), index};
}

}  // namespace

std::optional<long long> parse_integer(std::string_view text) {
  const bool negative = text.starts_with('-');
  if (negative || text.starts_with('+')) text.remove_prefix(1);
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  long long magnitude = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
  if (end != text.data() + text.size()) return std::nullopt;
  if (error == std::errc::result_out_of_range) {
    magnitude = std::numeric_limits<long long>::max();
  } else if (error != std::errc{}) {
    return std::nullopt;
  }
  return negative ? -magnitude : magnitude;
}

std::optional<double> parse_number(std::string_view text) {
  const bool negative = text.starts_with('-');
  if (negative || text.starts_with('+')) text.remove_prefix(1);
  // from_chars would read "nan" and "inf": a number starts with a digit or a point.
  if (text.empty() || !(text.front() == '.' || (text.front() >= '0' && text.front() <= '9'))) {
    return std::nullopt;
  }
  double magnitude = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), magnitude,
                                            std::chars_format::general);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(magnitude)) {
    return std::nullopt;
  }
  return negative ? -magnitude : magnitude;
}

std::optional<std::string> finite_in_range(double value, double min, double max) {
  // Written so that NaN fails: every comparison with it is false.
  if (!std::isfinite(value)) return "must be a finite number";
  if (!(value >= min && value <= max)) return fmt::format("must be between {} and {}", min, max);
  return std::nullopt;
}

std::optional<std::string> integer_in_range(long long value, long long min, long long max) {
  if (value < min || value > max) return fmt::format("must be between {} and {}", min, max);
  return std::nullopt;
}

std::optional<std::string> check_number(std::string_view text, double min, double max) {
  const auto number = parse_number(text);
  if (!number) return fmt::format("must be a number between {} and {}", min, max);
  return finite_in_range(*number, min, max);
}

std::optional<std::string> check_integer(std::string_view text, long long min, long long max) {
  const auto number = parse_integer(text);
  if (!number) return fmt::format("must be an integer between {} and {}", min, max);
  return integer_in_range(*number, min, max);
}

std::string PgbenchNumberError::message() const {
  return fmt::format("invalid value for pgbench option {}: {} ({})", quote(option), quote(value),
                     rule);
}

std::optional<PgbenchNumberError> check_pgbench_numbers(const std::vector<std::string>& args) {
  for (std::size_t index = 0; index < args.size(); ++index) {
    const std::string& arg = args[index];
    if (arg == "--") break;  // pgbench's own end of options
    if (arg.starts_with("--")) {
      const auto equals = arg.find('=');
      const std::string name = arg.substr(2, equals == std::string::npos ? equals : equals - 2);
      const auto* numeric = numeric_by_long(name);
      const bool other = std::find(kOtherLongValueOptions.begin(), kOtherLongValueOptions.end(),
                                   name) != kOtherLongValueOptions.end();
      if (!numeric && !other) continue;  // a flag
      std::size_t value_index = index;
      std::string value;
      if (equals != std::string::npos) {
        value = arg.substr(equals + 1);
      } else if (index + 1 < args.size()) {
        value_index = ++index;
        value = args[value_index];
      } else {
        continue;  // pgbench says the value is missing
      }
      if (numeric) {
        if (auto error = check_value(*numeric, "--" + name, value_index, value)) return error;
      }
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') continue;  // the database name
    // Letters may be combined ("-nc4"): flags, then at most one option that takes a value.
    for (std::size_t letter = 1; letter < arg.size(); ++letter) {
      if (!takes_value(arg[letter])) continue;
      std::size_t value_index = index;
      std::string value = arg.substr(letter + 1);
      if (value.empty()) {
        if (index + 1 >= args.size()) break;
        value_index = ++index;
        value = args[value_index];
      }
      if (const auto* numeric = numeric_by_short(arg[letter])) {
        if (auto error =
                check_value(*numeric, std::string("-") + arg[letter], value_index, value)) {
          return error;
        }
      }
      break;
    }
  }
  return std::nullopt;
}

}  // namespace pgwaitprof::config
