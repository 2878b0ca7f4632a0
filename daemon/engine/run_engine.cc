// One profiled run, start to report, in named steps.
#include "daemon/engine/run_engine.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <mutex>
#include <set>

#include "base/logging.h"
#include "base/programs.h"
#include "collectors/host.h"
#include "collectors/kernel.h"
#include "collectors/registry.h"
#include "collectors/remote_cpu_profile.h"
#include "collectors/server_description.h"
#include "collectors/statements.h"
#include "daemon/engine/fault_point.h"
#include "daemon/engine/process.h"
#include "daemon/engine/run_state.h"
#include "daemon/engine/settings_journal.h"
#include "exporters/render/report_render.h"
#include "loadgen/copy_load.h"
#include "loadgen/loadgen_command.h"
#include "loadgen/pgbench_parser.h"
#include "loadgen/sysbench_parser.h"
#include "model/pgbench_scripts.h"
#include "model/run_analysis.h"
#include "model/run_recorder.h"
#include "model/workloads.h"
#include "store/atomic_file.h"
#include "store/run_directory.h"

namespace pgwaitprof::engine {
namespace {

using namespace std::chrono_literals;
using namespace run_steps;
using model::SteadyClock;
using model::SystemClock;
constexpr auto kConnectTimeout = 10s;
// One attempt to get the run's connection back mid-run: short, as the collectors that read the
// host wait for it.
constexpr std::chrono::milliseconds kReconnectTimeout = 2s;
constexpr auto kFirstSampleTimeout = 10s;

auto run_engine_log() {
  static auto logger = base::component_logger("run");
  return logger;
}

// Step 1: who the run is.
void begin(RunState& state, const collectors::TargetSampler& sampler) {
  auto& run = state.run();
  const auto& request = state.request;
  run.id = store::make_run_id(request.label);
  describe_request(run, request, sampler.options());
  run.started_at = iso_utc(SystemClock::now());
  state.outcome.dir =
      request.run_dir.empty() ? request.data_dir / "runs" / run.id : request.run_dir;
  collectors::describe_host(run.environment);
}

// Step 2: the run's connection, and what the server is.
asio::awaitable<base::Status> connect_target(RunState& state) {
  const auto kind = state.request.kind;
  if (kind == loadgen::LoadgenKind::kPgbench &&
      model::find_workload(state.request.workload) == nullptr) {
    co_return base::Error{fmt::format("unknown workload \"{}\"", state.request.workload)};
  }
  // The user's script options are the workload; a built-in other than the default beside them
  // would be dropped silently. (The callers refuse an explicit default beside them: they know
  // whether it was named.)
  if (kind == loadgen::LoadgenKind::kPgbench && state.request.workload != kDefaultWorkload) {
    if (auto conflict =
            model::workload_conflict(state.request.workload, state.request.pgbench_args)) {
      co_return base::Error{*conflict};
    }
  }
  if (kind == loadgen::LoadgenKind::kCommand && state.request.pgbench_args.empty()) {
    co_return base::Error{"no command given: put it after \"--\""};
  }
  if (kind != loadgen::LoadgenKind::kNone) {
    state.loadgen = base::find_executable(state.request.loadgen);
    if (state.loadgen.empty()) {
      co_return base::Error{
          fmt::format("could not find load generator \"{}\"", state.request.loadgen)};
    }
  }
  if (auto error = co_await state.session.connect(state.request.conninfo, kConnectTimeout)) {
    co_return base::Error{
        fmt::format("could not connect to \"{}\": {}", state.run().target, error->message)};
  }
  // Settings a killed matrix left on the server are put back before they could skew this run.
  if (!state.request.holds_settings_lock) {
    if (auto failed = co_await recover_abandoned_settings(state.session)) co_return failed;
  }
  if (auto error = co_await collectors::describe_server(state.session, state.run().environment)) {
    co_return base::Error{fmt::format("could not describe server: {}", error->message)};
  }
  state.compute_query_id = co_await collectors::compute_query_id(state.session);
  state.statements = co_await collectors::statements_availability(state.session);
  if (!state.statements.note.empty()) {
    run_engine_log()->info("pg_stat_statements off for this run reason=\"{}\" target={}",
                           state.statements.note, state.request.target_name);
  }
  if (state.statements.usable) {
    state.statements_before = co_await collectors::read_statement_stats(state.session);
  }
  co_return std::nullopt;
}

// Step 5: the sampler delivers: nothing is run that could not be profiled.
asio::awaitable<base::Status> wait_for_sampler(RunState& state, collectors::TargetSampler& sampler,
                                               base::RunControl& control) {
  using namespace asio::experimental::awaitable_operators;
  auto sampled =
      co_await (sampler.wait_for_sample(kFirstSampleTimeout) || control.wait_interrupted());
  if (control.interrupted()) co_return base::Error{control.reason()};
  if (sampled.index() == 0 && std::get<0>(sampled)) co_return std::nullopt;
  co_return base::Error{
      fmt::format("could not sample \"{}\": {}", state.run().target,
                  sampler.last_error().empty() ? "no sample in 10 s" : sampler.last_error())};
}

// The load generator: pgbench as a child, its output read line by line until it exits.
asio::awaitable<void> run_pgbench(RunState& state, RunObserver& observer, base::RunControl& control,
                                  model::RunRecorder& recorder, Child& child) {
  auto executor = co_await asio::this_coro::executor;
  const auto kind = state.request.kind;
  const double interval_s = state.command.interval.count();
  auto on_stdout = [&](std::string_view raw) {
    const auto line = collectors::mask_secrets(raw);
    state.stdout_text.append(line).push_back('\n');
    state.pgbench_log.append(line).push_back('\n');
    // sysbench reports on stdout.
    if (kind == loadgen::LoadgenKind::kSysbench) {
      if (auto progress = loadgen::parse_sysbench_progress(line, interval_s)) {
        recorder.add_progress(*progress, SteadyClock::now());
        observer.on_progress(*progress);
      }
    }
    observer.on_loadgen_line(line);
  };
  auto on_stderr = [&](std::string_view raw) {
    const auto line = collectors::mask_secrets(raw);
    state.stderr_text.append(line).push_back('\n');
    state.pgbench_log.append(line).push_back('\n');
    if (kind != loadgen::LoadgenKind::kPgbench) {
      observer.on_loadgen_line(line);
      return;
    }
    if (auto progress = loadgen::parse_progress_line(line)) {
      recorder.add_progress(*progress, SteadyClock::now());
      observer.on_progress(*progress);
    }
    observer.on_loadgen_line(line);
  };
  using namespace asio::experimental::awaitable_operators;
  co_await (read_lines(executor, child.stdout_fd, on_stdout) &&
            read_lines(executor, child.stderr_fd, on_stderr));
  state.outcome.exit_code = co_await wait_exit(child);
  control.clear_child();
}

// The copy workload elsewhere than on the server's host: COPY FROM STDIN by pgwaitprof.
asio::awaitable<void> run_copy_from_stdin(RunState& state, RunObserver& observer,
                                          base::RunControl& control) {
  const int clients = state.command.clients;
  const auto line = fmt::format("pgwaitprof: {} x COPY {} FROM STDIN, {} rows each", clients,
                                model::kCopyTargetTable, state.scale * model::kAccountsPerScale);
  state.pgbench_log += line + "\n";
  observer.on_loadgen_line(line);
  auto copied =
      co_await loadgen::copy_from_stdin(state.request.conninfo, clients, state.scale, control);
  state.outcome.exit_code = copied.error.empty() ? 0 : 1;
  state.copy_bytes = clients > 0 ? copied.bytes / static_cast<uint64_t>(clients) : 0;
  if (!copied.error.empty()) {
    state.stderr_text += copied.error + "\n";
    state.pgbench_log += copied.error + "\n";
    fail(state.run(), {copied.error});
  }
}

// A recording window: until its duration has passed or the run is interrupted (Ctrl-C ends a
// window without a duration, which is how it is meant to end).
asio::awaitable<void> record_window(RunState& state, base::RunControl& control) {
  using namespace asio::experimental::awaitable_operators;
  const auto duration = state.request.record_duration;
  const auto line = duration > base::Seconds(0)
                        ? fmt::format("pgwaitprof: recording for {:g} s", duration.count())
                        : std::string("pgwaitprof: recording until interrupted (Ctrl-C)");
  state.pgbench_log += line + "\n";
  run_engine_log()->info("started recording window run_id={} seconds={:g}", state.run().id,
                         duration.count());
  if (duration > base::Seconds(0)) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(duration));
    co_await (timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable)) ||
              control.wait_interrupted());
  } else {
    co_await control.wait_interrupted();
  }
  state.outcome.exit_code = 0;
}

