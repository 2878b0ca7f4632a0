// Load generator command lines and failure descriptions.
#include "loadgen/loadgen_command.h"

#include <fmt/format.h>

#include <charconv>

#include "base/programs.h"
#include "collectors/pg_session.h"

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
  if (inputs.workload != nullptr) {
    argv.insert(argv.end(), inputs.workload->builtin_args.begin(),
                inputs.workload->builtin_args.end());
  }
  if (!inputs.script_path.empty()) {
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

std::string describe_loadgen_failure(int exit_code, std::string_view stderr_text) {
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
  std::string text = "pgbench " + base::describe_exit(exit_code);
  if (exit_code > 128) {
    if (!first_error.empty()) text += ": " + first_error;
  } else if (!first_error.empty()) {
    text += ": " + first_error;
  } else if (!last_other.empty()) {
    text += ": " + last_other;
  }
  return collectors::mask_secrets(text);
}

}  // namespace pgwaitprof::loadgen
