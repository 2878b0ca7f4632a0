// The pure parts of a run's steps (run_engine.cc, run_conclusion.cc): what the run record says
// from the request, the summary and work of a fixed-work or COPY load, the status a run ends
// with, the statements' deltas, the latency timeline's plan and the checkpoint's intervals.
// Values in, values out: no connection, no process, no file, so that each is tested on vectors
// (tests/daemon/engine/run_engine_steps_test.cc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/expected.h"
#include "collectors/sampler_options.h"
#include "collectors/statements.h"
#include "collectors/target_sampler.h"
#include "daemon/engine/run_request.h"
#include "loadgen/loadgen_command.h"
#include "loadgen/pgbench_log.h"
#include "model/run.h"
#include "model/run_recorder.h"

namespace pgwaitprof::engine::run_steps {

// The first failure decides the run's status and error; later ones only follow from it.
inline void fail(model::Run& run, const base::Error& error) {
  if (run.status != model::RunStatus::kCompleted) return;
  run.status = model::RunStatus::kFailed;
  run.error = error.message;
}

// "2026-12-03T10:04:05Z".
std::string iso_utc(model::SystemClock::time_point at);

// Step 1: what the request says of the run: label (control characters written out), target
// (password masked), workload, variant, repeat, the clients asked for (pgbench -c), the
// interval, the sampler's source and rate.
void describe_request(model::Run& run, const RunRequest& request,
                      const collectors::SamplerOptions& sampler);
// Step 5b: the source the sampler uses (auto's choice, here or on the sampler host), its rate,
// and the sampler host with the clocks' offset when the sampler runs there.
void note_sampler(model::Run& run, const collectors::TargetSampler& sampler);

// The summary of pgwaitprof's own COPY (one transaction per client's COPY), which pgbench would
// otherwise have printed; nullopt when the load failed or took no time.
std::optional<model::LoadgenSummary> copy_summary(int clients, long long scale, int exit_code,
                                                  base::Seconds load_elapsed);

// What a fixed-work run (the copy workload, pgbench -t) did and in how long; nullopt for a run
// of fixed duration, or one without a summary or elapsed time.
struct LoadFacts {
  base::Seconds elapsed{0};  // the load alone
  long long scale = 0;
  uint64_t copy_bytes = 0;  // one client's COPY
};
std::optional<model::WorkDone> work_done(const RunRequest& request,
                                         const std::optional<model::LoadgenSummary>& summary,
                                         const LoadFacts& load);

// pgbench's summary from its output, its aborted clients and clients; a summary that cannot
// be parsed is a warning only when the run otherwise succeeded (`expected`).
void read_loadgen_summary(model::Run& run, std::string_view stdout_text,
                          std::string_view stderr_text, bool expected);

// sysbench's summary from its output, its test's name from its arguments; a summary that
// cannot be found is a warning only when the run otherwise succeeded (`expected`).
void read_sysbench_summary(model::Run& run, const std::vector<std::string>& args,
                           std::string_view stdout_text, bool expected);

// The summary of a load generator that reports none (a command, a recording window): the
// server's transactions over the seconds its readings covered; nullopt without a reading.
std::optional<model::LoadgenSummary> server_summary(const model::RunRecorder::ServerTotals& totals);

// The run's workload as reports and the run_active metric name it: the user's pgbench scripts
// when they gave script options ("select-only", "file:bench.sql", model/pgbench_scripts.h),
// else the built-in workload; or "sysbench", "command", "record".
std::string workload_name(const RunRequest& request);

// The name errors give the load generator: "pgbench", "sysbench", or the command's executable.
std::string loadgen_name(const RunRequest& request);
// The file of the run directory that keeps the load generator's output: pgbench.log,
// sysbench.log, command.log, record.log.
std::string loadgen_log_name(loadgen::LoadgenKind kind);

// How the load ended, for the run's status.
struct LoadEnd {
  bool interrupted = false;
  std::string interrupt_reason;
  int exit_code = 0;             // the load generator's
  bool copy_from_stdin = false;  // pgwaitprof's COPY: its failure is already on the run
  std::string_view stderr_text;
};
// Which load generator it was, and what it must have done.
struct LoadCheck {
  std::string_view loadgen_name = "pgbench";
  // A command's run time, when one that ended before a timeline interval fails the run (there
  // was nothing to profile); none: not checked.
  std::optional<base::Seconds> elapsed;
  base::Seconds interval{1};
};
// Step 7's status: interrupted (with its reason) over failed (the load generator's failure)
// over completed; the first failure stays the run's error. The load generator's exit code, and
// the tail of its stderr when the run did not complete.
void settle_status(model::Run& run, const LoadEnd& end, const LoadCheck& check = {});

// A report that could not be written fails the run (a completed one), its error saying so.
void fail_report(model::Run& run, std::string_view message);

// pg_stat_statements' calls and mean execution time (ms) per query id over the run, from its
// figures before and after; statements not called during the run are left out.
struct StatementDeltas {
  std::map<int64_t, std::pair<uint64_t, base::Milliseconds>> deltas;  // calls, mean
  std::map<int64_t, std::string> texts;
};
StatementDeltas statement_deltas(const std::map<int64_t, collectors::StatementStats>& before,
                                 const std::map<int64_t, collectors::StatementStats>& after);

// Why a run that sampled has no statements ("" when it has some, or no reason is known).
std::string missing_statements_note(const model::Run& run, std::string_view compute_query_id);

// How the transaction log is read into the run's timeline: from the run's start, at its
// interval, with the command's columns and sampling rate, and no more intervals than the run
// can have had by `now` (plus two).
loadgen::LatencyTimelineOptions latency_timeline_options(const loadgen::LoadgenCommand& command,
                                                         base::Seconds interval,
                                                         model::SystemClock::time_point start_wall,
                                                         model::SystemClock::time_point now);

// The intervals the checkpoint after the run overlapped, marked, and their waits as its
// profile (the first may hold the end of the load too: a checkpoint can be shorter than one).
void mark_checkpoint_after(model::Run& run);

}  // namespace pgwaitprof::engine::run_steps
