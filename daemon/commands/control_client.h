// The client side of the daemon's control socket, used by `pgwaitprof run`: it asks a daemon
// that samples the target to run the benchmark, so the server is not sampled twice. It never
// waits forever: the connection and the first answer have timeouts, the daemon's "alive"
// events show it still works, and SIGINT/SIGTERM always act (the first asks the daemon to
// interrupt the run, the next gives up waiting).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "base/expected.h"
#include "daemon/engine/run_engine.h"

namespace pgwaitprof::commands {

struct RemoteRunResult {
  std::filesystem::path dir;
  int exit_code = 1;
  std::string status;  // the run's final status, and why when it did not complete
  std::string error;
};

// nullopt when no daemon can take the run (no socket, a stale one, a daemon that does not
// sample the target, or one we may not use: then `on_notice` says so) and the caller should
// sample by itself; an error when the daemon refused the run or stopped answering during it.
base::Expected<std::optional<RemoteRunResult>> run_through_daemon(
    const std::filesystem::path& socket, const engine::RunRequest& request,
    const std::function<void(const std::string&)>& on_line,
    const std::function<void(const std::string&)>& on_notice);

}  // namespace pgwaitprof::commands