// --checkpoint-after: CHECKPOINT on a connection of its own (the run's is the collectors'),
// timed; the sampler and the collectors go on meanwhile.
asio::awaitable<void> checkpoint_after(RunState& state, SteadyClock::time_point start) {
  model::CheckpointAfter checkpoint;
  const auto began = SteadyClock::now();
  checkpoint.start = began - start;
  collectors::PgSession session(co_await asio::this_coro::executor);
  const collectors::OwnSession own(session);  // its backend is pgwaitprof's in the kernel view
  if (auto error = co_await session.connect(state.request.conninfo, kConnectTimeout)) {
    checkpoint.error = "could not connect: " + error->message;
  } else if (auto done = co_await session.execute("CHECKPOINT"); !done.ok()) {
    checkpoint.error = done.error->message;
  }
  checkpoint.duration = SteadyClock::now() - began;
  run_engine_log()->info("checkpoint after the run run_id={} took {:.2f} s{}", state.run().id,
                         checkpoint.duration.count(),
                         checkpoint.error.empty() ? "" : ": " + checkpoint.error);
  state.run().checkpoint_after = std::move(checkpoint);
}

// --cpu-profile: the collector (this host's, or the sampler host's), or none with a warning in
// the run and the log that says why.
asio::awaitable<std::unique_ptr<collectors::Collector>> open_cpu_profile(
    RunState& state, collectors::TargetSampler& sampler) {
  if (state.request.cpu_profile_hz <= 0) co_return nullptr;
  auto opened = co_await collectors::open_run_cpu_profile(state.session, sampler,
                                                          state.request.cpu_profile_hz);
  if (opened) {
    run_engine_log()->info("cpu profile on run_id={} hz={}", state.run().id,
                           state.request.cpu_profile_hz);
    co_return std::move(*opened);
  }
  const auto warning = "no CPU profile: " + opened.error().message;
  run_engine_log()->warn("{} run_id={}", warning, state.run().id);
  state.run().warnings.push_back(warning);
  co_return nullptr;
}

