// The workload table.
#include "daemon/workloads.h"

#include <stdexcept>

namespace pgwaitprof::daemon {

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> table = {
      {"tpcb", "pgbench's default TPC-B-like transaction (5 statements, 7 round trips)",
       {"-b", "tpcb-like"}, "", ""},
      {"tpcb-func", "the five TPC-B statements in one server-side function: one round trip",
       {}, "tpcb_func.setup.sql", "tpcb_func.pgbench"},
      {"select-only", "pgbench's select-only transaction (one primary-key SELECT)", {"-S"}, "", ""},
      {"update-5rows", "one UPDATE of five nearby accounts by aid with a random delta", {},
       "update_5rows.setup.sql",
       "update_5rows.pgbench"},
      {"bulk-copy", "parallel bulk load into a table without indexes, like a data-load test", {},
       "bulk_copy.setup.sql", "bulk_copy.pgbench"},
  };
  return table;
}

const Workload& find_workload(const std::string& name) {
  std::string names;
  for (const auto& workload : workloads()) {
    if (workload.name == name) return workload;
    names += (names.empty() ? "" : ", ") + workload.name;
  }
  throw std::runtime_error("unknown workload \"" + name + "\" (valid workloads: " + names + ")");
}

const std::string& workload_file(const std::string& file_name) {
  const auto& files = embedded_workload_files();
  const auto found = files.find(file_name);
  if (found == files.end()) {
    throw std::runtime_error("built-in workload file \"" + file_name + "\" is missing from this build");
  }
  return found->second;
}

}  // namespace pgwaitprof::daemon
