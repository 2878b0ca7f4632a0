// The built-in workloads (`--workload NAME`): what pgbench runs for each and the set-up it needs
// in the target. The one registry of workload names that config validation and the CLI read; the
// scripts themselves live in loadgen/workloads/ and are compiled into the run engine.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::model {

struct Workload {
  std::string name;
  std::string description;
  std::vector<std::string> builtin_args;  // pgbench's own builtin script, e.g. {"-S"}
  std::string setup_file;                 // loadgen/workloads file run once before the run
  std::string script_file;                // loadgen/workloads pgbench script, passed with -f
  // Ends when its work is done (pgbench -t), not after a duration: the matrix passes no -T and
  // the report's headline is the elapsed time.
  bool fixed_work = false;
  // Real COPY of pgbench_accounts' rows into an unindexed table, one COPY per client: through
  // pgbench (COPY FROM a file the server reads) on the server's host, driven by pgwaitprof
  // itself (COPY FROM STDIN) elsewhere.
  bool copy = false;
};

// The table the copy workload loads, and its rows per client: pgbench_accounts' (naccounts
// rows per scale unit).
inline constexpr const char* kCopyTargetTable = "pgwaitprof_copy_accounts";
inline constexpr long long kAccountsPerScale = 100000;

const std::vector<Workload>& workloads();
const std::vector<std::string>& workload_names();
// nullptr when there is no workload of that name.
const Workload* find_workload(std::string_view name);

}  // namespace pgwaitprof::model