// Step 6: the load (pgbench, or pgwaitprof's own COPY), with the recorder attached to the
// sampler and the run collectors (background activity, host CPU) on the run's connection
// meanwhile, then the checkpoint after it when asked for.
asio::awaitable<base::Status> run_loadgen(RunState& state, RunObserver& observer,
                                          base::RunControl& control, model::RunRecorder& recorder,
                                          collectors::TargetSampler& sampler,
                                          SteadyClock::time_point start) {
  auto executor = co_await asio::this_coro::executor;
  std::optional<Child> child;
  const bool window = state.request.kind == loadgen::LoadgenKind::kNone;
  if (!state.copy_from_stdin && !window) {
    auto spawned = spawn(state.command.argv, {std::nullopt, state.command.environment});
    if (!spawned) co_return spawned.error();
    child.emplace(std::move(*spawned));
    control.set_child(child->pid);
    run_engine_log()->info("started load generator run_id={} pid={} argv=\"{}\"", state.run().id,
                           child->pid, fmt::join(state.run().loadgen_argv, " "));
  }
  base::AsyncEvent finished(executor);
  // The server counts pgwaitprof's own queries too: the sampler's and this run's session's.
  auto own_statements = [&sampler, &state] {
    return sampler.own_statements() + state.session.statements();
  };
  // Its own statement: GCC 12 miscompiles a co_await inside a braced initializer.
  auto cpu_profile = co_await open_cpu_profile(state, sampler);
  auto collectors = collectors::make_run_collectors(
      {child ? child->pid : getpid(), state.run().interval, own_statements, state.statements.usable,
       std::move(cpu_profile)});
  auto load = [&]() -> asio::awaitable<void> {
    const auto began = SteadyClock::now();
    if (child) {
      co_await run_pgbench(state, observer, control, recorder, *child);
    } else if (window) {
      co_await record_window(state, control);
    } else {
      co_await run_copy_from_stdin(state, observer, control);
    }
    state.load_elapsed = SteadyClock::now() - began;
    if (state.request.checkpoint_after && !control.interrupted()) {
      co_await checkpoint_after(state, start);
    }
    finished.set();
  };
  using namespace asio::experimental::awaitable_operators;
  // The latest snapshot, for the CPU profile's backend types (the sampler reuses its object).
  const collectors::CollectContext context{&state.session, &recorder, nullptr,
                                           sampler.latest_snapshot(), start};
  // The run's connection comes back after a restart of the server, as the sampler's does. A
  // named object, not a temporary: GCC 12 destroys a temporary of a co_await's expression twice.
  const collectors::ScheduleReconnect reconnect{state.request.conninfo, kReconnectTimeout};
  co_await (load() && collectors::run_schedule(collectors, context, start, finished, &reconnect));
  co_return std::nullopt;
}

// Staged renderings put in place or removed (store::finish_interrupted_writes), once per data
// directory and process: the daemon's later runs need not walk its history again.
void finish_interrupted_writes_once(const std::filesystem::path& data_dir) {
  static std::mutex mutex;
  static std::set<std::filesystem::path> finished;
  {
    const std::lock_guard lock(mutex);
    if (!finished.insert(data_dir).second) return;
  }
  if (const int handled = store::finish_interrupted_writes(data_dir); handled > 0) {
    run_engine_log()->warn("finished {} file(s) a killed pgwaitprof left half written dir={}",
                           handled, data_dir.string());
  }
}

