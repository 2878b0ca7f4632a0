// The copy workload's load: real COPY of pgbench_accounts' rows into the unindexed
// model::kCopyTargetTable, once per client. On the server's host pgbench runs
// `COPY ... FROM 'file'` with a data file the server wrote once per cluster and scale (as in the
// parallel COPY thread); elsewhere pgwaitprof itself runs `COPY ... FROM STDIN` over N libpq
// connections on its io_context, with the same rows.
#pragma once

#include <asio/awaitable.hpp>
#include <cstdint>
#include <string>

#include "base/expected.h"
#include "base/run_control.h"
#include "collectors/pg_session.h"

namespace pgwaitprof::loadgen {

// Rows first_aid .. first_aid + count - 1 of pgbench_accounts as COPY text writes them: aid,
// bid ((aid - 1) / 100000 + 1), abalance 0 and the blank-padded filler.
std::string account_rows(long long first_aid, long long count);

// The data file of a scale, in the server's data directory.
std::string copy_file_name(long long scale);
// The pgbench script of the local mode: one COPY FROM that file (its absolute path).
std::string copy_script(const std::string& path);

struct CopyFile {
  std::string path;  // absolute, on the server's host
  uint64_t bytes = 0;
};
// The scale's data file, written by the server (COPY pgbench_accounts TO) when it has none.
asio::awaitable<base::Expected<CopyFile>> ensure_copy_file(collectors::PgSession& session,
                                                           long long scale);

struct CopyLoadResult {
  uint64_t rows = 0;   // loaded by the COPYs that succeeded
  uint64_t bytes = 0;  // COPY data sent
  std::string error;   // the first failure, "" when every COPY succeeded
};
// `clients` connections, each COPY FROM STDIN of the scale's rows, all at once; stops sending
// when `control` is interrupted.
asio::awaitable<CopyLoadResult> copy_from_stdin(const std::string& conninfo, int clients,
                                                long long scale, base::RunControl& control);

}  // namespace pgwaitprof::loadgen
