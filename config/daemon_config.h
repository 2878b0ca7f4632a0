// The daemon's YAML configuration, validated once into ValidatedConfig, the type the rest of the
// program requires. Unknown keys, wrong types and out-of-range values are ConfigErrors that name
// FILE:LINE:COLUMN.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "config/config_error.h"
#include "model/sampler_source.h"

namespace pgwaitprof::config {

inline constexpr double kMinHz = 1;
inline constexpr double kMaxHz = 10000;
inline constexpr double kDefaultHz = 100;
// The traced source's on-CPU samples per second and CPU, taken in the kernel (no wake-up here).
inline constexpr double kDefaultTraceHz = 1000;

// Whether a target's server runs on this host, so that /proc can tell running from waiting for
// a core: `auto` detects it, `true`/`false` say so.
enum class LocalMode { kAuto, kYes, kNo };

struct TargetConfig {
  std::string name = "default";  // label value "target"
  std::string dsn;               // libpq connection string or URI; "" means PG* variables
  double hz = kDefaultHz;
  // The traced source's in-kernel on-CPU samples per second where auto chooses it (a named
  // traced source's rate is hz).
  double trace_hz = kDefaultTraceHz;
  // Whether auto may choose the traced source: on for the foreground run and matrix (their one
  // server, traced for the run's length), off for a daemon's targets, which sample their servers
  // continuously and many at once (their auto is memory; `source: trace` names the traced one).
  bool auto_traces = false;
  model::SamplerSource source = model::SamplerSource::kAuto;
  // How often pg_wait_sampling's profile is read when it is the source.
  std::chrono::milliseconds pg_wait_sampling_poll{1000};
  std::map<std::string, std::string> labels;  // extra constant labels on every series
  LocalMode local = LocalMode::kAuto;
  // cpu_profile: HZ or true: every run on this target has a CPU profile; 0: none.
  int cpu_profile_hz = 0;
  // sampler_host: ssh://[user@]host[:port] (config/sampler_host.h, checked): the server is
  // sampled by the pgwaitprof on its own host over SSH; "" samples it from here.
  std::string sampler_host;
  // sampler_program: the pgwaitprof on the sampler host, run by the remote login shell.
  std::string sampler_program = "pgwaitprof";
};

// A benchmark run the daemon executes at start-up ("runs:" in the config).
struct RunConfig {
  std::string target;  // a TargetConfig name
  std::string workload = "tpcb";
  std::string label;
  std::vector<std::string> pgbench_args;
  base::Seconds interval{1};
};

// Who may scrape /metrics. Off loopback, either basic auth or an explicit `insecure: true`.
struct WebConfig {
  // User name -> bcrypt hash ($2a$, $2b$ or $2y$), as Prometheus' exporter-toolkit takes them.
  std::map<std::string, std::string> basic_auth_users;
  bool insecure = false;
};

// Limits of the control socket.
struct ControlConfig {
  int max_connections = 16;
  // A connection that has not sent a whole request in this long is closed.
  std::chrono::seconds request_timeout{10};
};

// The shared results database every run is uploaded to (store/results_db.h); "" for
// none. The connection string may hold a password: it is never logged (mask_password).
struct ResultsConfig {
  std::string dsn;
};

struct ValidatedConfig {
  std::vector<TargetConfig> targets;
  std::string listen = "127.0.0.1:9816";
  WebConfig web;
  ControlConfig control;
  std::filesystem::path data_dir = "/var/lib/pgwaitprof";
  std::string log_level = "info";
  // Executables the daemon may start as load generators, by name or absolute path.
  std::vector<std::string> loadgen_executables = {"pgbench"};
  std::vector<RunConfig> runs;
  std::vector<std::filesystem::path> matrix_plans;  // run at start-up, after `runs`
  ResultsConfig results;
};

ValidatedConfig parse_config(std::string_view yaml_text, std::string_view file_name);
ValidatedConfig load_config(const std::filesystem::path& path);  // ConfigError if unreadable

// Whether HOST:PORT binds only the loopback interface.
bool is_loopback_listen(std::string_view listen);
// ConfigError unless `web` protects a non-loopback `listen` (or says insecure).
void check_listen_protected(std::string_view listen, const WebConfig& web);

}  // namespace pgwaitprof::config
