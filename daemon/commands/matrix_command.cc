// The foreground matrix.
#include "daemon/commands/matrix_command.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "config/matrix_plan.h"
#include "daemon/commands/foreground.h"
#include "daemon/commands/results_command.h"
#include "daemon/engine/matrix.h"
#include "exporters/render/text_format.h"
#include "store/atomic_file.h"
#include "store/run_directory.h"
#include "store/run_index.h"

namespace pgwaitprof::commands {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
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
  return dir;
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

}  // namespace

int matrix_command(const MatrixCommand& command) {
  const auto plan_path =
      command.resume_dir ? *command.resume_dir / "plan.yaml" : *command.plan_path;
  if (command.resume_dir && !std::filesystem::exists(plan_path)) {
    throw std::runtime_error(fmt::format("could not resume \"{}\": it holds no plan.yaml",
                                         command.resume_dir->string()));
  }
  auto plan = config::load_matrix_plan(plan_path);
  config::apply_overrides(plan,
                          {command.duration_s, command.repeats, command.scale, command.quick});
  if (!command.split_by.empty()) plan.split_by = command.split_by;
  if (command.target) plan.target = *command.target;
  const auto dir = matrix_directory(command, plan);
  config::TargetConfig target;
  target.hz = plan.hz;
  target.source = plan.source;
  engine::RunObserver quiet;
  const auto outcome = drive<engine::MatrixOutcome>(
      "pgwaitprof: stopping the matrix after writing the current run's report",
      [&](base::RunControl& control) -> asio::awaitable<engine::MatrixOutcome> {
        const LocalTargetOptions target_options{
            plan.target.empty() ? std::nullopt : std::optional(plan.target),
            plan.scale,
            false,
            plan.source == model::SamplerSource::kPgWaitSampling,
            {}};
        auto local = co_await open_local_target(target_options, control);
        if (!local) {
          engine::MatrixOutcome failed;
          failed.runs_total = static_cast<int>(engine::matrix_order(plan).size());
          failed.error = local.error().message;
          failed.interrupted = control.interrupted();
          engine::write_matrix_status(dir, failed);
          co_return failed;
        }
        target.dsn = local->conninfo;
        if (local->scratch) target.local = config::LocalMode::kYes;
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
                  }};
              co_return co_await engine::execute_matrix(context);
            });
        if (local->scratch) co_await local->scratch->destroy();
        co_return outcome;
      });
  const int exit_code = report(outcome, dir);
  upload_after(dir.parent_path().parent_path(), store::find_run_directories_of_matrix(dir),
               command.results_dsn);
  return exit_code;
}

}  // namespace pgwaitprof::commands
