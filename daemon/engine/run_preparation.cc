// The steps that prepare a run's load (see run_state.h): pgbench's tables, the workload's set-up
// and script, the copy workload's data file, and the command line of sysbench, a command or a
// recording window.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "base/logging.h"
#include "collectors/conninfo.h"
#include "collectors/kernel.h"
#include "collectors/pg_session.h"
#include "daemon/engine/process.h"
#include "daemon/engine/run_state.h"
#include "loadgen/copy_load.h"
#include "loadgen/loadgen_command.h"
#include "loadgen/workload_files.h"
#include "model/workloads.h"
#include "store/atomic_file.h"

namespace pgwaitprof::engine::run_steps {
namespace {

auto run_preparation_log() {
  static auto logger = base::component_logger("run");
  return logger;
}

// Step 4 for the copy workload: the data file and the script on the server's host; nothing
// more elsewhere (pgwaitprof sends the rows itself).
asio::awaitable<base::Status> prepare_copy(RunState& state, loadgen::LoadgenInputs& inputs) {
  if (state.copy_from_stdin) co_return std::nullopt;
  auto file = co_await loadgen::ensure_copy_file(state.session, state.scale);
  if (!file) co_return file.error();
  state.copy_bytes = file->bytes;
  const auto path = state.outcome.dir / "workload.pgbench";
  if (auto failed = store::write_file_atomically(path, loadgen::copy_script(file->path)))
    co_return failed;
  inputs.script_path = path.string();
  inputs.scale.clear();  // the script needs no :scale
  co_return std::nullopt;
}

// Where a child reaches the target: as libpq resolved it for the run's own connection.
loadgen::TargetAddress target_address(const RunState& state) {
  return {state.session.host(), state.session.port(), state.session.user(), state.session.dbname(),
          collectors::split_password(state.request.conninfo).password};
}

}  // namespace

asio::awaitable<base::Status> ensure_pgbench_tables(RunState& state, base::RunControl& control) {
  auto tables =
      co_await state.session.execute("SELECT to_regclass('pgbench_branches') IS NOT NULL");
  if (!tables.ok()) co_return base::Error{tables.error->message};
  if (collectors::cell(tables.result.get(), 0, 0) == "t") co_return std::nullopt;
  run_preparation_log()->info("initialising pgbench tables scale={} target={}",
                              state.request.init_scale, state.request.target_name);
  std::vector<std::string> init{state.loadgen, "-i", "-s", std::to_string(state.request.init_scale),
                                "-q"};
  SpawnOptions options;
  if (!state.request.conninfo.empty()) {
    const auto split = collectors::split_password(state.request.conninfo);
    init.push_back(split.conninfo);
    if (!split.password.empty()) options.environment.push_back("PGPASSWORD=" + split.password);
  }
  auto initialised =
      co_await run_command_async(init, options, [&](pid_t pid) { control.set_child(pid); });
  control.clear_child();
  if (!initialised) co_return initialised.error();
  state.pgbench_log += collectors::mask_secrets(initialised->output);
  if (control.interrupted()) co_return base::Error{control.reason()};
  if (initialised->exit_code != 0) {
    co_return base::Error{"pgbench -i failed: " + loadgen::describe_loadgen_failure(
                                                      initialised->exit_code, initialised->output)};
  }
  co_return std::nullopt;
}

asio::awaitable<bool> server_shares_our_files(RunState& state,
                                              const collectors::TargetSampler& sampler) {
  const auto mode = sampler.options().local;
  if (mode != config::LocalMode::kAuto) co_return mode == config::LocalMode::kYes;
  auto directory = co_await state.session.execute("SELECT current_setting('data_directory', true)");
  if (!directory.ok()) co_return false;
  co_return collectors::server_is_local(state.session.backend_pid(),
                                        collectors::cell(directory.result.get(), 0, 0));
}

asio::awaitable<base::Status> prepare_workload(RunState& state) {
  const auto& workload = *model::find_workload(state.request.workload);
  auto scale = co_await state.session.execute("SELECT count(*) FROM pgbench_branches");
  if (!scale.ok()) co_return base::Error{scale.error->message};
  if (!workload.setup_file.empty()) {
    auto setup_sql = loadgen::workload_file(workload.setup_file);
    if (!setup_sql) co_return setup_sql.error();
    auto setup = co_await state.session.execute_script(*setup_sql);
    if (!setup.ok()) {
      co_return base::Error{
          fmt::format("could not set up workload \"{}\": {}", workload.name, setup.error->message)};
    }
  }
  loadgen::LoadgenInputs inputs{state.loadgen,
                                &workload,
                                "",
                                collectors::cell(scale.result.get(), 0, 0),
                                state.request.pgbench_args,
                                state.request.interval,
                                state.request.conninfo,
                                state.run().target,
                                (state.outcome.dir / "pgbench_log").string()};
  state.scale = std::stoll(inputs.scale.empty() ? "1" : inputs.scale);
  if (workload.copy) {
    if (auto failed = co_await prepare_copy(state, inputs)) co_return failed;
  } else if (!workload.script_file.empty()) {
    auto script = loadgen::workload_file(workload.script_file);
    if (!script) co_return script.error();
    const auto path = state.outcome.dir / "workload.pgbench";
    if (auto failed = store::write_file_atomically(path, *script)) co_return failed;
    inputs.script_path = path.string();
  }
  state.command = loadgen::build_loadgen_command(inputs);
  if (state.copy_from_stdin) {
    state.command.threads = 1;
    state.command.display_argv = {"pgwaitprof", "--client", std::to_string(state.command.clients),
                                  fmt::format("COPY {} FROM STDIN", model::kCopyTargetTable)};
  }
  state.run().interval = state.command.interval;
  state.run().clients = state.command.clients;
  state.run().loadgen_argv = state.command.display_argv;
  co_return std::nullopt;
}

asio::awaitable<base::Status> run_sysbench_step(RunState& state, base::RunControl& control,
                                                std::string_view step) {
  const auto command =
      loadgen::build_sysbench_command(state.loadgen, state.request.pgbench_args,
                                      target_address(state), state.request.interval, step);
  run_preparation_log()->info("sysbench step run_id={} step={}", state.run().id, step);
  SpawnOptions options;
  options.environment = command.environment;
  auto done =
      co_await run_command_async(command.argv, options, [&](pid_t pid) { control.set_child(pid); });
  control.clear_child();
  if (!done) co_return done.error();
  state.pgbench_log += collectors::mask_secrets(done->output);
  if (control.interrupted()) co_return base::Error{control.reason()};
  if (done->exit_code != 0) {
    co_return base::Error{
        fmt::format("sysbench {} failed: {}", step,
                    loadgen::describe_loadgen_failure(done->exit_code, done->output, "sysbench"))};
  }
  co_return std::nullopt;
}

asio::awaitable<base::Status> prepare_other_loadgen(RunState& state, base::RunControl& control) {
  const auto& request = state.request;
  switch (request.kind) {
    case loadgen::LoadgenKind::kSysbench:
      state.command = loadgen::build_sysbench_command(state.loadgen, request.pgbench_args,
                                                      target_address(state), request.interval);
      state.run().interval = state.command.interval;
      if (!request.setup_step.empty()) {
        if (auto failed = co_await run_sysbench_step(state, control, request.setup_step)) {
          co_return failed;
        }
      }
      break;
    case loadgen::LoadgenKind::kCommand:
      state.command =
          loadgen::build_any_command(state.loadgen, request.pgbench_args, target_address(state));
      break;
    default:
      state.command = {};
      state.command.clients = 0;
      state.command.display_argv = {"(recording window: load from elsewhere)"};
      break;
  }
  state.run().clients = state.command.clients;
  state.run().loadgen_argv = state.command.display_argv;
  co_return std::nullopt;
}

}  // namespace pgwaitprof::engine::run_steps
