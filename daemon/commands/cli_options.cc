// The subcommands' options: names, help, validators (daemon/commands/cli_options.h).
#include "daemon/commands/cli_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <set>

#include "base/build_info.h"
#include "base/logging.h"
#include "collectors/pg_session.h"
#include "config/daemon_config.h"
#include "config/numbers.h"
#include "config/quote.h"
#include "daemon/commands/number_options.h"
#include "daemon/commands/placement_options.h"
#include "model/run.h"
#include "model/wait_events.h"
#include "model/workloads.h"

namespace pgwaitprof::commands {
namespace {

// --source: the sources, and what auto picks for run, record and matrix, and for a daemon's
// targets (memory first: they sample without end, often many on one server).
#define PGWAITPROF_SOURCES                                                                      \
  "trace (the kernel's context switches, this host only), memory (the server's shared memory, " \
  "this host only), activity (pg_stat_activity) or pg_wait_sampling"
constexpr const char* kSourceHelp =
    "auto (default: trace for a server on this host that the kernel lets pgwaitprof trace, else "
    "memory where its memory can be read, else activity), " PGWAITPROF_SOURCES;
constexpr const char* kDaemonSourceHelp =
    "auto (default: memory for a server on this host whose memory can be read, else "
    "activity), " PGWAITPROF_SOURCES;
#undef PGWAITPROF_SOURCES

void add_daemon(CLI::App& app, DaemonCommand& command) {
  auto* daemon =
      app.add_subcommand("daemon", "sample configured targets, serve /metrics, run requested runs");
  auto& overrides = command.overrides;
  daemon->add_option("-c,--config", command.config_file, "YAML configuration file");
  daemon->add_option("--target", overrides.target,
                     "connection string or URI of the one target to sample");
  daemon
      ->add_option("--hz", overrides.hz, "snapshots per second for every target (activity, memory)")
      ->transform(finite_in_range(config::kMinHz, config::kMaxHz));
  daemon->add_option("--source", command.source, kDaemonSourceHelp)
      ->check(CLI::IsMember(model::sampler_source_names()));
  daemon->add_option("--listen", overrides.listen,
                     "HOST:PORT of /metrics (default 127.0.0.1:9816)");
  daemon->add_option("--data-dir", overrides.data_dir, "where runs and the control socket live");
  daemon->add_option("--log-level", overrides.log_level, "overrides log_level of the file")
      ->check(CLI::IsMember(base::log_level_names()));
}

// --tag KEY=VALUE (model::parse_tag), repeatable.
void add_tag_option(CLI::App& subcommand, RunCommand& command) {
  subcommand
      .add_option("--tag", command.tags,
                  "KEY=VALUE: what the load was (repeat it; runs --tag finds the run)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const auto tag = model::parse_tag(text);
            return tag ? std::string()
                       : fmt::format("invalid value {} ({})", config::quote(text),
                                     tag.error().message);
          },
          "KEY=VALUE"));
}

void add_run(CLI::App& app, RunCommand& command, std::string& source, std::string& loadgen) {
  auto* run = app.add_subcommand("run", "one profiled benchmark run in the foreground");
  run->add_option("--loadgen", loadgen,
                  "pgbench (default), sysbench, or command (any executable: the words after "
                  "\"--\", the target in its PG* variables)");
  run->add_option("--setup", command.setup_step,
                  "sysbench: a step run before sampling starts, e.g. prepare");
  run->add_option("--teardown", command.teardown_step,
                  "sysbench: a step run after sampling ends, e.g. cleanup");
  run->add_option("target", command.target,
                  "connection string or URI; none: PG* variables, else a scratch cluster");
  run->add_option("--hz", command.hz, "snapshots per second (1-10000; sources activity and memory)")
      ->transform(finite_in_range(config::kMinHz, config::kMaxHz));
  run->add_option("--interval", command.interval_s, "timeline interval in seconds (pgbench -P)")
      ->transform(integer_in_range(1, config::kMaxIntervalS));
  run->add_option("--workload", command.workload, "a built-in workload")
      ->check(CLI::IsMember(model::workload_names()));
  run->add_option("--label", command.label, "a label for the run");
  add_tag_option(*run, command);
  run->add_option("--data-dir", command.data_dir, "where the run directory is written");
  run->add_option("--source", source, kSourceHelp)
      ->check(CLI::IsMember(model::sampler_source_names()));
  add_placement_options(*run, command);
  run->add_option("--scale", command.scale, "pgbench -i scale of a scratch cluster")
      ->transform(integer_in_range(1, 100000));
  run->add_flag("--keep-cluster", command.keep_cluster, "leave the scratch cluster running");
  run->add_option("--server-bin", command.server_bin,
                  "run a scratch cluster of this build: a directory with initdb, pg_ctl and "
                  "postgres (e.g. a source build's bin/)");
  run->add_flag("--brief", command.brief,
                "print one line (tps, where the report is) instead of the report and the load "
                "generator's output");
  run->add_flag("--keep-transaction-log", command.keep_transaction_log,
                "keep pgbench's per-transaction log (pgbench_log.*) in the run directory");
  run->add_flag("--checkpoint-after", command.checkpoint_after,
                "CHECKPOINT when the load ends, timed and sampled as its own part of the run");
  run->add_flag("--cpu-profile{99}", command.cpu_profile_hz,
                "sample the server's processes on a CPU (perf events, this host only), at HZ "
                "per CPU (1-999, default 99)")
      ->transform(integer_in_range(config::kMinCpuProfileHz, config::kMaxCpuProfileHz))
      ->option_text("[=HZ]");
  run->add_option("--results-dsn", command.results_dsn,
                  "upload the run to this results database (or $PGWAITPROF_RESULTS_DSN)");
  run->add_flag("--no-daemon", command.no_daemon,
                "sample here even if a daemon samples the target");
}

