// Command-line interface: one binary, subcommands per DESIGN.md. Arguments after "--" belong to
// the load generator and are split off before CLI11 sees the rest. Usage errors exit 2 (before
// any work is done), runtime failures 1 (STYLE.md rule 4).
#include "daemon/commands/cli.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <regex>
#include <set>

#include "base/build_info.h"
#include "base/logging.h"
#include "collectors/pg_session.h"
#include "config/daemon_config.h"
#include "config/numbers.h"
#include "config/quote.h"
#include "daemon/commands/exit_codes.h"
#include "daemon/commands/explain_command.h"
#include "daemon/commands/matrix_command.h"
#include "daemon/commands/number_options.h"
#include "daemon/commands/placement_options.h"
#include "daemon/commands/remote_sample.h"
#include "daemon/commands/report_command.h"
#include "daemon/commands/results_command.h"
#include "daemon/commands/run_command.h"
#include "daemon/commands/runs_command.h"
#include "daemon/commands/standard_output.h"
#include "daemon/commands/trend_command.h"
#include "daemon/engine/supervisor.h"
#include "daemon/service/daemon_app.h"
#include "exporters/render/text_format.h"
#include "model/run.h"
#include "model/wait_events.h"
#include "model/workloads.h"

namespace pgwaitprof::commands {
namespace {

constexpr const char* kSourceHelp =
    "auto (default: memory for a server on this host whose memory can be read, else activity), "
    "memory (the server's shared memory, this host only), activity (pg_stat_activity) or "
    "pg_wait_sampling";

using exporters::text_format::text_escape;

int parse_and_dispatch(int argc, char** argv);

struct DaemonCommand {
  std::optional<std::string> config_file;
  service::DaemonOverrides overrides;
  std::optional<std::string> source;
};

std::optional<model::SamplerSource> source_of(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  return model::parse_sampler_source(*name);
}

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
  daemon->add_option("--source", command.source, kSourceHelp)
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

namespace {

// The values an option accepts when CLI11 knows them (IsMember, CheckedTransformer): the first
// "{a,b,c}" of its type name, each without a transformer's "->value".
std::vector<std::string> option_choices(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const auto open = type.find('{');
  const auto close = type.find('}', open);
  std::vector<std::string> choices;
  if (open == std::string::npos || close == std::string::npos) return choices;
  std::string item;
  for (const char character : type.substr(open + 1, close - open - 1) + ",") {
    if (character != ',') {
      item += character;
      continue;
    }
    choices.push_back(item.substr(0, item.find("->")));
    item.clear();
  }
  return choices;
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

// One command's part of the completion function: its subcommands and options for the word
// being completed, the values of its options, and the options that take a value (whose value
// is not a subcommand when the words before the cursor are walked).
struct CompletionCases {
  std::string walk;    // case "$path/$word" arms that descend into a subcommand
  std::string skip;    // case "$path $word" arms of options that take a value
  std::string values;  // case "$path $prev" arms that complete an option's value
  std::string words;   // case "$path" arms with the subcommands and options
};

void add_completion_cases(const CLI::App& command, const std::string& path,
                          CompletionCases& cases) {
  std::vector<std::string> words;
  for (const CLI::App* subcommand : command.get_subcommands({})) {
    const std::string sub_path = path + "/" + subcommand->get_name();
    cases.walk += "      \"" + sub_path + "\") path=" + sub_path + " ;;\n";
    words.push_back(subcommand->get_name());
    add_completion_cases(*subcommand, sub_path, cases);
  }
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_positional()) {
      // A positional with known values (explain's event names) completes them.
      const auto choices = option_choices(*option);
      words.insert(words.end(), choices.begin(), choices.end());
      continue;
    }
    std::vector<std::string> names;
    for (const auto& name : option->get_snames()) names.push_back("-" + name);
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
    words.insert(words.end(), names.begin(), names.end());
    if (option->get_expected_min() == 0) continue;  // a flag
    const auto choices = option_choices(*option);
    for (const auto& name : names) {
      cases.skip += "      \"" + path + " " + name + "\") ((index++)) ;;\n";
      cases.values += "    \"" + path + " " + name + "\") ";
      cases.values += choices.empty() ? "compopt -o default; COMPREPLY=(); return 0 ;;\n"
                                      : "COMPREPLY=($(compgen -W \"" + joined(choices) +
                                            "\" -- \"$cur\")); return 0 ;;\n";
    }
  }
  cases.words += "    \"" + path + "\") words=\"" + joined(words) + "\" ;;\n";
}

}  // namespace

std::string bash_completion() {
  CLI::App app;
  Commands commands;
  add_commands(app, commands);
  CompletionCases cases;
  add_completion_cases(app, "", cases);
  // Positionals (targets, run directories, plans) complete as files; after "--" the words
  // belong to the load generator.
  return fmt::format(
      R"(# bash completion for pgwaitprof, generated from its command line at build time
# (daemon/completion_main.cc): do not edit.
_pgwaitprof() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD - 1]}}
  local path="" word words index
  for ((index = 1; index < COMP_CWORD; index++)); do
    word=${{COMP_WORDS[index]}}
    if [[ $word == -- ]]; then
      compopt -o default
      COMPREPLY=()
      return 0
    fi
    case "$path $word" in
{}    esac
    case "$path/$word" in
{}    esac
  done
  case "$path $prev" in
{}  esac
  case "$path" in
{}  esac
  if [[ $cur == -* || -z $path ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  else
    compopt -o default
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
}}
complete -F _pgwaitprof pgwaitprof
)",
      cases.skip, cases.walk, cases.values, cases.words);
}

std::string version_text() {
  // The first line is GNU's "program version", which help2man reads for the man page.
  return fmt::format("pgwaitprof {}\nrevision {}\nlibpq {}", base::kVersion, base::kRevision,
                     collectors::libpq_version());
}

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
