// Real COPY for the copy workload.
#include "loadgen/copy_load.h"

#include <fmt/format.h>

#include <asio/this_coro.hpp>
#include <chrono>
#include <memory>
#include <vector>

#include "base/task_group.h"
#include "model/workloads.h"

namespace pgwaitprof::loadgen {
namespace {

using namespace std::chrono_literals;
constexpr long long kRowsPerChunk = 10000;  // about 1 MB of COPY data per PQputCopyData
constexpr auto kConnectTimeout = 10s;

// One client's COPY FROM STDIN; its rows and bytes added to `result` when it succeeds.
asio::awaitable<void> copy_one(const std::string& conninfo, long long scale,
                               base::RunControl& control, CopyLoadResult& result) {
  collectors::PgSession session(co_await asio::this_coro::executor);
  if (auto error = co_await session.connect(conninfo, kConnectTimeout)) {
    if (result.error.empty()) result.error = "could not connect: " + error->message;
    co_return;
  }
  const long long total = scale * model::kAccountsPerScale;
  long long next_aid = 1;
  uint64_t bytes = 0;
  auto next = [&](std::string& chunk) {
    if (next_aid > total || control.interrupted()) return false;
    const long long count = std::min(kRowsPerChunk, total - next_aid + 1);
    chunk = account_rows(next_aid, count);
    next_aid += count;
    bytes += chunk.size();
    return true;
  };
  const std::string sql = fmt::format("COPY {} FROM STDIN", model::kCopyTargetTable);
  auto copied = co_await session.copy_from(sql, next);
  if (!copied.ok()) {
    if (result.error.empty()) result.error = "COPY failed: " + copied.error->message;
    co_return;
  }
  result.rows += static_cast<uint64_t>(next_aid - 1);
  result.bytes += bytes;
}

}  // namespace

std::string account_rows(long long first_aid, long long count) {
  static const std::string filler(84, ' ');
  std::string text;
  text.reserve(static_cast<size_t>(count) * 104);
  for (long long aid = first_aid; aid < first_aid + count; ++aid) {
    fmt::format_to(std::back_inserter(text), "{}\t{}\t0\t{}\n", aid,
                   (aid - 1) / model::kAccountsPerScale + 1, filler);
  }
  return text;
}

std::string copy_file_name(long long scale) {
  return fmt::format("pgwaitprof_accounts_s{}.copy", scale);
}

std::string copy_script(const std::string& path) {
  return fmt::format(
      "-- copy: one COPY of pgbench_accounts' rows per client into the unindexed {}\n"
      "COPY {} FROM {};\n",
      model::kCopyTargetTable, model::kCopyTargetTable, collectors::quote_literal(path));
}

asio::awaitable<base::Expected<CopyFile>> ensure_copy_file(collectors::PgSession& session,
                                                           long long scale) {
  // COPY TO a file takes an absolute path: the data directory's.
  const std::string size_sql =
      "SELECT current_setting('data_directory') || '/' || $1, "
      "(pg_stat_file(current_setting('data_directory') || '/' || $1, true)).size";
  const std::vector<std::string> params{copy_file_name(scale)};
  auto size = co_await session.execute(size_sql, params);
  if (!size.ok())
    co_return base::Error{"could not look for the COPY data file: " + size.error->message};
  CopyFile file{collectors::cell(size.result.get(), 0, 0), 0};
  std::string bytes = collectors::cell(size.result.get(), 0, 1);
  if (bytes.empty()) {
    // Written by the server itself, so it can read it back (COPY FROM a server file).
    const auto copy_to =
        fmt::format("COPY pgbench_accounts TO {}", collectors::quote_literal(file.path));
    auto written = co_await session.execute(copy_to);
    if (!written.ok()) {
      co_return base::Error{fmt::format("could not write the COPY data file \"{}\": {}", file.path,
                                        written.error->message)};
    }
    size = co_await session.execute(size_sql, params);
    if (!size.ok()) co_return base::Error{size.error->message};
    bytes = collectors::cell(size.result.get(), 0, 1);
  }
  file.bytes = bytes.empty() ? 0 : std::stoull(bytes);
  co_return file;
}

asio::awaitable<CopyLoadResult> copy_from_stdin(const std::string& conninfo, int clients,
                                                long long scale, base::RunControl& control) {
  auto executor = co_await asio::this_coro::executor;
  CopyLoadResult result;
  base::TaskGroup group(executor);
  for (int client = 0; client < clients; ++client) {
    group.spawn(copy_one(conninfo, scale, control, result), "copy client");
  }
  (void)co_await group.wait_idle(std::chrono::hours(24 * 365));
  co_return result;
}

}  // namespace pgwaitprof::loadgen
