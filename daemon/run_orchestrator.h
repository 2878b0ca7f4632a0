// The run orchestrator: one profiled benchmark run, used alike by `run`, `matrix` and the
// daemon. It samples before the load generator starts and until it has ended, aligns pgbench's
// progress with the sampled timeline, and always writes the run directory, marked
// interrupted or failed when the run was.
#pragma once

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include <asio/awaitable.hpp>

#include "collectors/target_sampler.h"
#include "daemon/model/run.h"

namespace pgwaitprof::daemon {

struct RunRequest {
  std::string target_name = "default";
  std::string conninfo;  // "" = PG* environment variables
  std::string workload = "tpcb";
  std::string label;
  std::vector<std::string> pgbench_args;  // passed unchanged, after the workload's own
  std::chrono::seconds interval{1};
  std::filesystem::path data_dir;
  std::string loadgen = "pgbench";  // executable, looked up on PATH and PostgreSQL's bin dirs
  int init_scale = 10;  // pgbench -i scale when the target has no pgbench tables yet
  std::string variant;
  int repeat = 0;
  std::filesystem::path run_dir;  // where to write; default <data_dir>/runs/<run_id>
};

// What a run tells whoever started it, as it goes.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void on_started(const std::string& run_id, const std::filesystem::path& dir) {
    (void)run_id, (void)dir;
  }
  // Every line the load generator writes (progress lines included).
  virtual void on_loadgen_line(std::string_view line) { (void)line; }
  virtual void on_progress(const model::LoadgenProgress& progress) { (void)progress; }
};

// Lets a signal handler stop a run: the load generator gets SIGINT, the run is marked
// interrupted and its report is still written.
class RunControl {
 public:
  void interrupt();
  bool interrupted() const { return interrupted_; }
  void set_child(pid_t pid) { child_ = pid; }

 private:
  bool interrupted_ = false;
  pid_t child_ = -1;
};

struct RunOutcome {
  std::filesystem::path dir;
  model::Run run;
  int exit_code = 0;  // the load generator's, or 1 when the run failed before it started
};

std::string make_run_id(std::string_view label = "");

asio::awaitable<RunOutcome> execute_run(collectors::TargetSampler& sampler, RunRequest request,
                                        RunObserver& observer, RunControl& control);

// Writes report.json and every rendering of it into `dir` (atomically, file by file).
void write_run_directory(const std::filesystem::path& dir, const model::Run& run);

// The warnings a reader of the wait profile needs: a saturated client inflates ClientRead.
std::vector<std::string> bottleneck_warnings(const model::Run& run, int loadgen_threads);

}  // namespace pgwaitprof::daemon
