// What the integration tests and the benchmark both need: a child process whose output goes
// to a file (killed when dropped while running), and blocking /metrics scrapes over loopback.
// Blocking is fine in both: nothing else runs on the calling thread meanwhile.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace pgwaitprof::testing {

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log_path) {
    const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      throw std::runtime_error("could not open file \"" + log_path.string() +
                               "\": " + std::strerror(errno));
    }
    // Built before fork: the child may only make async-signal-safe calls.
    std::vector<std::string> arguments = argv;
    std::vector<char*> pointers;
    for (auto& argument : arguments) pointers.push_back(argument.data());
    pointers.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
      ::execv(pointers[0], pointers.data());
      ::_exit(127);
    }
    ::close(log_fd);
    if (pid_ < 0) throw std::runtime_error(std::string("could not fork: ") + std::strerror(errno));
    log_path_ = log_path;
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      wait(std::chrono::seconds(5));
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
  void signal(int number) { ::kill(pid_, number); }
  // Ends it (SIGTERM, then up to 10 s): whether it still ran when asked to end.
  bool end() {
    const bool was_running = running();
    signal(SIGTERM);
    wait(std::chrono::seconds(10));
    return was_running;
  }
  // The exit code, or nullopt when it still runs after `timeout`.
  std::optional<int> wait(std::chrono::steady_clock::duration timeout = std::chrono::minutes(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return exit_code_;
  }
  // Everything it has written so far.
  std::string log() const {
    std::string text;
    if (FILE* file = std::fopen(log_path_.c_str(), "r")) {
      char buffer[4096];
      for (size_t got; (got = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
        text.append(buffer, got);
      std::fclose(file);
    }
    return text;
  }

 private:
  std::filesystem::path log_path_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// GET http://127.0.0.1:PORT/metrics; "" when nothing answers (not up yet, or gone).
inline std::string scrape(int port) {
  try {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    socket.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
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
    if (line.starts_with(series)) return std::stod(line.substr(line.rfind(' ') + 1));
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace pgwaitprof::testing
