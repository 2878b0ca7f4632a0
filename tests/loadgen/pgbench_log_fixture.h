// What the pgbench log tests share (pgbench_log_test.cc, pgbench_log_read_test.cc).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "loadgen/pgbench_log.h"
#include "loadgen/pgbench_parser.h"

namespace pgwaitprof::loadgen::test_support {

namespace fs = std::filesystem;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SysMicroseconds = std::chrono::sys_time<microseconds>;

constexpr loadgen::LogColumns kPlain{};
constexpr loadgen::LogColumns kLag{.schedule_lag = true, .retries = false};
constexpr loadgen::LogColumns kRetries{.schedule_lag = false, .retries = true};
constexpr loadgen::LogColumns kBoth{.schedule_lag = true, .retries = true};

inline SysMicroseconds at(std::int64_t epoch_s, std::int64_t us) {
  return SysMicroseconds(seconds(epoch_s) + microseconds(us));
}

// A fresh directory, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string name = (fs::temp_directory_path() / "pgwaitprof-txlog-XXXXXX").string();
    EXPECT_NE(::mkdtemp(name.data()), nullptr);
    path_ = name;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline void write_file(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
}

}  // namespace pgwaitprof::loadgen::test_support
