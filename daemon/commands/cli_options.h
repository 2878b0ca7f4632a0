// The command line's subcommands and options (CLI11): what `main_cli` parses and dispatches, and
// what the bash completion is made from.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "daemon/commands/matrix_command.h"
#include "daemon/commands/report_command.h"
#include "daemon/commands/results_command.h"
#include "daemon/commands/run_command.h"
#include "daemon/commands/runs_command.h"
#include "daemon/commands/trend_command.h"
#include "daemon/service/daemon_app.h"
#include "model/sampler_source.h"

namespace pgwaitprof::commands {

struct DaemonCommand {
  std::optional<std::string> config_file;
  service::DaemonOverrides overrides;
  std::optional<std::string> source;
};

// Every subcommand's options, filled in by CLI11.
struct Commands {
  std::string log_level = "info";
  DaemonCommand daemon;
  RunCommand run;
  std::string run_source = std::string(to_string(model::SamplerSource::kAuto));
  std::string run_loadgen = "pgbench";
  RunCommand record;
  std::string record_source = std::string(to_string(model::SamplerSource::kAuto));
  ReportCommand report;
  MatrixCommand matrix;
  CompareCommand compare;
  RunsCommand runs;
  TrendCommand trend;
  ResultsCommand results;
  std::string explained;
};

// What --version prints: the version, the git revision it was built from, and the libpq it runs
// with.
std::string version_text();

// Every subcommand with its options on `app`, filling `commands` when parsed.
void add_commands(CLI::App& app, Commands& commands);

}  // namespace pgwaitprof::commands
