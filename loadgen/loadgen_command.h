// The load generator's command line, built from a run's request: the workload's own arguments
// and script unless the user gave script options of their own (-S, -N, -b, -f: theirs are the
// workload, model/pgbench_scripts.h), -P when the user gave none, the user's arguments unchanged,
// and the target. The target's password never goes into the argv (every local user can read
// /proc/PID/cmdline): it is passed in the child's environment. Pure functions, tested on vectors.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/time.h"
#include "loadgen/pgbench_log.h"
#include "model/workloads.h"

namespace pgwaitprof::loadgen {

// The value of a pgbench option in `args` ("-c 8", "-c8", "--client=8", "--client 8"), if given.
std::optional<std::string> pgbench_option(const std::vector<std::string>& args, char short_name,
                                          std::string_view long_name);
// Its integer value, or `fallback` when absent or not a number.
int pgbench_int_option(const std::vector<std::string>& args, char short_name,
                       std::string_view long_name, int fallback);

struct LoadgenInputs {
  std::string executable;  // the load generator's path
  const model::Workload* workload = nullptr;
  std::string script_path;             // the workload's script written for this run, if any
  std::string scale;                   // the target's pgbench scale, for custom scripts
  std::vector<std::string> user_args;  // as the user gave them
  base::Seconds interval{1};           // -P when the user gave none (whole seconds)
  std::string conninfo;                // "" = PG* environment variables
  std::string display_target;          // the target as reports show it (password masked)
  // Where pgbench writes its per-transaction log when the user did not ask for one (-l): the
  // run directory, so percentiles can be computed; "" for none.
  std::string transaction_log_prefix;
};

struct LoadgenCommand {
  std::vector<std::string> argv;          // no password in it
  std::vector<std::string> environment;   // "PGPASSWORD=..." when the target had a password
  std::vector<std::string> display_argv;  // as recorded in the report
  base::Seconds interval{1};              // the progress interval pgbench will use
  int clients = 1;
  int threads = 1;
  // The per-transaction log to read latency percentiles from: its prefix, its columns and
  // pgbench's --sampling-rate; empty when there is none (--aggregate-interval, or not asked).
  std::string transaction_log_prefix;
  bool transaction_log_added = false;  // pgwaitprof asked for it: its files are ours to remove
  loadgen::LogColumns transaction_log_columns;
  double transaction_log_sampling_rate = 1;
};

LoadgenCommand build_loadgen_command(const LoadgenInputs& inputs);

// One line saying why the load generator (`name`: "pgbench", "sysbench", a command's name)
// failed: the signal that killed it, the option it rejected, or its first error, never a hint
// such as `Try "pgbench --help"`.
std::string describe_loadgen_failure(int exit_code, std::string_view stderr_text,
                                     std::string_view name = "pgbench");

// Which load generator a run starts: pgbench (the default), sysbench, any command, or none (a
// recording window of load that runs elsewhere).
enum class LoadgenKind { kPgbench, kSysbench, kCommand, kNone };
std::string_view to_string(LoadgenKind kind);
// "pgbench", "sysbench", "command"; nullopt for any other name ("none" is `record`'s, not a name
// a user gives).
std::optional<LoadgenKind> parse_loadgen_kind(std::string_view name);

// Where a child reaches the target, as libpq resolved it for the run's own connection.
struct TargetAddress {
  std::string host;
  std::string port;
  std::string user;
  std::string dbname;
  std::string password;  // "" when the target has none; for PGPASSWORD only
};

// Any command: its argv as given (the executable resolved to `executable`), the target in the
// child's PG* variables (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD), so that psql and
// libpq programs reach it with no argument.
LoadgenCommand build_any_command(const std::string& executable,
                                 const std::vector<std::string>& args, const TargetAddress& target);

// sysbench: the user's arguments, and what they leave out added: --db-driver=pgsql, the
// target's --pgsql-host/-port/-user/-db (the password in PGPASSWORD: sysbench's pgsql driver
// leaves an empty --pgsql-password to libpq), --report-interval (whole seconds, as pgbench's
// -P), and the command `run` when no command (prepare, run, cleanup, prewarm) is given.
// `step` replaces the command given (a plan's set-up "prepare" and tear-down "cleanup").
LoadgenCommand build_sysbench_command(const std::string& executable,
                                      const std::vector<std::string>& args,
                                      const TargetAddress& target, base::Seconds interval,
                                      std::string_view step = "");
// The sysbench command word among `args` (prepare, run, cleanup, prewarm), if any.
std::optional<std::string> sysbench_step(const std::vector<std::string>& args);

}  // namespace pgwaitprof::loadgen
