// Shared helpers of the integration tests: the scratch cluster deploy/test.sh started (PG*
// variables), the pgwaitprof binary as a child process, and /metrics scrapes over loopback.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "daemon/process.h"
#include "tests/support/child_and_metrics.h"
#include "daemon/scratch_cluster.h"

namespace pgwaitprof::testing {

inline std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The test cluster's connection string, from the variables deploy/test.sh exports.
inline std::string test_conninfo() {
  return "host=" + env("PGHOST") + " port=" + env("PGPORT") + " user=" + env("PGUSER") +
         " dbname=" + env("PGDATABASE");
}

inline void require_cluster() {
  if (env("PGHOST").empty() || env("PGWAITPROF_TEST_PGDATA").empty()) {
    FAIL() << "integration tests need the scratch cluster of deploy/test.sh (PGHOST, "
              "PGWAITPROF_TEST_PGDATA); run them through deploy/test.sh";
  }
}

inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("pgwaitprof-it-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// pg_ctl on the test cluster, as the server's account.
inline daemon::CommandResult pg_ctl(const std::vector<std::string>& arguments) {
  std::vector<std::string> argv{env("PGWAITPROF_TEST_PGBIN") + "/pg_ctl", "-D",
                                env("PGWAITPROF_TEST_PGDATA")};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return daemon::run_command(argv, daemon::unprivileged_account());
}

inline daemon::CommandResult psql(const std::string& sql) {
  return daemon::run_command({daemon::find_executable("psql"), "-X", "-q", "-At", "-v",
                              "ON_ERROR_STOP=1", "-c", sql, test_conninfo()});
}

inline std::string pgwaitprof_binary() { return PGWAITPROF_BINARY; }

// Polls `check` every 50 ms until it is true or `timeout` passes.
template <typename Check>
bool eventually(std::chrono::milliseconds timeout, Check check) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (check()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return check();
}

}  // namespace pgwaitprof::testing
