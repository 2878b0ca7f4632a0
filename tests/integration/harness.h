// Shared helpers of the integration tests: the scratch cluster deploy/test.sh started (PG*
// variables), the pgwaitprof binary as a child process, and /metrics scrapes over loopback.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "base/programs.h"
#include "daemon/engine/process.h"
#include "daemon/engine/scratch_cluster.h"
#include "tests/support/child_and_metrics.h"

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

// The rate (pgbench -R, transactions a second) of a test's load when its assertions need
// transactions but not a saturated server: what the run does with the load (its report, its
// cleanup, a signal in the middle), not how fast the server can go. deploy/test.sh runs three
// lanes of tests side by side on two cores, and an unthrottled `pgbench -c 1` on a test cluster
// takes a whole core from the other lanes for as long as it runs: 0.96 cores, against 0.19 at
// 200 a second (the test cluster, 2026-12-06).
inline constexpr const char* kModestRate = "200";

inline void require_cluster() {
  if (env("PGHOST").empty() || env("PGWAITPROF_TEST_PGDATA").empty()) {
    FAIL() << "integration tests need the scratch cluster of deploy/test.sh (PGHOST, "
              "PGWAITPROF_TEST_PGDATA); run them through deploy/test.sh";
  }
}

// The directories of the tests of this program, removed as it exits when all its tests passed
// (a failed test's stay, for a look: the test's name and pid are in the path). Before, five runs
// of the suites had left 930 directories in /tmp (2026-12-07).
class TempDirs {
 public:
  // Constructed at a test's first directory, so destroyed before gtest's own instance.
  static TempDirs& instance() {
    static TempDirs dirs;
    return dirs;
  }
  void add(const std::filesystem::path& dir) {
    std::lock_guard lock(mutex_);
    dirs_.push_back(dir);
  }
  ~TempDirs() {
    if (!::testing::UnitTest::GetInstance()->Passed()) return;
    for (const auto& dir : dirs_) {
      std::error_code ignored;  // (what a child still writes there: left, and no exception)
      std::filesystem::remove_all(dir, ignored);
    }
  }

 private:
  TempDirs() = default;
  std::mutex mutex_;
  std::vector<std::filesystem::path> dirs_;
};

inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("pgwaitprof-it-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  TempDirs::instance().add(dir);
  return dir;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// The file's text, "" when it cannot be read: a /proc file of a process that exits while it is
// read fails with ESRCH, which libstdc++ throws from the stream buffer.
inline std::string read_text(const std::filesystem::path& path) {
  try {
    std::ifstream file(path);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  } catch (const std::ios_base::failure&) {
    return "";
  }
}

// pg_ctl on the test cluster, as the server's account.
inline engine::CommandResult pg_ctl(const std::vector<std::string>& arguments) {
  std::vector<std::string> argv{env("PGWAITPROF_TEST_PGBIN") + "/pg_ctl", "-D",
                                env("PGWAITPROF_TEST_PGDATA")};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return engine::run_command(argv, {engine::unprivileged_account(), {}});
}

// psql on the test cluster, or the one `conninfo` names (an OwnCluster's).
inline engine::CommandResult psql(const std::string& sql,
                                  const std::string& conninfo = test_conninfo()) {
  return engine::run_command({base::find_executable("psql"), "-X", "-q", "-At", "-v",
                              "ON_ERROR_STOP=1", "-c", sql, conninfo});
}

// The program under test: the one built beside the tests, or PGWAITPROF_TEST_BINARY when set
// (deploy/test.sh points it at the sanitizer build's program for the tests it runs under ASan).
inline std::string pgwaitprof_binary() {
  const std::string chosen = env("PGWAITPROF_TEST_BINARY");
  return chosen.empty() ? std::string(PGWAITPROF_BINARY) : chosen;
}

// `pgwaitprof ARGS` as a user runs it.
inline engine::CommandResult pgwaitprof(std::vector<std::string> args) {
  args.insert(args.begin(), pgwaitprof_binary());
  return engine::run_command(args);
}

// `pgwaitprof ARGS` with its standard output alone (stderr discarded): for output parsed as JSON,
// which a log line would break (every invocation may sweep the scratch clusters that another
// test's pgwaitprof left, and say so on stderr).
inline engine::CommandResult pgwaitprof_stdout(std::vector<std::string> args) {
  args.insert(args.begin(), {"sh", "-c", "exec \"$0\" \"$@\" 2>/dev/null", pgwaitprof_binary()});
  return engine::run_command(args);
}

// The test cluster's database `database` (a results database, a scratch one).
inline std::string database_dsn(const std::string& database) {
  return "host=" + env("PGHOST") + " port=" + env("PGPORT") + " user=" + env("PGUSER") +
         " dbname=" + database;
}

// The test cluster's postgresql.auto.conf (ALTER SYSTEM's file).
inline std::filesystem::path auto_conf() {
  return std::filesystem::path(env("PGWAITPROF_TEST_PGDATA")) / "postgresql.auto.conf";
}

struct RunResult {
  int exit_code = -1;
  std::string output;
  std::filesystem::path dir;  // the one run directory written
  nlohmann::json report;
};

// What `command` did and the (one) run directory it wrote in DATA_DIR, with its report.
inline RunResult run_written(const std::filesystem::path& data_dir, engine::CommandResult command) {
  RunResult result{command.exit_code, std::move(command.output), {}, {}};
  if (std::filesystem::exists(data_dir / "runs")) {
    for (const auto& entry : std::filesystem::directory_iterator(data_dir / "runs"))
      result.dir = entry.path();
  }
  if (std::filesystem::exists(result.dir / "report.json")) {
    result.report = nlohmann::json::parse(read_text(result.dir / "report.json"));
  }
  return result;
}

// `pgwaitprof run OURS --data-dir DATA_DIR -- PGBENCH_ARGS` and what it wrote.
inline RunResult pgwaitprof_run(const std::filesystem::path& data_dir,
                                std::vector<std::string> ours,
                                std::vector<std::string> pgbench_args) {
  std::vector<std::string> argv{pgwaitprof_binary(), "run"};
  argv.insert(argv.end(), ours.begin(), ours.end());
  argv.insert(argv.end(), {"--data-dir", data_dir.string(), "--"});
  argv.insert(argv.end(), pgbench_args.begin(), pgbench_args.end());
  return run_written(data_dir, engine::run_command(argv));
}

// `pgwaitprof record OURS --data-dir DATA_DIR` (a recording window of load from elsewhere) and
// what it wrote.
inline RunResult pgwaitprof_record(const std::filesystem::path& data_dir,
                                   std::vector<std::string> ours) {
  std::vector<std::string> argv{pgwaitprof_binary(), "record"};
  argv.insert(argv.end(), ours.begin(), ours.end());
  argv.insert(argv.end(), {"--data-dir", data_dir.string()});
  return run_written(data_dir, engine::run_command(argv));
}

// Runs `body` as a coroutine on its own io_context to the end.
template <typename Body>
void run_coroutine(Body body) {
  asio::io_context io;
  bool finished = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await body();
        finished = true;
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(finished);
}

// Whether pgbench's -P lines in `log` have reached `seconds` of its run: a line "progress: T s"
// with T at least that. A loaded machine's pgbench prints the time it reports at (1.1 s, 2.1 s),
// so a wait for the exact text "progress: 1.0 s" can miss every line.
inline bool progress_reached(const std::string& log, double seconds) {
  static const std::regex line(R"(progress: ([0-9]+(\.[0-9]+)?) s)");
  for (auto match = std::sregex_iterator(log.begin(), log.end(), line);
       match != std::sregex_iterator(); ++match) {
    if (std::stod((*match)[1].str()) >= seconds) return true;
  }
  return false;
}

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
