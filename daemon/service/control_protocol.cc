// Control socket requests and events.
#include "daemon/service/control_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "config/daemon_config.h"
#include "config/numbers.h"
#include "model/run.h"
#include "model/workloads.h"

namespace pgwaitprof::service {
namespace {

using base::Error;
using nlohmann::json;

// Options that take a value, and flags, a socket client may give pgbench.
constexpr auto kValueOptions =
    std::to_array<std::pair<char, std::string_view>>({{'c', "client"},
                                                      {'j', "jobs"},
                                                      {'T', "time"},
                                                      {'t', "transactions"},
                                                      {'R', "rate"},
                                                      {'M', "protocol"},
                                                      {'b', "builtin"},
                                                      {'P', "progress"},
                                                      {'L', "latency-limit"},
                                                      {'s', "scale"},
                                                      {'D', "define"},
                                                      {'\0', "max-tries"},
                                                      {'\0', "random-seed"}});
constexpr auto kFlagOptions =
    std::to_array<std::pair<char, std::string_view>>({{'n', "no-vacuum"},
                                                      {'N', "skip-some-updates"},
                                                      {'S', "select-only"},
                                                      {'r', "report-per-command"},
                                                      {'C', "connect"},
                                                      {'\0', "progress-timestamp"},
                                                      {'\0', "failures-detailed"},
                                                      {'\0', "verbose-errors"},
                                                      {'\0', "report-latencies"}});

template <size_t N>
bool has_short(const std::array<std::pair<char, std::string_view>, N>& options, char name) {
  return name != '\0' && std::any_of(options.begin(), options.end(),
                                     [&](const auto& option) { return option.first == name; });
}

template <size_t N>
bool has_long(const std::array<std::pair<char, std::string_view>, N>& options,
              std::string_view name) {
  return std::any_of(options.begin(), options.end(),
                     [&](const auto& option) { return option.second == name; });
}

Error not_allowed(std::string_view option) {
  return Error{fmt::format(
      "pgbench option \"{}\" is not allowed through the control socket (allowed: clients, jobs, "
      "time, transactions, rate, protocol, progress, builtin scripts, latency-limit, scale, "
      "define, max-tries and flags such as -n, -S, -N, -r, -C)",
      option)};
}

std::string type_name(const json& value) { return value.type_name(); }

base::Status require(const json& value, json::value_t type, std::string_view key,
                     std::string_view expected) {
  if (value.type() == type ||
      (type == json::value_t::number_integer && value.is_number_unsigned())) {
    return std::nullopt;
  }
  return Error{
      fmt::format("invalid value for \"{}\": must be {}, not {}", key, expected, type_name(value))};
}

// The readers of a request's fields, each of the keys it is named for below.
base::Status read_text_field(const std::string& key, const json& value, engine::RunRequest& run) {
  if (auto failed = require(value, json::value_t::string, key, "a string")) return failed;
  const auto text = value.get<std::string>();
  if (key == "loadgen_kind") {
    const auto kind = text == "none" ? std::optional(loadgen::LoadgenKind::kNone)
                                     : loadgen::parse_loadgen_kind(text);
    if (!kind) {
      return Error{
          fmt::format("invalid value for \"loadgen_kind\": unknown load generator \"{}\"", text)};
    }
    run.kind = *kind;
  } else if (key == "workload") {
    if (model::find_workload(text) == nullptr) {
      return Error{fmt::format("invalid value for \"workload\": unknown workload \"{}\"", text)};
    }
    run.workload = text;
  } else if (key == "setup_step") {
    run.setup_step = text;
  } else if (key == "teardown_step") {
    run.teardown_step = text;
  } else if (key == "target") {
    run.conninfo = text;
  } else if (key == "label") {
    run.label = text;
  } else {
    run.loadgen = text;
  }
  return std::nullopt;
}

base::Status read_record_duration(const std::string&, const json& value, engine::RunRequest& run) {
  if (!value.is_number_integer() || value.get<long long>() < 0 ||
      value.get<long long>() > 7 * 86400) {
    return Error{
        "invalid value for \"record_duration_s\": must be an integer between 0 and 604800"};
  }
  run.record_duration = base::Seconds(static_cast<double>(value.get<long long>()));
  return std::nullopt;
}

base::Status read_tags(const std::string& key, const json& value, engine::RunRequest& run) {
  if (auto failed = require(value, json::value_t::object, key, "an object of strings")) {
    return failed;
  }
  if (value.size() > model::kMaxTags) {
    return Error{fmt::format("invalid value for \"tags\": more than {} tags", model::kMaxTags)};
  }
  for (const auto& [tag_key, tag_value] : value.items()) {
    if (!tag_value.is_string()) {
      return Error{"invalid value for \"tags\": every value must be a string"};
    }
    auto tag = model::parse_tag(tag_key + "=" + tag_value.get<std::string>());
    if (!tag) return Error{"invalid value for \"tags\": " + tag.error().message};
    run.tags.insert(std::move(*tag));
  }
  return std::nullopt;
}

base::Status read_pgbench_args(const std::string& key, const json& value, engine::RunRequest& run) {
  if (auto failed = require(value, json::value_t::array, key, "a list of strings")) return failed;
  for (const auto& item : value) {
    if (!item.is_string()) {
      return Error{"invalid value for \"pgbench_args\": every item must be a string"};
    }
    run.pgbench_args.push_back(item.get<std::string>());
  }
  return std::nullopt;
}

base::Status read_keep_transaction_log(const std::string& key, const json& value,
                                       engine::RunRequest& run) {
  if (auto failed = require(value, json::value_t::boolean, key, "true or false")) return failed;
  run.keep_transaction_log = value.get<bool>();
  return std::nullopt;
}

base::Status read_interval(const std::string&, const json& value, engine::RunRequest& run) {
  if (!value.is_number_integer()) {
    return Error{
        fmt::format("invalid value for \"interval_s\": must be an integer between 1 and {}",
                    config::kMaxIntervalS)};
  }
  // An unsigned beyond long long would wrap around to a negative number: it saturates.
  constexpr auto kLargest = std::numeric_limits<long long>::max();
  const long long seconds =
      value.is_number_unsigned() &&
              value.get<unsigned long long>() > static_cast<unsigned long long>(kLargest)
          ? kLargest
          : value.get<long long>();
  if (auto rule = config::integer_in_range(seconds, 1, config::kMaxIntervalS)) {
    return Error{fmt::format("invalid value for \"interval_s\": {}", *rule)};
  }
  run.interval = base::Seconds(seconds);
  return std::nullopt;
}

base::Status read_field(const std::string& key, const json& value, engine::RunRequest& run) {
  using Reader = base::Status (*)(const std::string&, const json&, engine::RunRequest&);
  static const auto kReaders = std::to_array<std::pair<std::string_view, Reader>>({
      {"type",
       [](const std::string&, const json&, engine::RunRequest&) -> base::Status {
         return std::nullopt;  // checked by parse_run_request
       }},
      {"loadgen_kind", read_text_field},
      {"setup_step", read_text_field},
      {"teardown_step", read_text_field},
      {"target", read_text_field},
      {"workload", read_text_field},
      {"label", read_text_field},
      {"loadgen", read_text_field},
      {"record_duration_s", read_record_duration},
      {"tags", read_tags},
      {"pgbench_args", read_pgbench_args},
      {"keep_transaction_log", read_keep_transaction_log},
      {"interval_s", read_interval},
  });
  const auto reader = std::find_if(kReaders.begin(), kReaders.end(),
                                   [&](const auto& entry) { return entry.first == key; });
  if (reader == kReaders.end()) return Error{fmt::format("unrecognized key \"{}\"", key)};
  return reader->second(key, value, run);
}

}  // namespace

base::Expected<engine::RunRequest> parse_run_request(std::string_view line) {
  const json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object()) {
    return Error{"could not parse request: not a JSON object"};
  }
  const auto type = request.find("type");
  if (type == request.end() || !type->is_string() || type->get<std::string>() != "run") {
    return Error{"could not parse request: \"type\" must be \"run\""};
  }
  engine::RunRequest run;
  for (const auto& [key, value] : request.items()) {
    if (auto failed = read_field(key, value, run)) return *failed;
  }
  if (run.label.size() > 200) return Error{"invalid value for \"label\": longer than 200 bytes"};
  // Another load generator's arguments are not pgbench's: it is refused or allowed by name.
  if (const auto invalid = std::filesystem::path(run.loadgen).filename() == "pgbench" &&
                                   run.kind == loadgen::LoadgenKind::kPgbench
                               ? config::check_pgbench_numbers(run.pgbench_args)
                               : std::nullopt) {
    return Error{invalid->message()};
  }
  // A command's executable is the one the daemon's allow-list judges.
  if (run.kind == loadgen::LoadgenKind::kCommand) {
    if (run.pgbench_args.empty()) return Error{"invalid value for \"pgbench_args\": no command"};
    run.loadgen = run.pgbench_args.front();
  }
  if (run.kind == loadgen::LoadgenKind::kNone) run.loadgen.clear();
  return run;
}

