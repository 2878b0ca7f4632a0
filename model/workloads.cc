// The workload table.
#include "model/workloads.h"

namespace pgwaitprof::model {

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> table = {
      {"tpcb",
       "pgbench's default TPC-B-like transaction (5 statements, 7 round trips)",
       {"-b", "tpcb-like"},
       "",
       "",
       false,
       false},
      {"tpcb-func",
       "the five TPC-B statements in one server-side function: one round trip",
       {},
       "tpcb_func.setup.sql",
       "tpcb_func.pgbench",
       false,
       false},
      {"select-only",
       "pgbench's select-only transaction (one primary-key SELECT)",
       {"-S"},
       "",
       "",
       false,
       false},
      {"update-5rows",
       "one UPDATE of five nearby accounts by aid with a random delta",
       {},
       "update_5rows.setup.sql",
       "update_5rows.pgbench",
       false,
       false},
      {"tpcb-fewer-accounts",
       "TPC-B-like over ten times the branches and tellers of the scale: a tenth of the accounts "
       "per branch (less branch contention, same data size)",
       {},
       "tpcb_fewer_accounts.setup.sql",
       "tpcb_fewer_accounts.pgbench",
       false,
       false},
      {"bulk-copy",
       "parallel bulk load into a table without indexes, like a data-load test",
       {},
       "bulk_copy.setup.sql",
       "bulk_copy.pgbench",
       false,
       false},
      {"copy",
       "real COPY of pgbench_accounts' rows into an unindexed table, once per client (-t 1): "
       "COPY FROM a file on the server's host, COPY FROM STDIN from pgwaitprof elsewhere",
       {"-n", "-t", "1"},
       "copy.setup.sql",
       "",
       true,
       true},
  };
  return table;
}

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& workload : workloads()) list.push_back(workload.name);
    return list;
  }();
  return names;
}

const Workload* find_workload(std::string_view name) {
  for (const auto& workload : workloads()) {
    if (workload.name == name) return &workload;
  }
  return nullptr;
}

}  // namespace pgwaitprof::model
