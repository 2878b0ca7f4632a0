// `pgwaitprof matrix PLAN.yaml` (or --resume DIR): a sweep with a sampler of its own, on the
// plan's target or a scratch cluster made for it; the table printed at the end.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace pgwaitprof::commands {

struct MatrixCommand {
  std::optional<std::filesystem::path> plan_path;
  std::optional<std::filesystem::path> resume_dir;
  std::filesystem::path data_dir;
  // Overrides of the plan (a shortened run of a ready plan, e.g. in tests).
  std::optional<int> duration_s;
  std::optional<int> repeats;
  std::optional<int> scale;
  bool quick = false;
  std::string split_by;               // overrides the plan's split_by
  std::optional<std::string> target;  // overrides the plan's target
  // --sampler-host: every run's sampler on the server's host over SSH (run_command.h).
  std::string sampler_host;
  std::string sampler_program = "pgwaitprof";
  std::optional<std::string> results_dsn;  // upload the runs there (results_command.h)
};

int matrix_command(const MatrixCommand& command);

}  // namespace pgwaitprof::commands
