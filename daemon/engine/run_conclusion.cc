// The steps that conclude a run after its load (see run_state.h): the transaction log's
// latencies, the statements' deltas, the summary, the status and warnings, the run directory.
#include <fmt/format.h>

#include <exception>
#include <filesystem>

#include "base/logging.h"
#include "daemon/engine/fault_point.h"
#include "daemon/engine/run_state.h"
#include "exporters/render/report_render.h"
#include "loadgen/pgbench_log.h"
#include "model/cpu_profile.h"
#include "model/run_analysis.h"
#include "store/atomic_file.h"
#include "store/run_directory.h"
#include "store/run_index.h"
#include "store/run_to_run.h"

namespace pgwaitprof::engine::run_steps {
namespace {

using model::SystemClock;

auto run_conclusion_log() {
  static auto logger = base::component_logger("run");
  return logger;
}

// pgwaitprof's own COPY has no pgbench summary: one is made of it (a transaction per COPY).
void conclude_copy_from_stdin(RunState& state) {
  auto& run = state.run();
  run.clients = state.command.clients;
  if (auto summary = copy_summary(state.command.clients, state.scale, state.outcome.exit_code,
                                  state.load_elapsed)) {
    run.loadgen = std::move(summary);
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
  const auto options =
      latency_timeline_options(command, state.run().interval, start_wall, SystemClock::now());
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
  if (!state.session.connected() || !state.statements.usable) co_return;
  const auto after = co_await collectors::read_statement_stats(state.session);
  auto [deltas, texts] = statement_deltas(state.statements_before, after);
  recorder.set_statement_stats(std::move(deltas));
  recorder.on_statement_texts(texts);
}

void note_missing_statements(RunState& state) {
  auto note = missing_statements_note(state.run(), state.compute_query_id);
  if (!note.empty()) state.run().statements_note = std::move(note);
}

void conclude(RunState& state, base::RunControl& control) {
  auto& run = state.run();
  const auto kind = state.request.kind;
  // A recording window without a duration is meant to end with Ctrl-C.
  const bool interrupted =
      control.interrupted() &&
      !(kind == loadgen::LoadgenKind::kNone && state.request.record_duration <= base::Seconds(0) &&
        run.status == model::RunStatus::kCompleted);
  const bool expected =
      run.status == model::RunStatus::kCompleted && state.outcome.exit_code == 0 && !interrupted;
  if (state.copy_from_stdin) {
    conclude_copy_from_stdin(state);
  } else if (kind == loadgen::LoadgenKind::kPgbench) {
    read_loadgen_summary(run, state.stdout_text, state.stderr_text, expected);
  } else if (kind == loadgen::LoadgenKind::kSysbench) {
    read_sysbench_summary(run, state.request.pgbench_args, state.stdout_text, expected);
  } else {
    run.loadgen = server_summary(state.server_totals);
  }
  if (kind == loadgen::LoadgenKind::kPgbench) {
    if (auto work = work_done(state.request, run.loadgen,
                              {state.load_elapsed, state.scale, state.copy_bytes})) {
      run.work = std::move(work);
    }
  }
  const auto name = loadgen_name(state.request);
  LoadCheck check;
  check.loadgen_name = name;
  if (kind == loadgen::LoadgenKind::kCommand) check.elapsed = state.load_elapsed;
  check.interval = run.interval;
  // sysbench writes its errors to standard output: its whole output says why it failed.
  const std::string_view errors =
      kind == loadgen::LoadgenKind::kSysbench ? state.pgbench_log : state.stderr_text;
  settle_status(run,
                {interrupted, interrupted ? control.reason() : "", state.outcome.exit_code,
                 state.copy_from_stdin, errors},
                check);
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
    for (const auto& warning : warnings) run_conclusion_log()->warn("{}", warning);
    run.run_to_run = store::run_to_run(store::summarize(run, state.outcome.dir), past);
  } catch (const std::exception& error) {
    run_conclusion_log()->warn("no run-to-run spread: could not read the history of \"{}\": {}",
                               data_dir->string(), error.what());
  }
}

// Step 8: the run directory, report.json last. A run whose report cannot be kept is failed, and
// says why; no rendering that could say otherwise stays behind.
void write(RunState& state) {
  auto& run = state.run();
  const auto& dir = state.outcome.dir;
  auto failed =
      store::write_file_atomically(dir / loadgen_log_name(state.request.kind), state.pgbench_log);
  // The client backends' on-CPU stacks beside the wait stacks (waits.folded), for flamegraph.pl.
  if (!failed && run.cpu_profile) {
    const auto client = run.cpu_profile->groups.find(std::string(model::kCpuClientBackends));
    failed = store::write_file_atomically(
        dir / "cpu.folded",
        client == run.cpu_profile->groups.end() ? "" : model::folded_text(client->second));
  }
  if (!failed) {
    failed = store::write_run_directory(
        dir, run, exporters::run_directory_files(), [](store::RunWriteStep step) {
          fault_kill(step == store::RunWriteStep::kStaged ? "report-staged" : "report-committed");
        });
  }
  if (failed) {
    fail_report(run, failed->message);
    store::remove_rendered_files(dir, exporters::run_directory_files());
    std::error_code ignored;
    std::filesystem::remove(dir / "cpu.folded", ignored);
    // The failed status with its reason, where the disk allows; else the unfinished report
    // written at the start stays, which says failed too.
    (void)store::write_file_atomically(dir / "report.json", exporters::render_json(run));
    run_conclusion_log()->error("could not write run directory run_id={} dir={}: {}", run.id,
                                dir.string(), failed->message);
    return;
  }
  state.outcome.report_written = true;
}

}  // namespace pgwaitprof::engine::run_steps
