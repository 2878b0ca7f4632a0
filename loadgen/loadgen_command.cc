// Load generator command lines and failure descriptions.
#include "loadgen/loadgen_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "base/programs.h"
#include "collectors/pg_session.h"
#include "model/pgbench_scripts.h"

namespace pgwaitprof::loadgen {

std::optional<std::string> pgbench_option(const std::vector<std::string>& args, char short_name,
                                          std::string_view long_name) {
  const std::string short_flag = std::string("-") + short_name;
  const std::string long_flag = "--" + std::string(long_name);
  for (size_t index = 0; index < args.size(); ++index) {
    const auto& arg = args[index];
    if (arg == short_flag || arg == long_flag) {
      if (index + 1 < args.size()) return args[index + 1];
      return std::string();
    }
    if (arg.starts_with(long_flag + "=")) return arg.substr(long_flag.size() + 1);
    if (arg.starts_with(short_flag) && arg.size() > short_flag.size() && !arg.starts_with("--")) {
      return arg.substr(short_flag.size());
    }
  }
  return std::nullopt;
}

int pgbench_int_option(const std::vector<std::string>& args, char short_name,
                       std::string_view long_name, int fallback) {
  const auto value = pgbench_option(args, short_name, long_name);
  if (!value) return fallback;
  int parsed = 0;
  const auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), parsed);
  return error == std::errc() && end == value->data() + value->size() ? parsed : fallback;
}

LoadgenCommand build_loadgen_command(const LoadgenInputs& inputs) {
  LoadgenCommand command;
  auto& argv = command.argv;
  argv.push_back(inputs.executable);
  // The user's own script options are the workload: pgbench would run a built-in beside them,
  // half the transactions each.
  const bool user_scripts = !model::pgbench_scripts(inputs.user_args).empty();
  if (inputs.workload != nullptr && !user_scripts) {
    argv.insert(argv.end(), inputs.workload->builtin_args.begin(),
                inputs.workload->builtin_args.end());
  }
  if (!inputs.script_path.empty() && !user_scripts) {
    argv.insert(argv.end(), {"-f", inputs.script_path});
    // Custom scripts see :scale only when it is given.
    if (!pgbench_option(inputs.user_args, 's', "scale") && !inputs.scale.empty()) {
      argv.insert(argv.end(), {"-s", inputs.scale});
    }
  }
  // pgbench's -P takes whole seconds.
  const int interval_s = static_cast<int>(inputs.interval.count());
  command.interval = inputs.interval;
  if (pgbench_option(inputs.user_args, 'P', "progress")) {
    command.interval =
        base::Seconds(pgbench_int_option(inputs.user_args, 'P', "progress", interval_s));
  } else {
    argv.insert(argv.end(), {"-P", std::to_string(interval_s)});
  }
  // Latency percentiles need pgbench's per-transaction log: into the run directory when the
  // user did not ask for one; theirs is read where they put it (never with aggregates).
  const auto logging = loadgen::log_args_of(inputs.user_args);
  if (!logging.aggregated) {
    if (logging.logging) {
      command.transaction_log_prefix = logging.log_prefix.value_or("pgbench_log");
    } else if (!inputs.transaction_log_prefix.empty()) {
      argv.insert(argv.end(), {"-l", "--log-prefix=" + inputs.transaction_log_prefix});
      command.transaction_log_prefix = inputs.transaction_log_prefix;
      command.transaction_log_added = true;
    }
    command.transaction_log_columns = logging.columns;
    command.transaction_log_sampling_rate = logging.sampling_rate;
  }
  argv.insert(argv.end(), inputs.user_args.begin(), inputs.user_args.end());
  command.display_argv = argv;
  if (!inputs.conninfo.empty()) {
    const auto split = collectors::split_password(inputs.conninfo);
    argv.push_back(split.conninfo);
    if (!split.password.empty()) command.environment.push_back("PGPASSWORD=" + split.password);
    command.display_argv.push_back(inputs.display_target);
  }
  command.threads = pgbench_int_option(inputs.user_args, 'j', "jobs", 1);
  command.clients = pgbench_int_option(inputs.user_args, 'c', "client", 1);
  return command;
}

