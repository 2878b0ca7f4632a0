// A program under test with its standard output and error on one pipe that the test reads, and
// may close (a reader gone: SIGPIPE's case), for the fault tests that end or hold a command.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::testing {

using namespace std::chrono_literals;

// pgwaitprof with stdout and stderr on one pipe that the test reads (and may close).
class PipedProgram {
 public:
  PipedProgram(const std::vector<std::string>& argv, const std::vector<std::string>& environment) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    std::vector<std::string> arguments = argv;
    std::vector<char*> pointers;
    for (auto& argument : arguments) pointers.push_back(argument.data());
    pointers.push_back(nullptr);
    std::vector<std::string> variables = environment;
    std::vector<char*> env_pointers;
    // `environment` overrides what this process has (getenv finds the first entry of a name).
    auto overridden = [&](std::string_view entry) {
      return std::any_of(variables.begin(), variables.end(), [&](const std::string& variable) {
        const auto name = variable.substr(0, variable.find('=') + 1);
        return entry.substr(0, name.size()) == name;
      });
    };
    for (char** entry = environ; *entry != nullptr; ++entry) {
      if (!overridden(*entry)) env_pointers.push_back(*entry);
    }
    for (auto& variable : variables) env_pointers.push_back(variable.data());
    env_pointers.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::dup2(fds[1], STDERR_FILENO);
      ::execve(pointers[0], pointers.data(), env_pointers.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    read_fd_ = fds[0];
  }
  PipedProgram(const PipedProgram&) = delete;
  PipedProgram& operator=(const PipedProgram&) = delete;
  ~PipedProgram() {
    if (!exit_code_) {
      ::kill(pid_, SIGKILL);
      wait(5s);
    }
    close_pipe();
  }
  pid_t pid() const { return pid_; }
  const std::string& output() const { return output_; }
  void close_pipe() {
    if (read_fd_ >= 0) ::close(read_fd_);
    read_fd_ = -1;
  }
  // Reads what is there (for at most `wait_for`), so the program never blocks on a full pipe.
  void drain(std::chrono::milliseconds wait_for) {
    if (read_fd_ < 0) return;
    pollfd wanted{read_fd_, POLLIN, 0};
    if (::poll(&wanted, 1, static_cast<int>(wait_for.count())) <= 0) return;
    char buffer[8192];
    const auto got = ::read(read_fd_, buffer, sizeof buffer);
    if (got > 0) output_.append(buffer, static_cast<size_t>(got));
    if (got == 0) close_pipe();
  }
  // Reads until `done` holds or `timeout` passes.
  bool until(std::chrono::seconds timeout, const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      drain(20ms);
      if (read_fd_ < 0 && exited()) return done();
    }
    return done();
  }
  bool exited() {
    if (exit_code_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return exit_code_.has_value();
  }
  std::optional<int> wait(std::chrono::seconds timeout) {
    until(timeout, [&] { return exited(); });
    return exit_code_;
  }

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
  std::string output_;
  std::optional<int> exit_code_;
};

}  // namespace pgwaitprof::testing
