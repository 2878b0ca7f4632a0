// The steps that conclude a run after its load (see run_state.h): the transaction log's
// latencies, the statements' deltas, the summary, the status and warnings, the run directory.
#include <fmt/format.h>

#include <exception>
#include <filesystem>

#include "base/logging.h"
#include "daemon/engine/run_state.h"
#include "exporters/render/report_render.h"
#include "loadgen/pgbench_log.h"
#include "loadgen/pgbench_parser.h"
#include "model/run_analysis.h"
#include "model/workloads.h"
#include "store/atomic_file.h"
#include "store/run_directory.h"
#include "store/run_index.h"
#include "store/run_to_run.h"

namespace pgwaitprof::engine::run_steps {
namespace {

using model::SystemClock;
constexpr size_t kStderrTailBytes = 8192;

auto log() {
  static auto logger = base::component_logger("run");
  return logger;
}

// pgwaitprof's own COPY has no pgbench summary: one is made of it (a transaction per COPY).
void conclude_copy_from_stdin(RunState& state) {
  auto& run = state.run();
  run.clients = state.command.clients;
  if (state.outcome.exit_code != 0 || state.load_elapsed_s <= 0) return;
  model::LoadgenSummary summary;
  summary.transaction_type = fmt::format("COPY {} FROM STDIN", model::kCopyTargetTable);
  summary.scale = static_cast<double>(state.scale);
  summary.query_mode = "simple";
  summary.clients = state.command.clients;
  summary.threads = 1;
  summary.transactions = static_cast<uint64_t>(state.command.clients);
  summary.latency_avg_ms = state.load_elapsed_s * 1000;
  summary.tps = static_cast<double>(summary.transactions) / state.load_elapsed_s;
  run.loadgen = summary;
}

// Fixed-work runs (the copy workload, pgbench -t): what was done and in how long.
void record_work(RunState& state) {
  auto& run = state.run();
  const auto* workload = model::find_workload(state.request.workload);
  const bool fixed = (workload != nullptr && workload->fixed_work) ||
                     loadgen::pgbench_option(state.request.pgbench_args, 't', "transactions");
  if (!fixed || state.load_elapsed_s <= 0 || !run.loadgen) return;
  model::WorkDone work;
  work.transactions = run.loadgen->transactions;
  work.elapsed_s = state.load_elapsed_s;
  if (workload != nullptr && workload->copy) {
    work.rows = work.transactions * static_cast<uint64_t>(state.scale * model::kAccountsPerScale);
    work.bytes = work.transactions * state.copy_bytes;
  }
  run.work = work;
}

// pgbench's summary, parsed from its output.
void read_loadgen_summary(RunState& state, base::RunControl& control) {
  auto& run = state.run();
  try {
    run.loadgen = loadgen::parse_summary(state.stdout_text);
    run.loadgen->aborted = loadgen::aborted_clients(state.stderr_text);
    if (run.loadgen->clients > 0) run.clients = run.loadgen->clients;
  } catch (const loadgen::PgbenchParseError& error) {
    if (run.status == model::RunStatus::kCompleted && state.outcome.exit_code == 0 &&
        !control.interrupted()) {
      run.warnings.push_back(error.what());
    }
  }
}

}  // namespace

// Step 6b: latency percentiles from pgbench's per-transaction log, read as a stream (bounded
// memory at any transaction rate); the log is removed afterwards when pgwaitprof added it,
// unless it is to be kept.
void read_transaction_log(RunState& state, model::RunRecorder& recorder,
                          SystemClock::time_point start_wall) {
  const auto& command = state.command;
  if (command.transaction_log_prefix.empty()) return;
  std::error_code error;
  auto files = loadgen::list_log_files(command.transaction_log_prefix, error);
  if (files.empty()) return;
  loadgen::LatencyTimelineOptions options;
  options.start = start_wall;
  options.interval = std::chrono::duration_cast<std::chrono::microseconds>(state.run().interval);
  options.columns = command.transaction_log_columns;
  options.sampling_rate = command.transaction_log_sampling_rate;
  const double elapsed_s = std::chrono::duration<double>(SystemClock::now() - start_wall).count();
  options.max_intervals = static_cast<size_t>(elapsed_s / state.run().interval.count()) + 2;
  auto latency = loadgen::read_latency_timeline(loadgen::paths_of(files), options);
  for (const auto& problem : latency.errors) state.run().warnings.push_back(problem);
  if (latency.unparsable_lines > 0) {
    state.run().warnings.push_back(fmt::format(
        "{} line(s) of pgbench's transaction log could not be read", latency.unparsable_lines));
  }
  recorder.set_latency(std::move(latency));
  if (command.transaction_log_added && !state.request.keep_transaction_log) {
    for (const auto& file : files) std::filesystem::remove(file.path, error);
  }
}

// Step 6c: pg_stat_statements' calls and execution time over the run, and why statements may
// be missing.
asio::awaitable<void> read_statements(RunState& state, model::RunRecorder& recorder) {
  if (!state.session.connected()) co_return;
  const auto after = co_await collectors::read_statement_stats(state.session);
  std::map<int64_t, std::pair<uint64_t, double>> deltas;
  std::map<int64_t, std::string> texts;
  for (const auto& [query_id, stats] : after) {
    const auto before = state.statements_before.find(query_id);
    const uint64_t calls_before =
        before == state.statements_before.end() ? 0 : before->second.calls;
    const double time_before =
        before == state.statements_before.end() ? 0 : before->second.total_exec_ms;
    if (stats.calls <= calls_before) continue;
    const auto calls = stats.calls - calls_before;
    deltas[query_id] = {calls, (stats.total_exec_ms - time_before) / static_cast<double>(calls)};
    texts[query_id] = stats.text;
  }
  recorder.set_statement_stats(std::move(deltas));
  recorder.on_statement_texts(texts);
}

void note_missing_statements(RunState& state) {
  auto& run = state.run();
  if (!run.statements.empty() || run.profile.snapshots() == 0) return;
  if (run.environment.server_version_num > 0 && run.environment.server_version_num < 140000) {
    run.statements_note = "PostgreSQL 13 and older show no query_id in pg_stat_activity";
  } else if (state.compute_query_id != "on") {
    run.statements_note = fmt::format(
        "no query ids were sampled: compute_query_id is \"{}\"; turn it on with ALTER SYSTEM SET "
        "compute_query_id = on; SELECT pg_reload_conf(); (or load pg_stat_statements)",
        state.compute_query_id);
  }
}

// The intervals the checkpoint after the run overlapped, marked, and their waits as its
// profile (the first may hold the end of the load too: a checkpoint can be shorter than one).
void mark_checkpoint_after(model::Run& run) {
  if (!run.checkpoint_after) return;
  auto& checkpoint = *run.checkpoint_after;
  const double end_s = checkpoint.start_s + checkpoint.duration_s;
  for (auto& slice : run.timeline) {
    if (slice.start_s + slice.duration_s <= checkpoint.start_s || slice.start_s > end_s) continue;
    slice.checkpoint_after = true;
    checkpoint.profile.merge(slice.profile);
  }
}

void conclude(RunState& state, base::RunControl& control) {
  auto& run = state.run();
  if (state.copy_from_stdin) {
    conclude_copy_from_stdin(state);
  } else {
    read_loadgen_summary(state, control);
  }
  run.loadgen_exit_code = state.outcome.exit_code;
  record_work(state);
  if (control.interrupted()) {
    run.status = model::RunStatus::kInterrupted;
    run.error = control.reason();
  } else if (state.outcome.exit_code != 0 && !state.copy_from_stdin) {
    fail(run, {loadgen::describe_loadgen_failure(state.outcome.exit_code, state.stderr_text)});
  }
  if (run.status != model::RunStatus::kCompleted) {
    const auto& text = state.stderr_text;
    run.loadgen_stderr =
        text.size() > kStderrTailBytes ? text.substr(text.size() - kStderrTailBytes) : text;
  }
  auto warnings = model::bottleneck_warnings(run, state.command.threads);
  run.warnings.insert(run.warnings.end(), warnings.begin(), warnings.end());
}

void add_run_to_run(RunState& state) {
  auto& run = state.run();
  if (run.status != model::RunStatus::kCompleted) return;
  const auto data_dir = store::data_dir_of(state.outcome.dir);
  if (!data_dir) return;
  // The history is read for a figure the report can do without: nothing it throws may cost
  // the run its report.
  try {
    std::vector<std::string> warnings;
    const auto past = store::load_history(*data_dir, &warnings);
    for (const auto& warning : warnings) log()->warn("{}", warning);
    run.run_to_run = store::run_to_run(store::summarize(run, state.outcome.dir), past);
  } catch (const std::exception& error) {
    log()->warn("no run-to-run spread: could not read the history of \"{}\": {}",
                data_dir->string(), error.what());
  }
}

// Step 8: the run directory, report.json last. A run whose report cannot be kept is failed, and
// says why; no rendering that could say otherwise stays behind.
void write(RunState& state) {
  auto& run = state.run();
  const auto& dir = state.outcome.dir;
  auto failed = store::write_file_atomically(dir / "pgbench.log", state.pgbench_log);
  if (!failed) failed = store::write_run_directory(dir, run, exporters::run_directory_files());
  if (failed) {
    if (run.status == model::RunStatus::kCompleted) run.status = model::RunStatus::kFailed;
    run.error = run.error.empty() ? "could not write the report: " + failed->message
                                  : run.error + "; could not write the report: " + failed->message;
    store::remove_rendered_files(dir, exporters::run_directory_files());
    // The failed status with its reason, where the disk allows; else the unfinished report
    // written at the start stays, which says failed too.
    (void)store::write_file_atomically(dir / "report.json", exporters::render_json(run));
    log()->error("could not write run directory run_id={} dir={}: {}", run.id, dir.string(),
                 failed->message);
    return;
  }
  state.outcome.report_written = true;
}

}  // namespace pgwaitprof::engine::run_steps