namespace {

bool is_hint(std::string_view line) {
  return line.find("--help") != std::string_view::npos ||
         line.find("hint:") != std::string_view::npos ||
         line.find("HINT:") != std::string_view::npos;
}

bool is_error(std::string_view line) {
  for (const char* marker : {"error", "FATAL", "invalid option", "unrecognized option",
                             "requires an argument", "invalid value"}) {
    if (line.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

// Lines pgbench prints on its way, never the cause of a failure.
bool is_chatter(std::string_view line) {
  return line.empty() || line.starts_with("progress:") || line.starts_with("starting vacuum") ||
         line.starts_with("pgbench (") || line.starts_with("transaction type:");
}

}  // namespace

std::string describe_loadgen_failure(int exit_code, std::string_view stderr_text,
                                     std::string_view name) {
  std::string first_error;
  std::string last_other;
  size_t start = 0;
  while (start < stderr_text.size()) {
    size_t end = stderr_text.find('\n', start);
    if (end == std::string_view::npos) end = stderr_text.size();
    const auto line = stderr_text.substr(start, end - start);
    start = end + 1;
    if (is_hint(line) || is_chatter(line)) continue;
    if (is_error(line) && first_error.empty()) first_error = line;
    last_other = line;
  }
  std::string text = std::string(name) + " " + base::describe_exit(exit_code);
  if (exit_code > 128) {
    if (!first_error.empty()) text += ": " + first_error;
  } else if (!first_error.empty()) {
    text += ": " + first_error;
  } else if (!last_other.empty()) {
    text += ": " + last_other;
  }
  return collectors::mask_secrets(text);
}

std::string_view to_string(LoadgenKind kind) {
  switch (kind) {
    case LoadgenKind::kPgbench:
      return "pgbench";
    case LoadgenKind::kSysbench:
      return "sysbench";
    case LoadgenKind::kCommand:
      return "command";
    case LoadgenKind::kNone:
      return "none";
  }
  return "pgbench";
}

std::optional<LoadgenKind> parse_loadgen_kind(std::string_view name) {
  for (const auto kind : {LoadgenKind::kPgbench, LoadgenKind::kSysbench, LoadgenKind::kCommand}) {
    if (to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

namespace {

void add_environment(LoadgenCommand& command, const TargetAddress& target) {
  for (const auto& [name, value] : {std::pair<std::string, std::string>{"PGHOST", target.host},
                                    {"PGPORT", target.port},
                                    {"PGUSER", target.user},
                                    {"PGDATABASE", target.dbname},
                                    {"PGPASSWORD", target.password}}) {
    if (!value.empty()) command.environment.push_back(name + "=" + value);
  }
}

bool has_option(const std::vector<std::string>& args, std::string_view name) {
  const std::string flag = "--" + std::string(name);
  return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
    return arg == flag || arg.starts_with(flag + "=");
  });
}

constexpr std::array<std::string_view, 4> kSysbenchSteps = {"prepare", "run", "cleanup", "prewarm"};

}  // namespace

LoadgenCommand build_any_command(const std::string& executable,
                                 const std::vector<std::string>& args,
                                 const TargetAddress& target) {
  LoadgenCommand command;
  command.display_argv = args;
  command.argv = args;
  if (!command.argv.empty()) command.argv.front() = executable;
  add_environment(command, target);
  command.clients = 0;  // not known
  return command;
}

std::optional<std::string> sysbench_step(const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    if (std::find(kSysbenchSteps.begin(), kSysbenchSteps.end(), arg) != kSysbenchSteps.end()) {
      return arg;
    }
  }
  return std::nullopt;
}

LoadgenCommand build_sysbench_command(const std::string& executable,
                                      const std::vector<std::string>& args,
                                      const TargetAddress& target, base::Seconds interval,
                                      std::string_view step) {
  LoadgenCommand command;
  std::vector<std::string> words{executable};
  for (const auto& arg : args) {
    // The step asked for replaces the one given.
    if (!step.empty() &&
        std::find(kSysbenchSteps.begin(), kSysbenchSteps.end(), arg) != kSysbenchSteps.end()) {
      continue;
    }
    words.push_back(arg);
  }
  if (!has_option(args, "db-driver")) words.emplace_back("--db-driver=pgsql");
  const std::pair<std::string_view, std::string> connection[] = {{"pgsql-host", target.host},
                                                                 {"pgsql-port", target.port},
                                                                 {"pgsql-user", target.user},
                                                                 {"pgsql-db", target.dbname}};
  for (const auto& [name, value] : connection) {
    if (!has_option(args, name) && !value.empty()) {
      words.push_back(fmt::format("--{}={}", name, value));
    }
  }
  const int interval_s = std::max(1, static_cast<int>(interval.count()));
  command.interval = base::Seconds(interval_s);
  if (const auto given = pgbench_option(args, '\0', "report-interval")) {
    int value = 0;
    const auto [end, error] = std::from_chars(given->data(), given->data() + given->size(), value);
    if (error == std::errc() && value > 0) command.interval = base::Seconds(value);
  } else if (step.empty() || step == "run") {
    words.push_back(fmt::format("--report-interval={}", interval_s));
  }
  if (!step.empty()) {
    words.emplace_back(step);
  } else if (!sysbench_step(args)) {
    words.emplace_back("run");
  }
  command.argv = words;
  command.display_argv = words;
  command.display_argv.front() = "sysbench";
  if (!target.password.empty()) command.environment.push_back("PGPASSWORD=" + target.password);
  int threads = 1;
  if (const auto given = pgbench_option(args, '\0', "threads")) {
    (void)std::from_chars(given->data(), given->data() + given->size(), threads);
  }
  command.clients = threads;
  command.threads = threads;
  return command;
}

}  // namespace pgwaitprof::loadgen
