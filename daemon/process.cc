// fork/exec with pipes, and asynchronous reading of a child's output.
#include "daemon/process.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/this_coro.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <fmt/format.h>

extern char** environ;

namespace pgwaitprof::daemon {
namespace {

constexpr auto kAsTuple = asio::experimental::as_tuple(asio::use_awaitable);

}  // namespace

std::optional<RunAs> unprivileged_account() {
  if (geteuid() != 0) return std::nullopt;
  for (const char* name : {"postgres", "nobody"}) {
    if (const passwd* entry = getpwnam(name)) return RunAs{entry->pw_uid, entry->pw_gid, name};
  }
  throw std::runtime_error(
      "running as root and no unprivileged account (\"postgres\" or \"nobody\") exists to run the "
      "server as");
}

std::string find_executable(const std::string& name) {
  namespace fs = std::filesystem;
  auto executable = [](const fs::path& path) { return ::access(path.c_str(), X_OK) == 0; };
  if (name.find('/') != std::string::npos) return executable(name) ? name : "";
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const fs::path candidate = fs::path(rest.substr(0, colon)) / name;
      if (executable(candidate)) return candidate.string();
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  std::vector<fs::path> versions;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", error)) {
    versions.push_back(entry.path());
  }
  std::sort(versions.begin(), versions.end(), [](const fs::path& a, const fs::path& b) {
    return std::atoi(a.filename().c_str()) > std::atoi(b.filename().c_str());
  });
  for (const auto& version : versions) {
    if (executable(version / "bin" / name)) return (version / "bin" / name).string();
  }
  return "";
}

Child spawn(const std::vector<std::string>& argv, const std::optional<RunAs>& run_as,
            const std::vector<std::string>& extra_environment) {
  if (argv.empty()) throw std::runtime_error("could not execute an empty command");
  const std::string program = find_executable(argv[0]);
  if (program.empty()) {
    throw std::runtime_error(fmt::format("could not execute \"{}\": command not found", argv[0]));
  }
  int out[2], err[2], status[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      ::pipe2(status, O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("could not create pipe: {}", std::strerror(errno)));
  }
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> environment_strings;
  for (char** entry = environ; *entry; ++entry) environment_strings.emplace_back(*entry);
  for (const auto& extra : extra_environment) environment_strings.push_back(extra);
  std::vector<char*> environment;
  for (auto& entry : environment_strings) environment.push_back(entry.data());
  environment.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("could not fork: {}", std::strerror(errno)));
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    // Its own process group: a Ctrl-C at the terminal reaches us, and we decide what to stop.
    ::setpgid(0, 0);
    if (run_as) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(run_as->gid) != 0 || ::setuid(run_as->uid) != 0) {
        const int failure = errno;
        [[maybe_unused]] auto written = ::write(status[1], &failure, sizeof failure);
        ::_exit(127);
      }
    }
    ::execve(program.c_str(), args.data(), environment.data());
    const int failure = errno;
    [[maybe_unused]] auto written = ::write(status[1], &failure, sizeof failure);
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  ::close(status[1]);
  int failure = 0;
  const auto got = ::read(status[0], &failure, sizeof failure);
  ::close(status[0]);
  if (got == sizeof failure) {
    ::close(out[0]);
    ::close(err[0]);
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error(
        fmt::format("could not execute \"{}\": {}", argv[0], std::strerror(failure)));
  }
  return {pid, out[0], err[0]};
}

CommandResult run_command(const std::vector<std::string>& argv, const std::optional<RunAs>& run_as) {
  Child child = spawn(argv, run_as);
  CommandResult result;
  pollfd fds[2] = {{child.stdout_fd, POLLIN, 0}, {child.stderr_fd, POLLIN, 0}};
  int open_fds = 2;
  char buffer[4096];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
    for (auto& fd : fds) {
      if (fd.fd < 0 || !(fd.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const auto got = ::read(fd.fd, buffer, sizeof buffer);
      if (got > 0) {
        result.output.append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fd.fd);
        fd.fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

asio::awaitable<void> read_lines(asio::any_io_executor executor, int fd,
                                 std::function<void(std::string_view)> on_line) {
  asio::posix::stream_descriptor stream(executor, fd);
  std::string pending;
  char buffer[8192];
  for (;;) {
    auto [error, got] = co_await stream.async_read_some(asio::buffer(buffer), kAsTuple);
    pending.append(buffer, got);
    size_t start = 0;
    for (size_t newline; (newline = pending.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      std::string_view line(pending.data() + start, newline - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      on_line(line);
    }
    pending.erase(0, start);
    if (error) break;
  }
  if (!pending.empty()) on_line(pending);
}

asio::awaitable<CommandResult> run_command_async(const std::vector<std::string>& argv) {
  auto executor = co_await asio::this_coro::executor;
  Child child = spawn(argv);
  CommandResult result;
  auto append = [&](std::string_view line) {
    result.output.append(line);
    result.output.push_back('\n');
  };
  using namespace asio::experimental::awaitable_operators;
  co_await (read_lines(executor, child.stdout_fd, append) &&
            read_lines(executor, child.stderr_fd, append));
  result.exit_code = co_await wait_exit(executor, child.pid);
  co_return result;
}

asio::awaitable<int> wait_exit(asio::any_io_executor executor, pid_t pid) {
  asio::steady_timer timer(executor);
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) co_return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done < 0 && errno != EINTR) co_return -1;
    timer.expires_after(std::chrono::milliseconds(20));
    co_await timer.async_wait(kAsTuple);
  }
}

}  // namespace pgwaitprof::daemon