bool is_interrupt_request(std::string_view line) {
  const json request = json::parse(line, nullptr, false);
  return request.is_object() && request.value("type", "") == "interrupt";
}

base::Status check_socket_loadgen_args(const engine::RunRequest& request) {
  switch (request.kind) {
    case loadgen::LoadgenKind::kPgbench:
      return check_socket_pgbench_args(request.pgbench_args);
    case loadgen::LoadgenKind::kSysbench:
      for (const auto& arg : request.pgbench_args) {
        if (arg.starts_with("--pgsql-") || arg.starts_with("--db-driver")) {
          return Error{fmt::format(
              "sysbench option \"{}\" is not allowed through the control socket: the daemon's "
              "target decides the database",
              arg.substr(0, arg.find('=')))};
        }
      }
      return std::nullopt;
    case loadgen::LoadgenKind::kCommand:  // allowed by its executable's name (admit)
    case loadgen::LoadgenKind::kNone:
      return std::nullopt;
  }
  return std::nullopt;
}

base::Status check_socket_pgbench_args(const std::vector<std::string>& args) {
  for (size_t index = 0; index < args.size(); ++index) {
    const std::string& arg = args[index];
    if (arg.starts_with("--")) {
      const auto name = std::string_view(arg).substr(2, arg.find('=') - 2);
      if (has_long(kFlagOptions, name) && arg.find('=') == std::string::npos) continue;
      if (!has_long(kValueOptions, name)) return not_allowed("--" + std::string(name));
      if (arg.find('=') == std::string::npos) ++index;  // the value is the next argument
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      return Error{fmt::format(
          "pgbench argument \"{}\" is not allowed through the control socket: the daemon's target "
          "decides the database",
          arg)};
    }
    if (has_short(kValueOptions, arg[1])) {
      if (arg.size() == 2) ++index;
      continue;
    }
    // Flags may be combined ("-nS").
    for (size_t letter = 1; letter < arg.size(); ++letter) {
      if (!has_short(kFlagOptions, arg[letter])) return not_allowed(std::string("-") + arg[letter]);
    }
  }
  return std::nullopt;
}

