// The daemon configuration: its schema and strict validation.
#include "config/daemon_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <span>

#include "base/logging.h"
#include "config/daemon_config_keys.h"
#include "config/numbers.h"
#include "config/sampler_host.h"
#include "config/yaml_reader.h"
#include "model/pgbench_scripts.h"
#include "model/workloads.h"

namespace pgwaitprof::config {
namespace {

using namespace yaml;

// Label names the exporter already uses (or Prometheus reserves): an extra constant label with
// one of these names would make the exposition invalid at the first scrape, long after start-up.
constexpr auto kReservedLabels = std::to_array<std::string_view>(
    {"target", "backend_type", "state", "wait_event_type", "wait_event", "run_id", "workload",
     "version", "revision", "le", "quantile", "job", "instance", "source", "requested", "hz",
     "collector", "view"});

// The keys each map of the configuration takes (daemon_config_keys() lists them all).
constexpr auto kTopKeys = std::to_array<std::string_view>(
    {"listen", "web", "control", "data_dir", "log_level", "loadgen_executables", "targets", "runs",
     "matrix_plans", "results"});
constexpr auto kWebKeys = std::to_array<std::string_view>({"basic_auth_users", "insecure"});
constexpr auto kControlKeys =
    std::to_array<std::string_view>({"max_connections", "request_timeout"});
constexpr auto kResultsKeys = std::to_array<std::string_view>({"dsn"});
constexpr auto kTargetKeys = std::to_array<std::string_view>(
    {"name", "dsn", "hz", "source", "pg_wait_sampling_poll_ms", "labels", "local", "cpu_profile",
     "sampler_host", "sampler_program"});
constexpr auto kRunKeys =
    std::to_array<std::string_view>({"target", "workload", "label", "pgbench_args", "interval"});

// Prometheus label names: [a-zA-Z_][a-zA-Z0-9_]*.
bool is_label_name(std::string_view text) {
  if (text.empty() || (text.front() >= '0' && text.front() <= '9')) return false;
  return std::all_of(text.begin(), text.end(), [](char character) {
    return (character >= 'a' && character <= 'z') || (character >= 'A' && character <= 'Z') ||
           (character >= '0' && character <= '9') || character == '_';
  });
}

// A bind address is HOST:PORT with an IPv6 host in brackets, as the exporter's HTTP server
// expects; checked here so a typo fails at start-up rather than when the listener is opened.
std::string read_listen(const Document& doc, const Value& value) {
  std::string text = read_string(doc, value, Empty::kRejected);
  const std::string rule = R"(must be HOST:PORT, such as "127.0.0.1:9816" or "[::1]:9816")";
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) fail_invalid(doc, value, rule);
  const std::string_view host = std::string_view(text).substr(0, colon);
  if (host.front() == '[' ? host.back() != ']' || host.size() < 3
                          : host.find(':') != std::string_view::npos) {
    fail_invalid(doc, value, rule);
  }
  const std::string_view port_text = std::string_view(text).substr(colon + 1);
  const auto port = parse_integer(port_text);
  if (port_text.empty() || port_text.front() == '+' || port_text.front() == '-' || !port) {
    fail_invalid(doc, value, rule);
  }
  if (*port < 1 || *port > 65535) fail_invalid(doc, value, "port must be between 1 and 65535");
  return text;
}

std::map<std::string, std::string> read_labels(const Document& doc, const Value& value) {
  std::map<std::string, std::string> labels;
  for (const Value& entry : read_map(doc, value)) {
    if (!is_label_name(entry.name) || entry.name.starts_with("__")) {
      doc.fail(entry.key_mark,
               fmt::format("invalid label name {} (must match [a-zA-Z_][a-zA-Z0-9_]* and not "
                           "begin with \"__\")",
                           quote(entry.name)));
    }
    if (std::find(kReservedLabels.begin(), kReservedLabels.end(), entry.name) !=
        kReservedLabels.end()) {
      doc.fail(entry.key_mark,
               fmt::format("label name {} is reserved (used by pgwaitprof's own metrics)",
                           quote(entry.name)));
    }
    labels[entry.name] = read_string(doc, entry, Empty::kAllowed);
  }
  return labels;
}

model::SamplerSource read_source(const Document& doc, const Value& value) {
  return *model::parse_sampler_source(read_choice(doc, value, model::sampler_source_names()));
}

// $2a$, $2b$ or $2y$, a two-digit cost, and 53 characters of salt and hash.
bool is_bcrypt_hash(std::string_view hash) {
  if (hash.size() != 60 || !hash.starts_with("$2") || hash[3] != '$' || hash[6] != '$') {
    return false;
  }
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') return false;
  if (!std::isdigit(static_cast<unsigned char>(hash[4])) ||
      !std::isdigit(static_cast<unsigned char>(hash[5]))) {
    return false;
  }
  return std::all_of(hash.begin() + 7, hash.end(), [](char character) {
    return std::isalnum(static_cast<unsigned char>(character)) || character == '.' ||
           character == '/';
  });
}

WebConfig read_web(const Document& doc, const Value& value) {
  if (!value.node.IsMap()) {
    doc.fail(value.node.Mark(),
             fmt::format("{} must be a map, not {}", quote(value.name), kind_name(value.node)));
  }
  const MapReader reader(doc, value.node, kWebKeys);
  WebConfig web;
  if (const Value* users = reader.find("basic_auth_users")) {
    for (const Value& user : read_map(doc, *users)) {
      const std::string hash = read_string(doc, user, Empty::kRejected);
      if (!is_bcrypt_hash(hash)) {
        doc.fail(user.node.Mark(),
                 fmt::format("invalid value for {}: not a bcrypt hash (make one with: htpasswd "
                             "-nBC 10 \"\" | tr -d ':\\n')",
                             quote(user.name)));
      }
      web.basic_auth_users[user.name] = hash;
    }
  }
  if (const Value* insecure = reader.find("insecure")) web.insecure = read_bool(doc, *insecure);
  return web;
}

ResultsConfig read_results(const Document& doc, const Value& value) {
  if (!value.node.IsMap()) {
    doc.fail(value.node.Mark(),
             fmt::format("{} must be a map, not {}", quote(value.name), kind_name(value.node)));
  }
  const MapReader reader(doc, value.node, kResultsKeys);
  ResultsConfig results;
  if (const Value* dsn = reader.find("dsn")) results.dsn = read_string(doc, *dsn, Empty::kRejected);
  return results;
}

ControlConfig read_control(const Document& doc, const Value& value) {
  if (!value.node.IsMap()) {
    doc.fail(value.node.Mark(),
             fmt::format("{} must be a map, not {}", quote(value.name), kind_name(value.node)));
  }
  const MapReader reader(doc, value.node, kControlKeys);
  ControlConfig control;
  if (const Value* max = reader.find("max_connections")) {
    control.max_connections = static_cast<int>(read_integer(doc, *max, 1, 1000));
  }
  if (const Value* timeout = reader.find("request_timeout")) {
    control.request_timeout = read_duration(doc, *timeout, 1, 3600);
  }
  return control;
}

TargetConfig read_target(const Document& doc, const Value& item, std::size_t target_count,
                         std::set<std::string, std::less<>>& names) {
  const MapReader reader(doc, item.node, kTargetKeys);
  // A default constructed TargetConfig holds every default: one place for them.
  TargetConfig target;
  if (const Value* name = reader.find("name")) {
    target.name = read_string(doc, *name, Empty::kRejected);
    if (!is_name(target.name)) {
      fail_invalid(doc, *name, R"(must contain only letters, digits, "_", "." and "-")");
    }
    if (!names.insert(target.name).second) {
      doc.fail(name->node.Mark(), fmt::format("duplicate target name {}", quote(target.name)));
    }
  } else if (target_count > 1) {
    // The name is the "target" label and the key runs refer to; with one target it can default.
    doc.fail(reader.mark(),
             "missing required key \"name\" (required when there is more than one target)");
  } else {
    names.insert(target.name);
  }
  if (const Value* dsn = reader.find("dsn"))
    target.dsn = read_string(doc, *dsn, Empty::kAllowedAsNull);
  const Value* hz = reader.find("hz");
  if (hz) target.hz = read_number(doc, *hz, kMinHz, kMaxHz);
  if (const Value* source = reader.find("source")) target.source = read_source(doc, *source);
  if (hz && target.source == model::SamplerSource::kPgWaitSampling) {
    // A rate the source would silently ignore is refused, never dropped.
    fail_invalid(doc, *hz,
                 "cannot be used with source pg_wait_sampling: the extension samples at its own "
                 "pg_wait_sampling.profile_period");
  }
  if (const Value* poll = reader.find("pg_wait_sampling_poll_ms")) {
    target.pg_wait_sampling_poll = std::chrono::milliseconds(read_integer(doc, *poll, 100, 60000));
  }
  if (const Value* labels = reader.find("labels")) target.labels = read_labels(doc, *labels);
  if (const Value* local = reader.find("local")) {
    const auto text = read_choice(doc, *local, std::vector<std::string>{"auto", "true", "false"});
    target.local = text == "true"    ? LocalMode::kYes
                   : text == "false" ? LocalMode::kNo
                                     : LocalMode::kAuto;
  }
  if (const Value* cpu = reader.find("cpu_profile"))
    target.cpu_profile_hz = read_cpu_profile(doc, *cpu);
  if (const Value* host = reader.find("sampler_host")) {
    // Empty (or null): sampled from here, as without the key.
    const std::string text = read_string(doc, *host, Empty::kAllowedAsNull);
    if (!text.empty()) {
      auto parsed = read_sampler_host(text);
      if (!parsed) fail_invalid(doc, *host, parsed.error().message);
      target.sampler_host = parsed->text();
    }
  }
  if (const Value* program = reader.find("sampler_program")) {
    target.sampler_program = read_string(doc, *program, Empty::kRejected);
  }
  return target;
}

RunConfig read_run(const Document& doc, const Value& item,
                   const std::vector<TargetConfig>& targets) {
  const MapReader reader(doc, item.node, kRunKeys);
  RunConfig run;
  if (const Value* target = reader.find("target")) {
    run.target = read_string(doc, *target, Empty::kRejected);
    const bool known = std::any_of(targets.begin(), targets.end(),
                                   [&](const TargetConfig& t) { return t.name == run.target; });
    if (!known) {
      std::string names;
      for (const TargetConfig& configured : targets) {
        names += (names.empty() ? "" : ", ") + quote(configured.name);
      }
      fail_invalid(doc, *target, fmt::format("must name a configured target: {}", names));
    }
  } else if (targets.size() == 1) {
    run.target = targets.front().name;
  } else {
    doc.fail(reader.mark(),
             "missing required key \"target\" (required when there is more than one target)");
  }
  if (const Value* workload = reader.find("workload")) {
    run.workload = read_choice(doc, *workload, model::workload_names());
  }
  if (const Value* label = reader.find("label"))
    run.label = read_string(doc, *label, Empty::kAllowedAsNull);
  if (const Value* args = reader.find("pgbench_args")) {
    run.pgbench_args = read_pgbench_args(doc, *args);
  }
  // The user's own script options (-S, -f ...) are the workload: a built-in named beside them
  // would run with them, half the transactions each.
  if (const Value* workload = reader.find("workload")) {
    if (auto conflict = model::workload_conflict(run.workload, run.pgbench_args)) {
      doc.fail(workload->node.Mark(), *conflict);
    }
  }
  if (const Value* interval = reader.find("interval")) {
    // pgbench -P takes whole seconds: 0.5 would silently become 0.
    run.interval = base::Seconds(read_integer(doc, *interval, 1, kMaxIntervalS));
  }
  return run;
}

// loadgen_executables: command names or absolute paths (a relative path with a slash would
// depend on the daemon's working directory).
std::vector<std::string> read_loadgen_executables(const Document& doc, const Value& executables) {
  auto names = read_string_list(doc, executables);
  const std::vector<Value> items = read_list(doc, executables);
  for (std::size_t index = 0; index < items.size(); ++index) {
    const std::string& executable = names[index];
    if (executable.find('/') != std::string::npos && !executable.starts_with('/')) {
      fail_invalid(doc, items[index], "must be a command name or an absolute path");
    }
  }
  return names;
}

// targets: at least one, each named once.
std::vector<TargetConfig> read_targets(const Document& doc, const MapReader& reader) {
  const Value* targets = reader.find("targets");
  const std::vector<Value> target_items =
      targets ? read_map_list(doc, *targets) : std::vector<Value>{};
  if (target_items.empty()) {
    doc.fail(targets ? (targets->node.IsNull() ? targets->key_mark : targets->node.Mark())
                     : reader.mark(),
             "at least one target is required");
  }
  std::vector<TargetConfig> targets_read;
  std::set<std::string, std::less<>> target_names;
  for (const Value& item : target_items) {
    targets_read.push_back(read_target(doc, item, target_items.size(), target_names));
  }
  return targets_read;
}

}  // namespace

