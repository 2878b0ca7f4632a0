// Command-line interface: one binary, subcommands per DESIGN.md. Arguments after "--" belong to
// the load generator and are split off before CLI11 sees the rest.
#include "daemon/cli.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/logging.h"
#include "daemon/app.h"
#include "daemon/foreground_run.h"
#include "daemon/matrix.h"
#include "exporters/compare.h"
#include "exporters/report_render.h"

namespace pgwaitprof::daemon {
namespace {

// Configuration and usage errors exit 2, runtime failures 1 (STYLE.md rule 4).
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

model::Run load_run(const std::filesystem::path& run_dir) {
  const auto path = std::filesystem::is_directory(run_dir) ? run_dir / "report.json" : run_dir;
  std::ifstream file(path);
  if (!file) throw std::runtime_error(fmt::format("could not open report \"{}\": {}", path.string(), std::strerror(errno)));
  try {
    return model::run_from_json(nlohmann::json::parse(file));
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(fmt::format("could not read report \"{}\": {}", path.string(), error.what()));
  }
}

int report_command(const std::filesystem::path& run_dir, const std::string& format,
                   const std::string& by, int top, bool include_idle) {
  const auto run = load_run(run_dir);
  exporters::RenderOptions options;
  options.top = top;
  options.include_idle = include_idle;
  static const std::map<std::string, exporters::GroupBy> groupings = {
      {"wait_event", exporters::GroupBy::kWaitEvent},
      {"backend_type", exporters::GroupBy::kBackendType},
      {"state", exporters::GroupBy::kState},
      {"wait_event_type", exporters::GroupBy::kWaitEventType},
      {"query_id", exporters::GroupBy::kQueryId}};
  options.by = groupings.at(by);
  if (format == "text") std::cout << exporters::render_text(run, options);
  else if (format == "md") std::cout << exporters::render_markdown(run, options);
  else if (format == "json") std::cout << exporters::render_json(run);
  else if (format == "csv") std::cout << exporters::render_profile_csv(run, options);
  else if (format == "timeline-csv") std::cout << exporters::render_timeline_csv(run);
  else if (format == "folded") std::cout << exporters::render_folded(run, options);
  else if (format == "html") std::cout << exporters::render_html(run, options);
  return 0;
}

// A side of a comparison: a run directory, a matrix directory (its runs/), a directory of run
// directories, or a comma-separated list of those.
std::vector<model::Run> load_side(const std::string& side) {
  std::vector<model::Run> runs;
  std::stringstream list(side);
  for (std::string item; std::getline(list, item, ',');) {
    const std::filesystem::path path(item);
    if (std::filesystem::exists(path / "report.json")) {
      runs.push_back(load_run(path));
    } else if (std::filesystem::is_directory(path)) {
      const auto parent = std::filesystem::is_directory(path / "runs") ? path / "runs" : path;
      std::vector<std::filesystem::path> dirs;
      for (const auto& entry : std::filesystem::directory_iterator(parent)) dirs.push_back(entry.path());
      std::sort(dirs.begin(), dirs.end());
      for (const auto& dir : dirs) {
        if (std::filesystem::exists(dir / "report.json")) runs.push_back(load_run(dir));
      }
    } else {
      throw std::runtime_error(fmt::format("\"{}\" is neither a run directory nor a matrix directory", item));
    }
  }
  if (runs.empty()) throw std::runtime_error(fmt::format("no runs found in \"{}\"", side));
  return runs;
}

std::string side_label(const std::string& side) {
  const auto path = std::filesystem::path(side.substr(0, side.find(','))).lexically_normal();
  const auto name = (path.has_filename() ? path : path.parent_path()).filename().string();
  return side.find(',') == std::string::npos ? name : name + ",...";
}

int compare_command(const std::string& side_a, const std::string& side_b, const std::string& format) {
  const auto comparison = exporters::compare_runs(load_side(side_a), load_side(side_b), side_label(side_a), side_label(side_b));
  if (format == "md") std::cout << exporters::render_comparison_markdown(comparison);
  else if (format == "json") std::cout << exporters::render_comparison_json(comparison);
  else std::cout << exporters::render_comparison_text(comparison);
  return 0;
}

const std::map<std::string, config::Source> kSources = {
    {"auto", config::Source::kAuto},
    {"activity", config::Source::kActivity},
    {"pg_wait_sampling", config::Source::kPgWaitSampling}};

}  // namespace

int main_cli(int argc, char** argv) {
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

  CLI::App app{"pgwaitprof: wait-event sampling profiler for PostgreSQL benchmarks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(PGWAITPROF_VERSION) + " (" + PGWAITPROF_REVISION + ")");
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

  // daemon
  auto* daemon = app.add_subcommand("daemon", "sample configured targets, serve /metrics, run requested runs");
  std::optional<std::string> config_file;
  DaemonOverrides overrides;
  daemon->add_option("-c,--config", config_file, "YAML configuration file");
  daemon->add_option("--target", overrides.target, "connection string or URI of the one target to sample");
  daemon->add_option("--hz", overrides.hz, "snapshots per second for every target")
      ->check(CLI::Range(config::kMinHz, config::kMaxHz));
  daemon->add_option("--listen", overrides.listen, "HOST:PORT of /metrics (default 127.0.0.1:9816)");
  daemon->add_option("--data-dir", overrides.data_dir, "where runs and the control socket live");
  daemon->add_option("--log-level", overrides.log_level, "overrides log_level of the file")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

  // run
  auto* run = app.add_subcommand("run", "one profiled benchmark run in the foreground");
  RunCommand run_command;
  std::string source = "auto";
  run->add_option("target", run_command.target,
                  "connection string or URI; none: PG* variables, else a scratch cluster");
  run->add_option("--hz", run_command.hz, "snapshots per second (1-10000)")
      ->check(CLI::Range(config::kMinHz, config::kMaxHz));
  run->add_option("--interval", run_command.interval_s, "timeline interval in seconds (pgbench -P)")
      ->check(CLI::Range(1, 3600));
  run->add_option("--workload", run_command.workload,
                  "tpcb, tpcb-func, select-only, update-5rows or bulk-copy");
  run->add_option("--label", run_command.label, "a label for the run");
  run->add_option("--data-dir", run_command.data_dir, "where the run directory is written");
  run->add_option("--source", source, "auto, activity or pg_wait_sampling")
      ->check(CLI::IsMember({"auto", "activity", "pg_wait_sampling"}));
  run->add_option("--scale", run_command.scale, "pgbench -i scale of a scratch cluster")
      ->check(CLI::Range(1, 100000));
  run->add_flag("--keep-cluster", run_command.keep_cluster, "leave the scratch cluster running");
  run->add_flag("--no-daemon", run_command.no_daemon, "sample here even if a daemon samples the target");

  // report
  auto* report = app.add_subcommand("report", "render a saved run again");
  std::filesystem::path run_dir;
  std::string format = "text";
  std::string by = "wait_event";
  int top = 20;
  bool include_idle = false;
  report->add_option("run_dir", run_dir, "run directory (or its report.json)")->required();
  report->add_option("--format", format, "text, md, json, csv, timeline-csv, folded or html")
      ->check(CLI::IsMember({"text", "md", "json", "csv", "timeline-csv", "folded", "html"}));
  report->add_option("--by", by, "wait_event, backend_type, state, wait_event_type or query_id")
      ->check(CLI::IsMember({"wait_event", "backend_type", "state", "wait_event_type", "query_id"}));
  report->add_option("--top", top, "rows before the rest is summed as \"other\"")->check(CLI::PositiveNumber);
  report->add_flag("--include-idle", include_idle, "count idle sessions in shares");

  // matrix
  auto* matrix = app.add_subcommand("matrix", "a sweep of runs: variants x clients x repeats");
  MatrixCommand matrix_command;
  matrix->add_option("plan", matrix_command.plan_path, "the plan (YAML)");
  matrix->add_option("--resume", matrix_command.resume_dir, "finish an interrupted matrix directory");
  matrix->add_option("--data-dir", matrix_command.data_dir, "where the matrix directory is written");

  // compare
  auto* compare = app.add_subcommand("compare", "A/B: throughput change with its noise band, and the waits that moved");
  std::string side_a, side_b;
  std::string compare_format = "text";
  compare->add_option("a", side_a, "run directory, matrix directory, or comma-separated run directories")->required();
  compare->add_option("b", side_b, "the same for the other side")->required();
  compare->add_option("--format", compare_format, "text, md or json")->check(CLI::IsMember({"text", "md", "json"}));

  try {
    app.parse(ours);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    std::cerr << "pgwaitprof: " << error.what() << "\nHINT: Try \"pgwaitprof --help\".\n";
    return kExitUsage;
  }
  if (!loadgen_args.empty() && !run->parsed()) {
    std::cerr << "pgwaitprof: arguments after \"--\" are only accepted by \"run\"\n";
    return kExitUsage;
  }
  config::set_log_level(overrides.log_level.value_or(log_level));

  try {
    if (daemon->parsed()) {
      std::optional<std::filesystem::path> path;
      if (config_file) path = *config_file;
      DaemonApp daemon_app(path, overrides);
      const int code = daemon_app.run();
      // Everything is stopped and written. Destroying the HTTP server would wait up to 2 s for
      // civetweb's worker threads' socket timeouts, beyond the 1 s a stop may take.
      spdlog::shutdown();
      std::cout.flush();
      std::_Exit(code);
    }
    if (run->parsed()) {
      run_command.source = kSources.at(source);
      run_command.pgbench_args = loadgen_args;
      return run_foreground(run_command);
    }
    if (report->parsed()) return report_command(run_dir, format, by, top, include_idle);
    if (matrix->parsed()) {
      if (!matrix_command.plan_path && !matrix_command.resume_dir) {
        std::cerr << "pgwaitprof: matrix needs a plan file or --resume DIR\n";
        return kExitUsage;
      }
      return run_matrix_command(matrix_command);
    }
    if (compare->parsed()) return compare_command(side_a, side_b, compare_format);
  } catch (const config::ConfigError& error) {
    std::cerr << "pgwaitprof: " << error.what() << '\n';
    return kExitUsage;
  } catch (const std::exception& error) {
    std::cerr << "pgwaitprof: " << error.what() << '\n';
    return kExitFailure;
  }
  return kExitFailure;
}

}  // namespace pgwaitprof::daemon
