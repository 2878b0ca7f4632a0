// `pgwaitprof run` in the foreground: the target (or a scratch cluster), a sampler of our own,
// the run orchestrator, and the report printed at the end.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace pgwaitprof::daemon {

struct RunCommand {
  std::optional<std::string> target;  // none: PG* variables if set, else a scratch cluster
  double hz = 100;
  int interval_s = 1;
  std::string workload = "tpcb";
  std::string label;
  std::filesystem::path data_dir;
  bool keep_cluster = false;
  bool no_daemon = false;
  config::Source source = config::Source::kAuto;
  int scale = 10;  // pgbench -i scale of a scratch cluster
  std::vector<std::string> pgbench_args;
};

// True when any PG* connection variable is set: then no target means "the environment's".
bool pg_environment_set();

// The default data directory of `run`: $PGWAITPROF_DATA_DIR, else $XDG_DATA_HOME/pgwaitprof,
// else ~/.local/share/pgwaitprof.
std::filesystem::path default_data_dir();

// Where `run` looks for a daemon's control socket: $PGWAITPROF_SOCKET, the data directory's,
// and the system service's.
std::vector<std::filesystem::path> daemon_sockets(const RunCommand& command);

int run_foreground(const RunCommand& command);

}  // namespace pgwaitprof::daemon
