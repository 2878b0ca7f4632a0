// What the steps of one run (run_engine.cc) carry from step to step, the steps before the load
// that prepare it (run_preparation.cc) and those after it that conclude it (run_conclusion.cc);
// their pure parts are in run_steps.h.
#pragma once

#include <asio/awaitable.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/expected.h"
#include "base/run_control.h"
#include "collectors/kernel.h"
#include "collectors/pg_session.h"
#include "collectors/statements.h"
#include "daemon/engine/run_request.h"
#include "daemon/engine/run_steps.h"
#include "loadgen/loadgen_command.h"
#include "model/run.h"
#include "model/run_recorder.h"

namespace pgwaitprof::engine::run_steps {

// Everything one run carries from step to step.
struct RunState {
  RunState(asio::any_io_executor executor, RunRequest run_request)
      : request(std::move(run_request)), session(std::move(executor)) {}
  model::Run& run() { return outcome.run; }

  RunRequest request;
  RunOutcome outcome;
  collectors::PgSession session;  // the run's own connection: set-up, then run collectors
  // Its backend is pgwaitprof's, not the load's, in the kernel view (with the sampler's).
  collectors::OwnSession own_session{session};
  std::string loadgen;  // the load generator's path
  loadgen::LoadgenCommand command;
  std::string pgbench_log;  // everything the load generator (and pgbench -i) wrote
  // pg_stat_statements before the load, for deltas; compute_query_id's value.
  std::map<int64_t, collectors::StatementStats> statements_before;
  std::string compute_query_id;
  // What pg_stat_statements can give, decided once before the load (collectors/statements.h).
  collectors::StatementsAvailability statements;
  std::string stdout_text;
  std::string stderr_text;
  // The copy workload: COPY FROM STDIN by pgwaitprof (the server cannot read our files), the
  // scale, and the bytes of one client's COPY.
  bool copy_from_stdin = false;
  long long scale = 0;
  uint64_t copy_bytes = 0;
  base::Seconds load_elapsed{0};  // the load alone, without the checkpoint after it
  // The server's transactions over the run (server-side throughput).
  model::RunRecorder::ServerTotals server_totals;
};

// Step 3: pgbench's tables, created when missing (pgbench -i, interruptible).
asio::awaitable<base::Status> ensure_pgbench_tables(RunState& state, base::RunControl& control);
// Whether the server can read files pgwaitprof's host has: the sampler's --local, or (auto)
// whether the server runs on this host.
asio::awaitable<bool> server_shares_our_files(RunState& state,
                                              const collectors::TargetSampler& sampler);
// Step 4: the workload's set-up in the target, its script in the run directory, the command.
asio::awaitable<base::Status> prepare_workload(RunState& state);
// Step 4 for sysbench, a command or a recording window: the command line (none for a window),
// and sysbench's set-up step.
asio::awaitable<base::Status> prepare_other_loadgen(RunState& state, base::RunControl& control);
// A step of sysbench's before or after the sampled run (prepare, cleanup), not sampled; its
// output goes to the run's log.
asio::awaitable<base::Status> run_sysbench_step(RunState& state, base::RunControl& control,
                                                std::string_view step);

// Step 6b: latency percentiles from pgbench's per-transaction log.
void read_transaction_log(RunState& state, model::RunRecorder& recorder,
                          model::SystemClock::time_point start_wall);
// Step 6c: pg_stat_statements' calls and execution time over the run.
asio::awaitable<void> read_statements(RunState& state, model::RunRecorder& recorder);
// Why the statements section is empty, when it is.
void note_missing_statements(RunState& state);
// Step 7: the load generator's summary, the run's status and the warnings.
void conclude(RunState& state, base::RunControl& control);
// Step 7b: where a repeat of a completed run should land, from the comparable earlier runs of
// its data directory (store/run_to_run.h); its own report is not in the history yet.
void add_run_to_run(RunState& state);
// Step 8: the run directory. A run whose report cannot be kept is failed, and says why.
void write(RunState& state);

}  // namespace pgwaitprof::engine::run_steps
