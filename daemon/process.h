// Child processes started without a shell (argv arrays): the load generator, and the set-up
// commands of a scratch cluster (initdb, pg_ctl, pgbench -i), optionally as another user.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>

namespace pgwaitprof::daemon {

struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;
};

// The account to run PostgreSQL server programs as: none when we are not root; the
// "postgres" system user (or "nobody") when we are, since the server refuses to run as root.
std::optional<RunAs> unprivileged_account();

struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;  // read ends, owned by the caller
  int stderr_fd = -1;
};

// Starts argv[0] (looked up on PATH) with stdout and stderr on pipes. Throws std::runtime_error
// "could not execute "NAME": REASON" when it cannot be started.
Child spawn(const std::vector<std::string>& argv, const std::optional<RunAs>& run_as = std::nullopt,
            const std::vector<std::string>& extra_environment = {});

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved as written
};

// Runs a set-up command to completion (blocking: only used before the I/O loop samples).
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::optional<RunAs>& run_as = std::nullopt);

// Runs a command to completion on the I/O thread without blocking it (pgbench -i, a warm-up).
asio::awaitable<CommandResult> run_command_async(const std::vector<std::string>& argv);

// Reads lines from `fd` (taking ownership) until end of file.
asio::awaitable<void> read_lines(asio::any_io_executor executor, int fd,
                                 std::function<void(std::string_view)> on_line);

// Waits for the child to exit without blocking the I/O thread; returns its exit code, or
// 128 + signal number when it was killed by a signal.
asio::awaitable<int> wait_exit(asio::any_io_executor executor, pid_t pid);

// The first executable named `name` on PATH, then in PostgreSQL's bin directories (newest
// first); "" when there is none. A name with a slash is returned as it is if executable.
std::string find_executable(const std::string& name);

}  // namespace pgwaitprof::daemon
