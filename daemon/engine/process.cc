// fork/exec with pipes, pidfds, and asynchronous reading of a child's output.
#include "daemon/engine/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <linux/close_range.h>
#include <poll.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "base/as_tuple.h"
#include "base/programs.h"
#include "daemon/engine/supervisor.h"

extern char** environ;

namespace pgwaitprof::engine {
namespace {

using base::kAsTuple;

int exit_code_of(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The inherited environment with `extra` entries added, an entry of the same name replaced.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto name = text.substr(0, text.find('=') + 1);
    const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const std::string& added) {
      return added.starts_with(name);
    });
    if (!replaced) entries.emplace_back(text);
  }
  entries.insert(entries.end(), extra.begin(), extra.end());
  return entries;
}

// In the child between fork and exec: only async-signal-safe calls. Never returns.
[[noreturn]] void exec_child(const std::string& program, char** args, char** environment,
                             const std::optional<RunAs>& run_as, pid_t parent, int in, int out,
                             int err, int status) {
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  const int devnull = in >= 0 ? in : ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  // Nothing else we hold (sockets, the control socket's clients) may leak into the child.
  ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  // The daemon ignores SIGPIPE and blocks signals for Asio; the child must start clean.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    ::signal(signal_number, SIG_DFL);
  }
  ::setpgid(0, 0);
  auto fail = [&] {
    const int failure = errno;
    [[maybe_unused]] auto written = ::write(status, &failure, sizeof failure);
    ::_exit(127);
  };
  if (run_as &&
      (::setgroups(0, nullptr) != 0 || ::setgid(run_as->gid) != 0 || ::setuid(run_as->uid) != 0)) {
    fail();
  }
  // After setuid, which clears it: the child dies with us, and never outlives a dead parent.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(127);
  ::execve(program.c_str(), args, environment);
  fail();
  ::_exit(127);
}

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

base::Expected<Child> spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) return base::Error{"could not execute an empty command"};
  const std::string program = base::find_executable(argv[0]);
  if (program.empty())
    return base::Error{fmt::format("could not execute \"{}\": command not found", argv[0])};
  int out[2], err[2], status[2], in[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      ::pipe2(status, O_CLOEXEC) != 0 || (options.stdin_pipe && ::pipe2(in, O_CLOEXEC) != 0)) {
    return base::Error{fmt::format("could not create pipe: {}", std::strerror(errno))};
  }
  // Built before fork: the child may only make async-signal-safe calls.
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  auto environment_strings = child_environment(options.environment);
  std::vector<char*> environment;
  for (auto& entry : environment_strings) environment.push_back(entry.data());
  environment.push_back(nullptr);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return base::Error{fmt::format("could not fork: {}", std::strerror(errno))};
  if (pid == 0) {
    exec_child(program, args.data(), environment.data(), options.run_as, parent, in[0], out[1],
               err[1], status[1]);
  }
  if (in[0] >= 0) ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::close(status[1]);
  int failure = 0;
  ssize_t got = 0;
  while ((got = ::read(status[0], &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  ::close(status[0]);
  if (got == sizeof failure) {
    ::close(out[0]);
    ::close(err[0]);
    if (in[1] >= 0) ::close(in[1]);
    ::waitpid(pid, nullptr, 0);
    return base::Error{
        fmt::format("could not execute \"{}\": {}", argv[0], std::strerror(failure))};
  }
  // The child exists and is not reaped yet, so its pid cannot have been reused.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    const int open_error = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(out[0]);
    ::close(err[0]);
    if (in[1] >= 0) ::close(in[1]);
    return base::Error{
        fmt::format("could not open a pidfd for \"{}\": {}", argv[0], std::strerror(open_error))};
  }
  ::fcntl(pidfd, F_SETFD, FD_CLOEXEC);
  // Its process group outlives nothing of ours, not even a SIGKILL of pgwaitprof.
  supervise_process_group(pid);
  return Child{pid, pidfd, out[0], err[0], in[1]};
}

CommandResult run_command(const std::vector<std::string>& argv, const SpawnOptions& options) {
  auto child = spawn(argv, options);
  CommandResult result;
  if (!child) {
    result.output = child.error().message;
    return result;
  }
  ::close(child->pidfd);
  pollfd fds[2] = {{child->stdout_fd, POLLIN, 0}, {child->stderr_fd, POLLIN, 0}};
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
  while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
  }
  release_process_group(child->pid);
  result.exit_code = exit_code_of(status);
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

asio::awaitable<int> wait_exit(Child& child) {
  asio::posix::stream_descriptor pidfd(co_await asio::this_coro::executor, child.pidfd);
  child.pidfd = -1;
  co_await pidfd.async_wait(asio::posix::stream_descriptor::wait_read, kAsTuple);
  int status = 0;
  // Readable means exited: this waitpid returns at once.
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  release_process_group(child.pid);
  co_return exit_code_of(status);
}

asio::awaitable<base::Expected<CommandResult>> run_command_async(
    const std::vector<std::string>& argv, const SpawnOptions& options,
    const std::function<void(pid_t)>& on_started) {
  auto executor = co_await asio::this_coro::executor;
  auto child = spawn(argv, options);
  if (!child) co_return child.error();
  if (on_started) on_started(child->pid);
  CommandResult result;
  auto append = [&](std::string_view line) {
    result.output.append(line);
    result.output.push_back('\n');
  };
  using namespace asio::experimental::awaitable_operators;
  co_await (read_lines(executor, child->stdout_fd, append) &&
            read_lines(executor, child->stderr_fd, append));
  result.exit_code = co_await wait_exit(*child);
  co_return result;
}

}  // namespace pgwaitprof::engine
