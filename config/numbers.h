// Numbers pgwaitprof reads from its users: command-line options, configuration files and plans,
// control socket requests, and the pgbench arguments it passes on. One parser and one range check
// for all of them, so that "nan", "inf", hexadecimal, trailing characters and out-of-range values
// are refused the same way everywhere, before anything is started: CLI11's Range and the C
// library's atof let NaN through, and a NaN rate was sampled as fast as the loop could go.
// A failed check is a rule that completes "invalid value ... (RULE)".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::config {

// Timeline intervals (pgbench -P) are whole seconds, at most an hour: the one limit shared by the
// configuration, the command line, the control socket and the pgbench arguments checked here.
inline constexpr long long kMaxIntervalS = 3600;
// --cpu-profile, a target's and a plan's cpu_profile: on-CPU samples per second per CPU.
inline constexpr int kMinCpuProfileHz = 1;
inline constexpr int kMaxCpuProfileHz = 999;
inline constexpr int kDefaultCpuProfileHz = 99;

// A plain decimal integer with an optional sign. Values too large for long long saturate, so
// that the range check reports them as out of range rather than as not a number.
std::optional<long long> parse_integer(std::string_view text);
// A finite decimal number ("2", "-0.5", "1e3"); "nan", "inf" and hexadecimal are not numbers.
std::optional<double> parse_number(std::string_view text);

// The rule `value` breaks ("must be between 1 and 10000", "must be a finite number"), or
// nullopt when it keeps it. Bounds are inclusive.
std::optional<std::string> finite_in_range(double value, double min, double max);
std::optional<std::string> integer_in_range(long long value, long long min, long long max);

// The same for text: a number (an integer) that is not one is told what it must be, range
// included ("must be a number between 1 and 10000").
std::optional<std::string> check_number(std::string_view text, double min, double max);
std::optional<std::string> check_integer(std::string_view text, long long min, long long max);

// The first of pgbench's numeric options among `args` whose value is not valid: the option as
// written ("-R", "--rate"), its value, and the rule. pgbench reads -R, -L and --sampling-rate
// with atof, which takes "nan"; -P is also the timeline's interval, so it has the timeline's
// range.
struct PgbenchNumberError {
  std::string option;
  std::string value;
  std::string rule;
  std::size_t index = 0;        // of the argument that holds the value
  std::string message() const;  // invalid value for pgbench option "-R": "nan" (must be ...)
};
std::optional<PgbenchNumberError> check_pgbench_numbers(const std::vector<std::string>& args);

}  // namespace pgwaitprof::config