std::string started_event(const std::string& run_id, const std::string& dir) {
  return json{{"event", "started"}, {"run_id", run_id}, {"dir", dir}}.dump(
             -1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::string line_event(std::string_view text) {
  return json{{"event", "line"}, {"text", std::string(text)}}.dump(-1, ' ', false,
                                                                   json::error_handler_t::replace) +
         "\n";
}

std::string alive_event() { return "{\"event\":\"alive\"}\n"; }

std::string done_event(const engine::RunOutcome& outcome) {
  return json{{"event", "done"},
              {"dir", outcome.dir.string()},
              {"status", to_string(outcome.run.status)},
              {"exit_code", outcome.exit_code},
              {"error", outcome.run.error}}
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::string error_event(std::string_view code, std::string_view message) {
  return json{{"event", "error"}, {"code", std::string(code)}, {"message", std::string(message)}}
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::string run_request_line(const engine::RunRequest& request) {
  return json{{"type", "run"},
              {"target", request.conninfo},
              {"workload", request.workload},
              {"label", request.label},
              {"tags", request.tags},
              {"pgbench_args", request.pgbench_args},
              {"interval_s", static_cast<int>(request.interval.count())},
              {"loadgen", request.loadgen},
              {"loadgen_kind", std::string(loadgen::to_string(request.kind))},
              {"setup_step", request.setup_step},
              {"teardown_step", request.teardown_step},
              {"record_duration_s", static_cast<long long>(request.record_duration.count())},
              {"keep_transaction_log", request.keep_transaction_log}}
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::string interrupt_request_line() { return "{\"type\":\"interrupt\"}\n"; }

}  // namespace pgwaitprof::service
