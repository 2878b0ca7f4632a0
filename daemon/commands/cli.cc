// Command-line interface: one binary, subcommands per DESIGN.md. Arguments after "--" belong to
// the load generator and are split off before CLI11 sees the rest. Usage errors exit 2 (before
// any work is done), runtime failures 1 (STYLE.md rule 4).
#include "daemon/commands/cli.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "base/logging.h"
#include "collectors/conninfo.h"
#include "config/daemon_config.h"
#include "config/numbers.h"
#include "daemon/commands/cli_options.h"
#include "daemon/commands/exit_codes.h"
#include "daemon/commands/explain_command.h"
#include "daemon/commands/remote_sample.h"
#include "daemon/commands/standard_output.h"
#include "daemon/engine/supervisor.h"
#include "exporters/render/text_format.h"
#include "loadgen/loadgen_command.h"

namespace pgwaitprof::commands {
namespace {

using exporters::text_format::text_escape;

int parse_and_dispatch(int argc, char** argv);

std::optional<model::SamplerSource> source_of(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  return model::parse_sampler_source(*name);
}

[[noreturn]] void run_daemon(DaemonCommand& command) {
  std::optional<std::filesystem::path> path;
  if (command.config_file) path = *command.config_file;
  command.overrides.source = source_of(command.source);
  service::DaemonApp daemon_app(path, command.overrides);
  const int code = daemon_app.run();
  // Everything is stopped and written: the process ends without destroying what is left.
  spdlog::shutdown();
  std::_Exit(finish_standard_output(code));
}

// run and record: the extension samples at its own rate, so --hz with it is a usage error.
bool hz_with_extension(const RunCommand& command) {
  if (command.source != model::SamplerSource::kPgWaitSampling || !command.hz) return false;
  std::cerr << "pgwaitprof: --hz cannot be used with --source pg_wait_sampling\n"
               "HINT: The extension samples at its own pg_wait_sampling.profile_period.\n";
  return true;
}

// The parsed subcommand, run; its exit code.
int dispatch(CLI::App& app, Commands& commands, std::vector<std::string> loadgen_args) {
  if (app.get_subcommand("daemon")->parsed()) run_daemon(commands.daemon);
  if (app.get_subcommand("run")->parsed()) {
    auto& run = commands.run;
    run.source = *model::parse_sampler_source(commands.run_source);
    if (hz_with_extension(run)) return kExitUsage;
    const auto kind = loadgen::parse_loadgen_kind(commands.run_loadgen);
    if (!kind) {
      std::cerr << fmt::format(
          "pgwaitprof: unknown load generator \"{}\" (known: pgbench, sysbench, command)\n",
          text_escape(commands.run_loadgen));
      return kExitUsage;
    }
    run.loadgen = *kind;
    if (*kind == loadgen::LoadgenKind::kPgbench) {
      if (const auto invalid = config::check_pgbench_numbers(loadgen_args)) {
        std::cerr << "pgwaitprof: " << invalid->message() << '\n';
        return kExitUsage;
      }
    }
    if (*kind == loadgen::LoadgenKind::kCommand && loadgen_args.empty()) {
      std::cerr << "pgwaitprof: --loadgen command needs the command after \"--\"\n";
      return kExitUsage;
    }
    if (*kind != loadgen::LoadgenKind::kSysbench &&
        (!run.setup_step.empty() || !run.teardown_step.empty())) {
      std::cerr << "pgwaitprof: --setup and --teardown are sysbench's steps (--loadgen sysbench)\n";
      return kExitUsage;
    }
    run.pgbench_args = std::move(loadgen_args);
    return run_command(run);
  }
  if (app.get_subcommand("record")->parsed()) {
    auto& record = commands.record;
    record.source = *model::parse_sampler_source(commands.record_source);
    if (hz_with_extension(record)) return kExitUsage;
    record.loadgen = loadgen::LoadgenKind::kNone;
    return run_command(record);
  }
  if (app.get_subcommand("report")->parsed()) return report_command(commands.report);
  if (app.get_subcommand("matrix")->parsed()) {
    if (!commands.matrix.plan_path && !commands.matrix.resume_dir) {
      std::cerr << "pgwaitprof: matrix needs a plan file or --resume DIR\n";
      return kExitUsage;
    }
    return matrix_command(commands.matrix);
  }
  if (app.get_subcommand("compare")->parsed()) return compare_command(commands.compare);
  if (app.get_subcommand("explain")->parsed()) return explain_command(commands.explained);
  if (app.get_subcommand("runs")->parsed()) return runs_command(app, commands.runs);
  if (app.get_subcommand("trend")->parsed()) return trend_command(commands.trend);
  if (app.get_subcommand("results")->parsed()) return results_command(app, commands.results);
  return kExitFailure;
}

}  // namespace

int main_cli(int argc, char** argv) {
  // A closed standard output or error is an error value, never a death (standard_output.h).
  std::signal(SIGPIPE, SIG_IGN);
  if (argc == 2 && argv[1] == engine::kSuperviseCommand) return engine::supervise_main();
  if (argc == 2 && argv[1] == kSampleRemoteCommand) return sample_remote_main();
  engine::enable_watchdog();
  capture_standard_output();
  return finish_standard_output(parse_and_dispatch(argc, argv));
}

namespace {

int parse_and_dispatch(int argc, char** argv) {
  // Everything after the first "--" goes to pgbench unchanged.
  std::vector<std::string> ours;
  std::vector<std::string> loadgen_args;
  bool after_separator = false;
  for (int index = 1; index < argc; ++index) {
    const std::string arg = argv[index];
    if (!after_separator && arg == "--") {
      after_separator = true;
      continue;
    }
    (after_separator ? loadgen_args : ours).push_back(arg);
  }
  std::reverse(ours.begin(), ours.end());  // CLI11 parses a reversed vector
  // Every local user reads argv in /proc/PID/cmdline (ps) for as long as we run: now that it is
  // copied, the passwords of every connection string in it (targets, --results-dsn, DSNs in
  // the load generator's arguments) are overwritten where the kernel shows them.
  for (int index = 1; index < argc; ++index) {
    collectors::mask_secrets_in_place({argv[index], std::strlen(argv[index])});
  }

  CLI::App app{
      "pgwaitprof: wait-event sampling profiler for PostgreSQL benchmarks (PostgreSQL 13-18)",
      "pgwaitprof"};
  Commands commands;
  add_commands(app, commands);
  try {
    app.parse(ours);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    // CLI11 quotes the arguments it did not expect, which may hold a connection string.
    std::cerr << "pgwaitprof: " << collectors::mask_secrets(error.what())
              << "\nHINT: Try \"pgwaitprof --help\".\n";
    return kExitUsage;
  }
  if (!loadgen_args.empty() && !app.get_subcommand("run")->parsed()) {
    std::cerr << "pgwaitprof: arguments after \"--\" are only accepted by \"run\"\n";
    return kExitUsage;
  }
  base::set_log_level(commands.daemon.overrides.log_level.value_or(commands.log_level));
  // What a pgwaitprof and its watchdog that both died left (a scratch cluster and its
  // directory) is swept by the next pgwaitprof, whatever its subcommand.
  engine::sweep_abandoned_scratch_directories();

  try {
    return dispatch(app, commands, std::move(loadgen_args));
  } catch (const config::ConfigError& error) {
    std::cerr << "pgwaitprof: " << error.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& error) {
    std::cerr << "pgwaitprof: " << error.what() << '\n';
    return kExitFailure;
  }
}

}  // namespace

}  // namespace pgwaitprof::commands
