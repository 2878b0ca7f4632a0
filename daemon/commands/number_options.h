// The validators of every numeric command-line option, on config/numbers.h: CLI11's Range lets
// "nan" through (every comparison with NaN is false), and its integer conversion reads "010" as
// octal. An accepted value is rewritten in plain decimal before CLI11 converts it, so the
// program gets exactly the number that was checked.
#pragma once

#include <CLI/CLI.hpp>

namespace pgwaitprof::commands {

// CLI11 prefixes the option: "--hz: invalid value "nan" (must be a number between 1 and 10000)".
CLI::Validator finite_in_range(double min, double max);
CLI::Validator integer_in_range(long long min, long long max);

}  // namespace pgwaitprof::commands
