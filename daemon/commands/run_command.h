// `pgwaitprof run`: one profiled benchmark run in the foreground. Through a daemon that already
// samples the target when there is one (so the server is not sampled twice), else with a sampler
// of its own on the target (or a scratch cluster made for the run); the report is printed at
// the end, also when the run failed or was interrupted, and also when its files could not be
// written.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/daemon_config.h"
#include "loadgen/loadgen_command.h"
#include "model/sampler_source.h"

namespace pgwaitprof::commands {

struct RunCommand {
  std::optional<std::string> target;  // none: PG* variables if set, else a scratch cluster
  std::optional<double> hz;           // none: the default rate
  int interval_s = 1;
  std::string workload;  // --workload; "" = none named (the default, or the user's -S, -f ...)
  std::string label;
  std::vector<std::string> tags;  // --tag KEY=VALUE, each checked by model::parse_tag
  std::filesystem::path data_dir;
  bool keep_cluster = false;
  bool no_daemon = false;
  bool keep_transaction_log = false;
  // One line at the end (the tps and where the report is) instead of the report, and no echo
  // of the load generator's output: for scripts that run several (deploy/quickstart.sh).
  bool brief = false;
  bool checkpoint_after = false;
  int cpu_profile_hz = 0;  // --cpu-profile[=HZ]; 0: none
  model::SamplerSource source = model::SamplerSource::kAuto;
  // Whether the server runs on this host (a scratch cluster always does).
  config::LocalMode local = config::LocalMode::kAuto;
  // --sampler-host ssh://[user@]host[:port]: the sampler runs there (engine/remote_sampler.h);
  // "" = here. --sampler-program: the pgwaitprof there.
  std::string sampler_host;
  std::string sampler_program = "pgwaitprof";
  int scale = 10;  // pgbench -i scale of a scratch cluster
  // --server-bin: the scratch cluster's build (a directory with initdb, pg_ctl and postgres).
  std::filesystem::path server_bin;
  // --loadgen: pgbench, sysbench or command; `record` sets none. pgbench_args holds the load
  // generator's arguments whichever it is (a command's whole argv).
  loadgen::LoadgenKind loadgen = loadgen::LoadgenKind::kPgbench;
  std::string setup_step;     // sysbench: run before sampling (prepare)
  std::string teardown_step;  // sysbench: run after sampling (cleanup)
  int record_duration_s = 0;  // record: 0 = until Ctrl-C
  std::vector<std::string> pgbench_args;
  std::optional<std::string> results_dsn;  // upload the run there (results_command.h)
};

// Where `run` looks for a daemon's control socket: $PGWAITPROF_SOCKET, the data directory's,
// and the system service's.
std::vector<std::filesystem::path> daemon_sockets(const RunCommand& command);

// The exit code: the load generator's, or 1 when the run failed. Also `record` (loadgen none).
int run_command(const RunCommand& command);

}  // namespace pgwaitprof::commands