// The steps before the load: the data and run directories with the unfinished report, the run's
// session, the load's tables, set-up and command, and the sampler ready.
asio::awaitable<base::Status> prepare_run(RunState& state, collectors::TargetSampler& sampler,
                                          RunObserver& observer, base::RunControl& control) {
  auto& run = state.run();
  // What a pgwaitprof killed while it wrote a report left in this data directory: once.
  if (state.request.run_dir.empty()) finish_interrupted_writes_once(state.request.data_dir);
  // A new data directory is its owner's only (0700); the run directory in it 0750.
  base::Status failed =
      state.request.run_dir.empty()
          ? store::create_private_directories(state.request.data_dir, store::kDataDirectoryMode)
          : std::nullopt;
  if (!failed) failed = store::create_private_directories(state.outcome.dir);
  if (!failed)
    failed = store::write_unfinished_report(state.outcome.dir, run, &exporters::render_json);
  if (!failed) observer.on_started(run.id, state.outcome.dir);
  if (!failed) failed = co_await connect_target(state);
  const bool pgbench = state.request.kind == loadgen::LoadgenKind::kPgbench;
  if (!failed && pgbench) failed = co_await ensure_pgbench_tables(state, control);
  if (!failed && pgbench && model::find_workload(state.request.workload)->copy) {
    state.copy_from_stdin = !co_await server_shares_our_files(state, sampler);
  }
  if (!failed && pgbench) failed = co_await prepare_workload(state);
  if (!failed && !pgbench) failed = co_await prepare_other_loadgen(state, control);
  if (!failed) failed = co_await wait_for_sampler(state, sampler, control);
  co_return failed;
}

// The load under the sampler, then what is read at its end: the traced source's last read,
// pgbench's transaction log, the statements, and sysbench's clean-up step.
asio::awaitable<base::Status> sample_load(RunState& state, collectors::TargetSampler& sampler,
                                          RunObserver& observer, base::RunControl& control,
                                          model::RunRecorder& recorder,
                                          SteadyClock::time_point start,
                                          SystemClock::time_point start_wall) {
  auto& run = state.run();
  sampler.add_sink(&recorder);
  const auto failed = co_await run_loadgen(state, observer, control, recorder, sampler, start);
  co_await sampler.read_traced_now();
  sampler.remove_sink(&recorder);
  read_transaction_log(state, recorder, start_wall);
  co_await read_statements(state, recorder);
  if (!state.request.teardown_step.empty() && state.session.connected()) {
    if (auto torn = co_await run_sysbench_step(state, control, state.request.teardown_step)) {
      run.warnings.push_back(torn->message);
    }
  }
  co_return failed;
}

}  // namespace

asio::awaitable<RunOutcome> execute_run(collectors::TargetSampler& sampler, RunRequest request,
                                        RunObserver& observer, base::RunControl& control) {
  RunState state(co_await asio::this_coro::executor, std::move(request));
  begin(state, sampler);
  auto& run = state.run();
  state.outcome.exit_code = 1;
  base::Status failed = co_await prepare_run(state, sampler, observer, control);
  note_sampler(run, sampler);

  const auto start = SteadyClock::now();
  const auto start_wall = SystemClock::now();
  model::RunRecorder recorder(start, start_wall, run.interval);
  recorder.set_throughput_from_server(state.request.kind == loadgen::LoadgenKind::kCommand ||
                                      state.request.kind == loadgen::LoadgenKind::kNone);
  if (!failed && !control.interrupted()) {
    failed = co_await sample_load(state, sampler, observer, control, recorder, start, start_wall);
  }
  state.server_totals = recorder.server_totals();
  if (failed && !control.interrupted()) fail(run, *failed);
  recorder.finish(SteadyClock::now(), run);
  mark_checkpoint_after(run);
  run.ended_at = iso_utc(SystemClock::now());
  if (state.session.connected()) {
    (void)co_await collectors::describe_wait_events(state.session, run.profile, run.environment);
  }
  state.session.close();
  note_missing_statements(state);
  conclude(state, control);
  add_run_to_run(state);
  co_await fault_point("report", control);
  write(state);
  if (run.status != model::RunStatus::kCompleted && state.outcome.exit_code == 0) {
    state.outcome.exit_code = 1;
  }
  run_engine_log()->info("run finished run_id={} status={} dir={}", run.id, to_string(run.status),
                         state.outcome.dir.string());
  co_return std::move(state.outcome);
}

}  // namespace pgwaitprof::engine
