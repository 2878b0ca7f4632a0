// Matrix sweeps: runs of a plan (variants x clients x repeats), interleaved across variants so
// drift does not masquerade as a difference, each run through the run orchestrator; server
// settings per variant with ALTER SYSTEM (reset afterwards); resumable; and the tps x clients
// table at the end.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <asio/awaitable.hpp>

#include "collectors/target_sampler.h"
#include "config/config.h"
#include "daemon/run_orchestrator.h"

namespace pgwaitprof::daemon {

class ScratchCluster;

// One run of the plan, in execution order.
struct MatrixCellRun {
  std::string variant;
  int clients = 0;
  int repeat = 0;
  std::string name() const;  // "<variant>-c<clients>-r<repeat>", the run's directory name
};

// Repeat-major, then clients, then variants: A B A B, never A A B B.
std::vector<MatrixCellRun> matrix_order(const config::MatrixPlan& plan);

struct MatrixContext {
  config::MatrixPlan plan;
  std::filesystem::path dir;  // the matrix directory: plan.yaml, runs/, table.*
  std::string conninfo;
  // Executes one run: the run orchestrator with the caller's sampler (and, in the daemon, its
  // active-run metrics).
  std::function<asio::awaitable<RunOutcome>(RunRequest)> execute;
  ScratchCluster* scratch = nullptr;  // restarts for settings that need one
  RunControl& control;
  std::function<void(const std::string&)> say;  // progress lines
};

struct MatrixOutcome {
  int runs_total = 0;
  int runs_done = 0;      // completed before or now
  int runs_skipped = 0;   // already completed in the resumed directory
  bool interrupted = false;
  std::string table_text;
};

asio::awaitable<MatrixOutcome> execute_matrix(MatrixContext& context);

struct MatrixCommand {
  std::optional<std::filesystem::path> plan_path;
  std::optional<std::filesystem::path> resume_dir;
  std::filesystem::path data_dir;
};

// `pgwaitprof matrix`: its own sampler, and a scratch cluster when the plan names no target.
int run_matrix_command(const MatrixCommand& command);

}  // namespace pgwaitprof::daemon
