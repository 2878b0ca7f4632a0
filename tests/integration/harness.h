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

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>
#include <gtest/gtest.h>

#include "daemon/process.h"
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

// A child process whose output goes to a file; killed at destruction if still running.
class ChildProcess {
 public:
  ChildProcess(std::vector<std::string> argv, std::filesystem::path log_path)
      : log_path_(std::move(log_path)) {
    pid_ = ::fork();
    if (pid_ == 0) {
      FILE* log = std::fopen(log_path_.c_str(), "w");
      ::dup2(fileno(log), STDOUT_FILENO);
      ::dup2(fileno(log), STDERR_FILENO);
      std::vector<char*> args;
      for (auto& arg : argv) args.push_back(arg.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~ChildProcess() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  pid_t pid() const { return pid_; }
  bool running() {
    if (exit_code_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return false;
    }
    return true;
  }
  void signal(int signal) { ::kill(pid_, signal); }
  // Waits up to `timeout` for the exit; the exit code, or nullopt when still running.
  std::optional<int> wait(std::chrono::milliseconds timeout = std::chrono::minutes(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return exit_code_;
  }
  std::string log() const { return read_text(log_path_); }

 private:
  std::filesystem::path log_path_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

inline std::string pgwaitprof_binary() { return PGWAITPROF_BINARY; }

// GET http://127.0.0.1:PORT/metrics; "" when nothing answers.
inline std::string scrape(int port) {
  try {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    const std::string request =
        "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n";
    asio::write(socket, asio::buffer(request));
    std::string response;
    std::error_code error;
    asio::read(socket, asio::dynamic_buffer(response), error);
    const auto body = response.find("\r\n\r\n");
    return body == std::string::npos ? "" : response.substr(body + 4);
  } catch (const std::exception&) {
    return "";
  }
}

// The value of the first sample whose name and labels start with `series`
// (e.g. `pgwaitprof_up{target="local"}`).
inline std::optional<double> metric(const std::string& exposition, const std::string& series) {
  size_t start = 0;
  while (start < exposition.size()) {
    auto end = exposition.find('\n', start);
    if (end == std::string::npos) end = exposition.size();
    const std::string line = exposition.substr(start, end - start);
    if (line.starts_with(series)) {
      const auto space = line.rfind(' ');
      return std::stod(line.substr(space + 1));
    }
    start = end + 1;
  }
  return std::nullopt;
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
