// Child processes started without a shell (argv arrays): the load generator, and the set-up
// commands of a scratch cluster (initdb, pg_ctl, pgbench -i), optionally as another user. A
// child starts with default signal dispositions and an empty signal mask (whatever the parent
// ignores), in its own process group (a Ctrl-C at the terminal reaches pgwaitprof, which decides
// what to stop), and dies with SIGTERM when pgwaitprof dies. Its exit is awaited through a pidfd
// registered with Asio, never by polling.
#pragma once

#include <sys/types.h>

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"

namespace pgwaitprof::engine {

struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;
};

// The account to run PostgreSQL server programs as: none when we are not root; the
// "postgres" system user (or "nobody") when we are, since the server refuses to run as root.
std::optional<RunAs> unprivileged_account();

struct SpawnOptions {
  std::optional<RunAs> run_as;
  // "NAME=value" entries added to the inherited environment (replacing the same names): how a
  // password reaches pgbench without appearing in its argv.
  std::vector<std::string> environment;
  // The child's stdin on a pipe whose write end is Child::stdin_fd (else /dev/null): the remote
  // sampler's channel.
  bool stdin_pipe = false;
};

struct Child {
  pid_t pid = -1;
  int pidfd = -1;      // readable once the child has exited
  int stdout_fd = -1;  // read ends, owned by the caller
  int stderr_fd = -1;
  int stdin_fd = -1;  // write end, with SpawnOptions::stdin_pipe
};

// Starts argv[0] (looked up on PATH) with stdout and stderr on pipes. The error is
// "could not execute "NAME": REASON".
base::Expected<Child> spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

struct CommandResult {
  int exit_code = -1;  // 128 + the signal number when it was killed by a signal
  std::string output;  // stdout and stderr, interleaved as written
};

// Runs a command to completion, blocking: only where no I/O loop runs (tests, a last clean-up).
CommandResult run_command(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// Runs a command to completion on the I/O thread without blocking it. `on_started` gets the
// child's pid (e.g. for RunControl, so an interrupt can stop it).
asio::awaitable<base::Expected<CommandResult>> run_command_async(
    const std::vector<std::string>& argv, const SpawnOptions& options = {},
    const std::function<void(pid_t)>& on_started = {});

// Reads lines from `fd` (taking ownership) until end of file.
asio::awaitable<void> read_lines(asio::any_io_executor executor, int fd,
                                 std::function<void(std::string_view)> on_line);

// Waits for the child to exit (its pidfd becomes readable) and reaps it; returns its exit code,
// or 128 + signal number when it was killed by a signal. Takes ownership of child.pidfd.
asio::awaitable<int> wait_exit(Child& child);

}  // namespace pgwaitprof::engine
