// The scripts a user's pgbench options choose (-S, -N, -b NAME[@W], -f FILE[@W] and their long
// forms), and the workload name a run of them gets. When the user gives one, their scripts are
// the workload: no built-in is added (pgbench would run both, half each) and the report names
// theirs. Pure functions on argument vectors, read the way pgbench's getopt_long reads them
// (clustered short options, option values, unique prefixes of long names, "--").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::model {

struct PgbenchScript {
  enum class Kind { kBuiltin, kFile };
  Kind kind = Kind::kBuiltin;
  // A builtin's full name ("select-only" for -S and for "-b sel"; as given when pgbench knows
  // no such builtin), or the file as given.
  std::string name;
  std::string weight;  // after "@", as given; "" = pgbench's default of 1
  std::string option;  // the option as the user wrote it ("-S", "--file=a.sql"), for messages
};

// The script options in `args`, in their order.
std::vector<PgbenchScript> pgbench_scripts(const std::vector<std::string>& args);

// The workload name of a run of these scripts: each script's name joined with "+", with its
// "@weight" when one was given. A builtin is named as pgwaitprof's workload that runs the same
// builtin (tpcb-like: "tpcb", select-only: "select-only"), otherwise by pgbench's name
// ("simple-update"); a file is "file:" and its file name ("file:bench.sql"). So `-- -S` and
// `--workload select-only` run the same pgbench command and have the same name.
// nullopt when there are no scripts.
std::optional<std::string> scripts_workload_name(const std::vector<PgbenchScript>& scripts);

// The refusal of a built-in workload named beside the user's own script option, one line in
// PostgreSQL style naming both (`workload "tpcb" and pgbench's script option "-S" cannot be used
// together`); nullopt when `args` has no script option.
std::optional<std::string> workload_conflict(std::string_view workload,
                                             const std::vector<std::string>& args);

}  // namespace pgwaitprof::model
