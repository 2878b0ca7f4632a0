// The one exception type of configuration errors: what() is one line, "FILE:LINE:COLUMN: message"
// for a file, or the message alone for a command-line value. Callers exit 2 on it.
#pragma once

#include <stdexcept>

namespace pgwaitprof::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pgwaitprof::config