void add_record(CLI::App& app, RunCommand& command, std::string& source) {
  auto* record = app.add_subcommand(
      "record", "a recording window for load that runs elsewhere, reported with the server's tps");
  record->add_option("target", command.target, "connection string or URI; none: PG* variables");
  record->add_option("--duration", command.record_duration_s, "seconds; none: until Ctrl-C")
      ->transform(integer_in_range(1, 7 * 86400));
  record
      ->add_option("--hz", command.hz,
                   "snapshots per second (1-10000; sources activity and memory)")
      ->transform(finite_in_range(config::kMinHz, config::kMaxHz));
  record->add_option("--interval", command.interval_s, "timeline interval in seconds")
      ->transform(integer_in_range(1, config::kMaxIntervalS));
  record->add_option("--label", command.label, "what the load was");
  add_tag_option(*record, command);
  record->add_option("--data-dir", command.data_dir, "where the run directory is written");
  record
      ->add_flag("--cpu-profile{99}", command.cpu_profile_hz,
                 "sample the server's processes on a CPU (perf events, this host only), at HZ "
                 "per CPU (1-999, default 99)")
      ->transform(integer_in_range(config::kMinCpuProfileHz, config::kMaxCpuProfileHz))
      ->option_text("[=HZ]");
  record->add_option("--source", source, kSourceHelp)
      ->check(CLI::IsMember(model::sampler_source_names()));
  record->add_option("--results-dsn", command.results_dsn,
                     "upload the run to this results database (or $PGWAITPROF_RESULTS_DSN)");
  record->add_flag("--no-daemon", command.no_daemon,
                   "sample here even if a daemon samples the target");
}

void add_report(CLI::App& app, ReportCommand& command) {
  auto* report = app.add_subcommand("report", "render a saved run again");
  report->add_option("run_dir", command.run_dir, "run directory (or its report.json)")->required();
  report
      ->add_option("--format", command.format, "text, md, json, csv, timeline-csv, folded or html")
      ->check(CLI::IsMember({"text", "md", "json", "csv", "timeline-csv", "folded", "html"}));
  report
      ->add_option("--by", command.by,
                   "wait_event, backend_type, state, wait_event_type or query_id")
      ->check(
          CLI::IsMember({"wait_event", "backend_type", "state", "wait_event_type", "query_id"}));
  report->add_option("--top", command.top, "rows before the rest is summed as \"other\"")
      ->transform(integer_in_range(1, 1000000));
  report->add_flag("--include-idle", command.include_idle, "count idle sessions in shares");
  report->add_flag("--no-trim", command.no_trim,
                   "keep the warm-up (found by MSER-5) in the summary figures and errors");
}

void add_matrix(CLI::App& app, MatrixCommand& command) {
  auto* matrix = app.add_subcommand("matrix", "a sweep of runs: variants x clients x repeats");
  matrix->add_option("plan", command.plan_path, "the plan (YAML)");
  matrix->add_option("--resume", command.resume_dir, "finish an interrupted matrix directory");
  matrix->add_option("--data-dir", command.data_dir, "where the matrix directory is written");
  matrix->add_option("--duration", command.duration_s, "override the plan's duration (seconds)")
      ->transform(integer_in_range(1, 86400));
  matrix->add_option("--repeats", command.repeats, "override the plan's repeats")
      ->transform(integer_in_range(1, 100));
  matrix->add_option("--scale", command.scale, "override the plan's scale")
      ->transform(integer_in_range(1, 100000));
  matrix->add_option("--target", command.target,
                     "run the plan on this server (connection string) instead of its target");
  matrix
      ->add_option("--split-by", command.split_by,
                   "split the table's rows by a recorded attribute: kernel, cpu_model, "
                   "server_version or label")
      ->check(CLI::IsMember({"kernel", "cpu_model", "server_version", "label"}));
  matrix->add_flag("--quick", command.quick,
                   "a short version of the plan: 5 s runs, 1 repeat, its first and last client "
                   "counts, scale at most 2");
  matrix->add_option("--results-dsn", command.results_dsn,
                     "upload the runs to this results database (or $PGWAITPROF_RESULTS_DSN)");
  add_matrix_placement_options(*matrix, command);
}

