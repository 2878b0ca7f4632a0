// Matrix sweeps: the runs of a plan (variants x clients x repeats), interleaved across variants
// so drift does not masquerade as a difference, each through the run engine; server settings
// per variant with ALTER SYSTEM, validated before anything changes and restored exactly
// afterwards (also on failure and interrupt); resumable; the tps x clients table at the end, and
// the matrix's own status (status.json) whatever happened.
#pragma once

#include <asio/awaitable.hpp>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/run_control.h"
#include "config/matrix_plan.h"
#include "daemon/engine/run_engine.h"

namespace pgwaitprof::engine {

class ScratchCluster;

// One run of the plan, in execution order.
struct MatrixCellRun {
  std::string variant;
  int clients = 0;
  int repeat = 0;
  std::string name() const;  // "<variant>-c<clients>-r<repeat>", the run's directory name
};

// `pg_config --configure` of a build, where pg_config is beside its server; "" otherwise.
std::string configure_options(const std::filesystem::path& server_bin);

// Repeat-major, then clients, then variants: A B A B, never A A B B.
std::vector<MatrixCellRun> matrix_order(const config::MatrixPlan& plan);

// The scratch cluster of one build, for a plan whose variants are builds (server_bin): the
// caller starts one per distinct server_bin and stops them after the matrix.
struct MatrixBuild {
  std::filesystem::path server_bin;
  std::string conninfo;
  ScratchCluster* scratch = nullptr;
};

struct MatrixContext {
  config::MatrixPlan plan;
  std::filesystem::path dir;  // the matrix directory: plan.yaml, runs/, table.*, status.json
  std::string conninfo;
  // Executes one run: the run engine with the caller's sampler (and, in the daemon, its
  // active-run metrics).
  std::function<asio::awaitable<RunOutcome>(RunRequest)> execute;
  ScratchCluster* scratch = nullptr;  // restarts for settings that need one
  base::RunControl& control;
  std::function<void(const std::string&)> say;  // progress lines
  // A plan of builds: each variant runs on the cluster of its server_bin (its requests carry
  // that cluster's conninfo), with its settings applied and restored there; conninfo and
  // scratch above are then unused. Empty: every variant runs on conninfo.
  std::vector<MatrixBuild> builds;
};

struct MatrixOutcome {
  int runs_total = 0;
  int runs_done = 0;     // completed before or now
  int runs_skipped = 0;  // already completed in the resumed directory
  bool interrupted = false;
  std::string error;  // why the matrix stopped early; "" when it did not
  std::string table_text;
};

asio::awaitable<MatrixOutcome> execute_matrix(MatrixContext& context);

// status.json of a matrix directory: completed, interrupted, incomplete or failed (with why),
// and the runs done. Written by execute_matrix, and by callers whose matrix could not start.
void write_matrix_status(const std::filesystem::path& dir, const MatrixOutcome& outcome);

// The plan file's text with every password removed from its target, for the copy kept in the
// matrix directory (a resume then takes the password from PGPASSWORD or ~/.pgpass).
std::string plan_text_without_password(const std::string& plan_text, const std::string& target);

}  // namespace pgwaitprof::engine
