// The built-in workloads (`--workload NAME`): what pgbench runs for each and the set-up it
// needs in the target, installed on demand. Scripts live in deploy/workloads/.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace pgwaitprof::daemon {

struct Workload {
  std::string name;
  std::string description;
  std::vector<std::string> builtin_args;  // pgbench's own builtin script, e.g. {"-S"}
  std::string setup_file;                 // deploy/workloads file run once before the run
  std::string script_file;                // deploy/workloads pgbench script, passed with -f
};

const std::vector<Workload>& workloads();
// Throws std::runtime_error "unknown workload "NAME"" with the valid names as a hint.
const Workload& find_workload(const std::string& name);
// Contents of deploy/workloads files by file name (generated at build time).
const std::map<std::string, std::string>& embedded_workload_files();
const std::string& workload_file(const std::string& file_name);

}  // namespace pgwaitprof::daemon