bool is_loopback_listen(std::string_view listen) {
  const auto colon = listen.rfind(':');
  const std::string_view host = listen.substr(0, colon);
  return host.starts_with("127.") || host == "localhost" || host == "[::1]";
}

void check_listen_protected(std::string_view listen, const WebConfig& web) {
  if (web.insecure || !web.basic_auth_users.empty() || is_loopback_listen(listen)) return;
  throw ConfigError(
      fmt::format("listen address \"{}\" is not loopback: configure web.basic_auth_users, or set "
                  "web.insecure: true to serve /metrics without authentication",
                  listen));
}

std::vector<std::string_view> daemon_config_keys() {
  std::vector<std::string_view> keys;
  const std::span<const std::string_view> maps[] = {kTopKeys,     kWebKeys,    kControlKeys,
                                                    kResultsKeys, kTargetKeys, kRunKeys};
  for (const auto map : maps) {
    keys.insert(keys.end(), map.begin(), map.end());
  }
  return keys;
}

ValidatedConfig parse_config(std::string_view yaml_text, std::string_view file_name) {
  const Document doc(file_name, "configuration");
  const MapReader reader(doc, doc.load(yaml_text), kTopKeys);
  ValidatedConfig config;
  const Value* listen = reader.find("listen");
  if (listen) config.listen = read_listen(doc, *listen);
  if (const Value* web = reader.find("web")) config.web = read_web(doc, *web);
  if (listen && !config.web.insecure && config.web.basic_auth_users.empty() &&
      !is_loopback_listen(config.listen)) {
    fail_invalid(doc, *listen,
                 "a non-loopback address needs web.basic_auth_users, or web.insecure: true to "
                 "serve /metrics to anyone who can reach it");
  }
  if (const Value* control = reader.find("control")) config.control = read_control(doc, *control);
  if (const Value* results = reader.find("results")) config.results = read_results(doc, *results);
  if (const Value* data_dir = reader.find("data_dir")) {
    config.data_dir = read_string(doc, *data_dir, Empty::kRejected);
  }
  if (const Value* log_level = reader.find("log_level")) {
    config.log_level = read_choice(doc, *log_level, base::log_level_names());
  }
  if (const Value* executables = reader.find("loadgen_executables")) {
    config.loadgen_executables = read_loadgen_executables(doc, *executables);
  }
  config.targets = read_targets(doc, reader);

  if (const Value* runs = reader.find("runs")) {
    for (const Value& item : read_map_list(doc, *runs)) {
      config.runs.push_back(read_run(doc, item, config.targets));
    }
  }
  if (const Value* plans = reader.find("matrix_plans")) {
    // Relative to the configuration file, so a config and its plans can move together.
    const std::filesystem::path base = std::filesystem::path(file_name).parent_path();
    for (const std::string& plan : read_string_list(doc, *plans)) {
      const std::filesystem::path plan_path(plan);
      config.matrix_plans.push_back(plan_path.is_absolute() ? plan_path : base / plan_path);
    }
  }
  return config;
}

ValidatedConfig load_config(const std::filesystem::path& path) {
  return parse_config(read_file(path, "configuration file"), path.string());
}

}  // namespace pgwaitprof::config
