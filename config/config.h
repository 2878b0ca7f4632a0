// The YAML configuration of the daemon and of matrix plans, validated once into types that
// the rest of the program requires. Unknown keys, wrong types and out-of-range values are
// errors that name file:line:column.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::config {

// Thrown for every configuration error; what() is one line: "FILE:LINE:COLUMN: message".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Source { kAuto, kActivity, kPgWaitSampling };
std::string_view to_string(Source source);

inline constexpr double kMinHz = 1;
inline constexpr double kMaxHz = 10000;

struct TargetConfig {
  std::string name;  // label value "target"; defaults to "default" for a single target
  std::string dsn;   // libpq connection string or URI; "" means PG* environment variables
  double hz = 100;
  Source source = Source::kAuto;
  // How often pg_wait_sampling's profile is read when it is the source.
  std::chrono::milliseconds pg_wait_sampling_poll{1000};
  std::map<std::string, std::string> labels;  // extra constant labels, documented only
};

// A benchmark run the daemon executes at start-up ("runs:" in the config).
struct RunConfig {
  std::string target;  // a TargetConfig name
  std::string workload = "tpcb";
  std::string label;
  std::vector<std::string> pgbench_args;
  std::chrono::duration<double> interval{1.0};
};

struct ValidatedConfig {
  std::vector<TargetConfig> targets;
  std::string listen = "127.0.0.1:9816";
  std::filesystem::path data_dir = "/var/lib/pgwaitprof";
  std::string log_level = "info";  // trace, debug, info, warn, error, off
  // Executables the daemon may start as load generators, by name or absolute path.
  std::vector<std::string> loadgen_executables = {"pgbench"};
  std::vector<RunConfig> runs;
  std::vector<std::filesystem::path> matrix_plans;  // run at start-up, after `runs`
};

ValidatedConfig parse_config(std::string_view yaml_text, std::string_view file_name);
ValidatedConfig load_config(const std::filesystem::path& path);  // ConfigError if unreadable

struct Variant {
  std::string name;
  std::map<std::string, std::string> settings;  // applied with ALTER SYSTEM, reset afterwards
};

struct MatrixPlan {
  std::string name;
  std::string target;  // connection string; "" = a scratch cluster
  int scale = 10;      // pgbench -i scale
  std::string workload = "tpcb";
  std::vector<int> clients = {1};
  // Threads per run: an integer, or "min(clients, cores)" / "clients" / "cores".
  std::string jobs = "min(clients, cores)";
  std::chrono::seconds duration{10};
  int repeats = 1;
  std::vector<Variant> variants;  // at least one; a plan without variants gets "default"
  bool checkpoint = false;        // CHECKPOINT before each run
  std::chrono::seconds warmup{0};  // unmeasured pgbench run before each measured run
  double hz = 100;
  std::vector<std::string> pgbench_args;  // extra arguments for every run
};

MatrixPlan parse_matrix_plan(std::string_view yaml_text, std::string_view file_name);
MatrixPlan load_matrix_plan(const std::filesystem::path& path);

// The thread count the plan's jobs rule gives for a run of `clients` clients on `cores` cores.
int jobs_for(const MatrixPlan& plan, int clients, int cores);

}  // namespace pgwaitprof::config
