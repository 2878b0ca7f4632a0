// Matrix plans (`pgwaitprof matrix PLAN.yaml`): variants x clients x repeats of one workload,
// validated once into MatrixPlan. Unknown keys, wrong types and out-of-range values are
// ConfigErrors that name FILE:LINE:COLUMN.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/daemon_config.h"
#include "model/run.h"

namespace pgwaitprof::config {

struct Variant {
  std::string name;
  // Applied with ALTER SYSTEM before the variant's runs; the server's own values are restored
  // afterwards.
  std::map<std::string, std::string> settings;
  // The variant's own built-in workload ("" = the plan's): tpcb against tpcb-func in one table.
  std::string workload;
  // sysbench or a command: arguments after the plan's "args" (oltp_read_only against
  // oltp_read_write in one table).
  std::vector<std::string> args;
  // The build the variant runs on (a directory with initdb, pg_ctl and postgres; absolute): a
  // scratch cluster of its own per distinct build, so master and patched are one plan. Either
  // every variant of a plan names one or none does, and a plan of builds has no target.
  std::filesystem::path server_bin;
};

struct MatrixPlan {
  std::string name;
  std::string target;  // connection string; "" = a scratch cluster
  int scale = 10;      // pgbench -i scale
  std::string workload = "tpcb";
  std::vector<int> clients = {1};
  // `clients: auto`: the counts are found by the sweep (model/adaptive_sweep.h), doubling up to
  // max_clients and adding counts around where throughput stops rising; `clients` is empty in
  // the plan and filled by the matrix engine as it decides.
  bool clients_auto = false;
  int max_clients = 0;
  // Threads per run: an integer, or "min(clients, cores)" / "clients" / "cores".
  std::string jobs = "min(clients, cores)";
  std::chrono::seconds duration{10};
  int repeats = 1;
  std::vector<Variant> variants;   // at least one; a plan without variants gets "default"
  bool checkpoint = false;         // CHECKPOINT before each run
  std::chrono::seconds warmup{0};  // unmeasured pgbench run before each measured run
  double hz = kDefaultHz;
  // Where every run's samples come from (model/sampler_source.h): auto unless the plan says.
  model::SamplerSource source = model::SamplerSource::kAuto;
  std::vector<std::string> pgbench_args;  // extra arguments for every run
  // The figure of the table: tps, or the elapsed time of fixed-work runs ("duration", the
  // default of a fixed-work workload such as copy, or with transactions).
  model::Metric metric = model::Metric::kTps;
  // pgbench -t N per client instead of -T duration: a fixed-work run; 0 = by duration.
  int transactions = 0;
  bool checkpoint_after = false;  // CHECKPOINT after each run's load, timed and sampled
  int cpu_profile_hz = 0;         // cpu_profile: every run's CPU profile at this rate; 0: none
  // An environment attribute recorded with each run that splits the table (kernel, cpu_model,
  // server_version, label): runs of two hosts or boots side by side. "" = none.
  std::string split_by;
  // The load generator: pgbench (the workload's), sysbench, or command. sysbench and a command
  // take "args", where {clients} and {duration} become each cell's figures; sysbench gets
  // --threads={clients} and --time={duration} when its args set neither, and its steps
  // "setup" (prepare) and "teardown" (cleanup) around every run.
  std::string loadgen = "pgbench";
  std::vector<std::string> args;
  std::string setup;
  std::string teardown;
};

// A cell's arguments for sysbench or a command: the plan's args then the variant's, {clients}
// and {duration} replaced; sysbench's --threads and --time added when absent.
std::vector<std::string> cell_loadgen_args(const MatrixPlan& plan, const Variant& variant,
                                           int clients);

// Whether the plan's runs end when their work is done (no -T).
bool fixed_work(const MatrixPlan& plan);

// Whether the plan's variants are builds (server_bin), each run in a scratch cluster of its own.
bool has_builds(const MatrixPlan& plan);

// A shorter version of a plan: each override given replaces the plan's value; `quick` makes
// 5 s runs, one repeat, the first and last client counts and a scale of at most 2.
struct PlanOverrides {
  std::optional<int> duration_s;
  std::optional<int> repeats;
  std::optional<int> scale;
  bool quick = false;
};
void apply_overrides(MatrixPlan& plan, const PlanOverrides& overrides);

MatrixPlan parse_matrix_plan(std::string_view yaml_text, std::string_view file_name);
MatrixPlan load_matrix_plan(const std::filesystem::path& path);

// The thread count the plan's jobs rule gives for a run of `clients` clients on `cores` cores.
int jobs_for(const MatrixPlan& plan, int clients, int cores);

}  // namespace pgwaitprof::config
