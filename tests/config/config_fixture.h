// What the configuration and matrix-plan tests share (config_test.cc, config_bad_files_test.cc,
// plan_and_examples_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/daemon_config.h"
#include "config/matrix_plan.h"

namespace pgwaitprof::config::test_support {

namespace fs = std::filesystem;
using model::SamplerSource;
using std::chrono::milliseconds;
using std::chrono::seconds;

const fs::path kFixtures = fs::path(PGWAITPROF_FIXTURES) / "config";
const fs::path kSourceDir = PGWAITPROF_SOURCE_DIR;

// The message of the ConfigError that `parse` throws, or a failure naming what it returned.
template <typename Parse>
inline std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError was thrown";
  return "";
}

inline std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// ---- daemon configuration: good files ----

}  // namespace pgwaitprof::config::test_support
