// What starts a run, what it tells its caller as it goes, and what it ends with: the types the
// run engine (run_engine.h) and its steps (run_state.h, run_steps.h) share.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "loadgen/loadgen_command.h"
#include "model/run.h"

namespace pgwaitprof::engine {

// The workload of a pgbench run that names none and gives no script option of its own.
inline constexpr const char* kDefaultWorkload = "tpcb";

struct RunRequest {
  std::string target_name = "default";
  std::string conninfo;  // "" = PG* environment variables
  // A built-in workload (model/workloads.h); the user's own script options in pgbench_args
  // replace it (model/pgbench_scripts.h).
  std::string workload = kDefaultWorkload;
  std::string label;
  std::map<std::string, std::string> tags;  // --tag KEY=VALUE (model::parse_tag)
  // Which load generator: pgbench (the workload's), sysbench, any command, or none (`record`).
  loadgen::LoadgenKind kind = loadgen::LoadgenKind::kPgbench;
  // pgbench's and sysbench's arguments, passed unchanged (pgbench's after the workload's own);
  // a command's whole argv, its executable first (and in `loadgen`).
  std::vector<std::string> pgbench_args;
  base::Seconds interval{1};  // the timeline interval (pgbench -P: whole seconds)
  std::filesystem::path data_dir;
  std::string loadgen = "pgbench";  // executable, looked up on PATH and PostgreSQL's bin dirs
  int init_scale = 10;              // pgbench -i scale when the target has no pgbench tables yet
  std::string variant;
  int repeat = 0;
  std::filesystem::path run_dir;  // where to write; default <data_dir>/runs/<run_id>
  // pgbench's per-transaction log that pgwaitprof added for latency percentiles is removed
  // after it was read, unless this is set (--keep-transaction-log).
  bool keep_transaction_log = false;
  // CHECKPOINT when the load ends, timed and sampled as its own part of the run
  // (--checkpoint-after, a plan's checkpoint_after).
  bool checkpoint_after = false;
  // The caller (a matrix) holds the server's settings lock and journal: the run does not look
  // for an unfinished journal of another pgwaitprof (engine/settings_journal.h).
  bool holds_settings_lock = false;
  // sysbench's steps before and after the sampled run ("prepare", "cleanup"), not sampled.
  std::string setup_step;
  std::string teardown_step;
  // `record`: how long the window lasts; zero: until interrupted (Ctrl-C ends it, completed).
  base::Seconds record_duration{0};
  // --cpu-profile: on-CPU samples of the server's processes at this rate per CPU (1-999 Hz,
  // collectors/cpu_profile.h); 0: none.
  int cpu_profile_hz = 0;
};

// What a run tells whoever started it, as it goes.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_started(const std::string& run_id, const std::filesystem::path& dir) {
    (void)run_id, (void)dir;
  }
  // Every line the load generator writes (progress lines included), passwords masked.
  virtual void on_loadgen_line(std::string_view line) { (void)line; }
  virtual void on_progress(const model::LoadgenProgress& progress) { (void)progress; }
};

struct RunOutcome {
  std::filesystem::path dir;
  model::Run run;
  int exit_code = 0;            // the load generator's, or 1 when the run failed otherwise
  bool report_written = false;  // false: the directory could not be written (see run.error)
};

}  // namespace pgwaitprof::engine
