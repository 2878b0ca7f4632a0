// Numeric command-line options.
#include "daemon/commands/number_options.h"

#include <fmt/format.h>

#include "config/numbers.h"
#include "config/quote.h"

namespace pgwaitprof::commands {

CLI::Validator finite_in_range(double min, double max) {
  return {[min, max](std::string& text) -> std::string {
            if (auto rule = config::check_number(text, min, max)) {
              return fmt::format("invalid value {} ({})", config::quote(text), *rule);
            }
            text = fmt::format("{}", *config::parse_number(text));
            return {};
          },
          fmt::format("NUMBER in [{} - {}]", min, max)};
}

CLI::Validator integer_in_range(long long min, long long max) {
  return {[min, max](std::string& text) -> std::string {
            if (auto rule = config::check_integer(text, min, max)) {
              return fmt::format("invalid value {} ({})", config::quote(text), *rule);
            }
            text = std::to_string(*config::parse_integer(text));
            return {};
          },
          fmt::format("INT in [{} - {}]", min, max)};
}

}  // namespace pgwaitprof::commands
