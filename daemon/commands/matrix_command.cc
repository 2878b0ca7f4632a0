// The foreground matrix.
#include "daemon/commands/matrix_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "base/regular_file.h"
#include "collectors/pg_session.h"
#include "config/matrix_invocation.h"
#include "config/matrix_plan.h"
#include "daemon/commands/foreground.h"
#include "daemon/commands/results_command.h"
#include "daemon/engine/matrix.h"
#include "daemon/engine/remote_sampler.h"
#include "exporters/render/text_format.h"
#include "store/atomic_file.h"
#include "store/run_directory.h"
#include "store/run_index.h"

namespace pgwaitprof::commands {
namespace {

// Beside plan.yaml: the options the matrix was started with (config/matrix_invocation.h).
constexpr const char* kInvocationFile = "invocation.yaml";

std::string read_text(const std::filesystem::path& path) {
  auto text = base::read_regular_file(path, "matrix plan");
  if (!text) throw std::runtime_error(text.error().message);
  return std::move(*text);
}

// The matrix directory: the resumed one, or a new one holding the plan's copy.
std::filesystem::path matrix_directory(const MatrixCommand& command,
                                       const config::MatrixPlan& plan) {
  if (command.resume_dir) return *command.resume_dir;
  const auto data_dir = command.data_dir.empty() ? default_data_dir() : command.data_dir;
  const auto dir = data_dir / "matrix" / store::make_run_id(plan.name);
  // A new data directory is its owner's only (0700), as the daemon's.
  if (auto failed = store::create_private_directories(data_dir, store::kDataDirectoryMode)) {
    throw std::runtime_error(failed->message);
  }
  if (auto failed = store::create_private_directories(dir)) {
    throw std::runtime_error(failed->message);
  }
  if (auto failed = store::write_file_atomically(
          dir / "plan.yaml",
          engine::plan_text_without_password(read_text(*command.plan_path), plan.target))) {
    throw std::runtime_error(failed->message);
  }
  const config::MatrixInvocation invocation{
      {command.duration_s, command.repeats, command.scale, command.quick},
      collectors::split_password(plan.target).conninfo};
  if (auto failed = store::write_file_atomically(dir / kInvocationFile,
                                                 config::invocation_yaml(invocation))) {
    throw std::runtime_error(failed->message);
  }
  return dir;
}

// The plan of a resumed matrix: its plan.yaml with the options it was started with
// (invocation.yaml; a directory of an older pgwaitprof has none, and takes the options given).
// An option given now that contradicts them is refused; the target given now (with its
// password) must be the one it runs on, else it runs there, the password from PGPASSWORD or
// ~/.pgpass.
config::MatrixPlan resumed_plan(const MatrixCommand& command) {
  const auto& dir = *command.resume_dir;
  auto plan = config::load_matrix_plan(dir / "plan.yaml");
  const config::PlanOverrides given{command.duration_s, command.repeats, command.scale,
                                    command.quick};
  if (!std::filesystem::exists(dir / kInvocationFile)) {
    config::apply_overrides(plan, given);
    if (command.target) plan.target = *command.target;
    return plan;
  }
  const auto saved =
      config::parse_invocation(read_text(dir / kInvocationFile), (dir / kInvocationFile).string());
  std::optional<std::string> given_target;
  if (command.target) given_target = collectors::split_password(*command.target).conninfo;
  auto resumed = config::resumed_plan(std::move(plan), saved, {given, given_target});
  if (!resumed) {
    throw std::runtime_error(fmt::format("could not resume \"{}\": {}", dir.string(),
                                         collectors::mask_secrets(resumed.error().message)));
  }
  if (command.target) resumed->target = *command.target;
  return std::move(*resumed);
}

int report(const engine::MatrixOutcome& outcome, const std::filesystem::path& dir) {
  std::cout << outcome.table_text;
  std::cout << fmt::format(
      "\nmatrix: {} ({} of {} runs completed{})\n", dir.string(), outcome.runs_done,
      outcome.runs_total,
      outcome.runs_skipped ? fmt::format(", {} from before", outcome.runs_skipped) : "");
  if (!outcome.error.empty()) {
    std::cerr << fmt::format("pgwaitprof: matrix failed: {}\n", outcome.error);
    return 1;
  }
  if (outcome.interrupted || outcome.runs_done < outcome.runs_total) {
    std::cerr << fmt::format(
        "pgwaitprof: matrix {} after {} of {} runs; resume with: pgwaitprof matrix --resume {}\n",
        outcome.interrupted ? "interrupted" : "incomplete", outcome.runs_done, outcome.runs_total,
        dir.string());
    return 1;
  }
  return 0;
}

// A plan of builds (server_bin variants): one scratch cluster per distinct build, each with the
// plan's pgbench data, started one after another before the first run (every one registered
// with the supervisor as it is made, engine/supervisor.h). On failure those already made are
// destroyed again.
asio::awaitable<base::Expected<std::vector<LocalTarget>>> open_build_clusters(
    const config::MatrixPlan& plan, base::RunControl& control) {
  std::vector<LocalTarget> clusters;
  std::vector<std::filesystem::path> builds;
  for (const auto& variant : plan.variants) {
    if (std::find(builds.begin(), builds.end(), variant.server_bin) == builds.end()) {
      builds.push_back(variant.server_bin);
    }
  }
  base::Status failed;
  for (const auto& server_bin : builds) {
    std::cerr << fmt::format("pgwaitprof: starting a scratch cluster of \"{}\"\n",
                             exporters::text_format::text_escape(server_bin.string()));
    const LocalTargetOptions options{std::nullopt, plan.scale, false,
                                     plan.source == model::SamplerSource::kPgWaitSampling,
                                     server_bin};
    auto local = co_await open_local_target(options, control);
    if (!local) {
      failed = local.error();
      break;
    }
    clusters.push_back(std::move(*local));
  }
  if (failed) {
    for (auto& cluster : clusters) co_await cluster.scratch->destroy();
    co_return *failed;
  }
  co_return clusters;
}

// A matrix whose servers could not be had: none of its runs ran; its status file says why.
engine::MatrixOutcome not_started(const config::MatrixPlan& plan, const std::filesystem::path& dir,
                                  const std::string& error, const base::RunControl& control) {
  engine::MatrixOutcome failed;
  failed.runs_total = static_cast<int>(engine::matrix_order(plan).size());
  failed.error = error;
  failed.interrupted = control.interrupted();
  engine::write_matrix_status(dir, failed);
  return failed;
}

// The matrix of a plan of builds: per run, a sampler of the run's own cluster (a sampler of the
// other build's idle cluster would load the host during the run).
asio::awaitable<engine::MatrixOutcome> run_matrix_of_builds(const config::MatrixPlan& plan,
                                                            const std::filesystem::path& dir,
                                                            base::RunControl& control) {
  auto clusters = co_await open_build_clusters(plan, control);
  if (!clusters) co_return not_started(plan, dir, clusters.error().message, control);
  std::vector<engine::MatrixBuild> builds;
  std::vector<std::filesystem::path> distinct;
  for (const auto& variant : plan.variants) {
    if (std::find(distinct.begin(), distinct.end(), variant.server_bin) == distinct.end()) {
      distinct.push_back(variant.server_bin);
    }
  }
  for (size_t index = 0; index < distinct.size(); ++index) {
    auto& cluster = (*clusters)[index];
    builds.push_back({distinct[index], cluster.conninfo, cluster.scratch.get()});
  }
  engine::RunObserver quiet;
  engine::MatrixContext context{
      plan,
      dir,
      "",
      [&](engine::RunRequest request) -> asio::awaitable<engine::RunOutcome> {
        config::TargetConfig target;
        target.hz = plan.hz;
        target.source = plan.source;
        target.auto_traces = true;
        target.dsn = request.conninfo;
        target.local = config::LocalMode::kYes;
        co_return co_await with_sampler<engine::RunOutcome>(
            collectors::sampler_options(target),
            [&](collectors::TargetSampler& sampler) -> asio::awaitable<engine::RunOutcome> {
              co_return co_await engine::execute_run(sampler, std::move(request), quiet, control);
            });
      },
      nullptr,
      control,
      [](const std::string& line) {
        std::cerr << exporters::text_format::text_escape(line) << '\n';
      },
      builds};
  auto outcome = co_await engine::execute_matrix(context);
  for (auto& cluster : *clusters) co_await cluster.scratch->destroy();
  co_return outcome;
}

// The plan this invocation runs: a resumed matrix's saved plan, else the plan file with the
// command line's overrides; refused where the command line's options cannot go with it.
config::MatrixPlan effective_plan(const MatrixCommand& command) {
  if (command.resume_dir && !std::filesystem::exists(*command.resume_dir / "plan.yaml")) {
    throw std::runtime_error(fmt::format("could not resume \"{}\": it holds no plan.yaml",
                                         command.resume_dir->string()));
  }
  auto plan =
      command.resume_dir ? resumed_plan(command) : config::load_matrix_plan(*command.plan_path);
  if (!command.resume_dir) {
    config::apply_overrides(plan,
                            {command.duration_s, command.repeats, command.scale, command.quick});
    if (command.target) plan.target = *command.target;
  }
  if (!command.split_by.empty()) plan.split_by = command.split_by;
  if (command.target && config::has_builds(plan)) {
    throw std::runtime_error(
        "--target cannot be used with a plan of builds: its variants' \"server_bin\" run in "
        "scratch clusters");
  }
  if (!command.sampler_host.empty() &&
      (config::has_builds(plan) || (plan.target.empty() && !pg_environment_set()))) {
    throw std::runtime_error(
        "--sampler-host needs a target: a connection string (the plan's or --target) or the PG* "
        "variables of the server on that host");
  }
  return plan;
}

// The matrix of variants on one server, the target's or a scratch cluster, sampled here or on
// --sampler-host's host.
asio::awaitable<engine::MatrixOutcome> run_matrix_on_server(const config::MatrixPlan& plan,
                                                            const std::filesystem::path& dir,
                                                            const MatrixCommand& command,
                                                            base::RunControl& control) {
  config::TargetConfig target;
  target.hz = plan.hz;
  target.source = plan.source;
  target.auto_traces = true;
  engine::RunObserver quiet;
  const LocalTargetOptions target_options{
      plan.target.empty() ? std::nullopt : std::optional(plan.target),
      plan.scale,
      false,
      plan.source == model::SamplerSource::kPgWaitSampling,
      {}};
  auto local = co_await open_local_target(target_options, control);
  if (!local) co_return not_started(plan, dir, local.error().message, control);
  target.dsn = local->conninfo;
  if (local->scratch) target.local = config::LocalMode::kYes;
  // No co_await inside a conditional expression: GCC 12 destroys its temporary twice.
  const auto executor = co_await asio::this_coro::executor;
  auto feed = local->scratch
                  ? nullptr
                  : engine::make_ssh_feed(command.sampler_host, command.sampler_program, executor);
  auto outcome = co_await with_sampler<engine::MatrixOutcome>(
      collectors::sampler_options(target),
      [&](collectors::TargetSampler& sampler) -> asio::awaitable<engine::MatrixOutcome> {
        engine::MatrixContext context{
            plan,
            dir,
            local->conninfo,
            [&](engine::RunRequest request) {
              return engine::execute_run(sampler, std::move(request), quiet, control);
            },
            local->scratch.get(),
            control,
            [](const std::string& line) {
              std::cerr << exporters::text_format::text_escape(line) << '\n';
            },
            {}};
        co_return co_await engine::execute_matrix(context);
      },
      feed.get());
  if (local->scratch) co_await local->scratch->destroy();
  co_return outcome;
}

}  // namespace

int matrix_command(const MatrixCommand& command) {
  const auto plan = effective_plan(command);
  const auto dir = matrix_directory(command, plan);
  const auto outcome = drive<engine::MatrixOutcome>(
      "pgwaitprof: stopping the matrix after writing the current run's report",
      [&](base::RunControl& control) -> asio::awaitable<engine::MatrixOutcome> {
        if (config::has_builds(plan)) co_return co_await run_matrix_of_builds(plan, dir, control);
        co_return co_await run_matrix_on_server(plan, dir, command, control);
      });
  const int exit_code = report(outcome, dir);
  upload_after(dir.parent_path().parent_path(), store::find_run_directories_of_matrix(dir),
               command.results_dsn);
  return exit_code;
}

}  // namespace pgwaitprof::commands