void add_compare(CLI::App& app, CompareCommand& command) {
  auto* compare = app.add_subcommand(
      "compare", "A/B: the change with its 95 % interval and p-value, and the waits that moved");
  compare
      ->add_option(
          "a", command.side_a,
          "run or matrix directory, run id, label, or filter (\"label=x*;workload=tpcb\"); "
          "comma-separated")
      ->required();
  compare->add_option("b", command.side_b, "the same for the other side")->required();
  compare->add_option("--data-dir", command.data_dir, "whose run history ids and labels name");
  compare->add_option("--results-dsn", command.results_dsn,
                      "look run ids, labels and filters up in this results database");
  compare->add_option("--format", command.format, "text, md or json")
      ->check(CLI::IsMember({"text", "md", "json"}));
  compare
      ->add_option("--split-by", command.split_by,
                   "pool both sides' runs and compare by a recorded attribute's two values: "
                   "kernel, cpu_model, server_version or label")
      ->check(CLI::IsMember({"kernel", "cpu_model", "server_version", "label"}));
}

// CLI11's help with the value of an option as a reader wants it: "a|b|c" for a choice (CLI11
// writes "TEXT:{a,b,c}"), "1-3600" for a range (CLI11: "INT:INT in [1 - 3600]"), "KEY=VALUE"
// for a named validator ("TEXT:KEY=VALUE").
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* option) const override {
    std::string text = CLI::Formatter::make_option_opts(option);
    static const std::regex choice(R"((?:TEXT|ENUM):\{([^}]*)\})");
    static const std::regex range(R"([A-Z]+:[A-Z]+ in \[([^ \]]+) - ([^ \]]+)\])");
    std::smatch match;
    if (std::regex_search(text, match, choice)) {
      std::string values = match[1];
      std::replace(values.begin(), values.end(), ',', '|');
      text = std::string(match.prefix()) + values + std::string(match.suffix());
    }
    // A validator's own name after the type ("TEXT:KEY=VALUE") is the better word alone.
    static const std::regex named(R"(\b(?:TEXT|INT|UINT|FLOAT):)");
    return std::regex_replace(std::regex_replace(text, range, "$1-$2"), named, "");
  }
};

}  // namespace

std::string version_text() {
  // The first line is GNU's "program version", which help2man reads for the man page.
  return fmt::format("pgwaitprof {}\nrevision {}\nlibpq {}", base::kVersion, base::kRevision,
                     collectors::libpq_version());
}

void add_commands(CLI::App& app, Commands& commands) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text());
  app.add_option("--log-level", commands.log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember(base::log_level_names()));
  add_daemon(app, commands.daemon);
  add_run(app, commands.run, commands.run_source, commands.run_loadgen);
  add_record(app, commands.record, commands.record_source);
  add_report(app, commands.report);
  add_matrix(app, commands.matrix);
  add_compare(app, commands.compare);
  add_runs_command(app, commands.runs);
  add_trend_command(app, commands.trend);
  add_results_command(app, commands.results);
  // The event names (today's and old ones) as the option's type name, which the completion
  // reads (option_choices); the help shows EVENT instead of the list.
  std::set<std::string> event_names;
  for (const auto& info : model::wait_event_reference()) {
    event_names.emplace(info.name);
    for (const auto& old : info.old_names) event_names.emplace(old.name);
  }
  std::string event_choices;
  for (const auto& name : event_names) {
    if (name.find_first_of(" \t,{}") != std::string::npos) continue;
    event_choices += (event_choices.empty() ? "" : ",") + name;
  }
  app.add_subcommand("explain", "what a wait event means and what usually causes it")
      ->add_option("event", commands.explained,
                   "a wait event: \"WALWrite\", \"LWLock | WALWrite\", \"WALWriteLock\", ...")
      ->required()
      ->type_name("{" + event_choices + "}")
      ->option_text("EVENT");
}

}  // namespace pgwaitprof::commands
