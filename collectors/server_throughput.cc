// pg_stat_database's transactions (and pg_stat_statements' calls) per reading.
#include "collectors/server_throughput.h"

#include <fmt/format.h>

#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <charconv>
#include <string>

#include "base/logging.h"

namespace pgwaitprof::collectors {
namespace {

auto server_throughput_log() {
  static auto logger = base::component_logger("throughput");
  return logger;
}

constexpr const char* kTransactionsStatement = "pgwaitprof_transactions";
constexpr const char* kWithCallsStatement = "pgwaitprof_transactions_calls";
constexpr const char* kTransactionsQuery =
    "SELECT sum(xact_commit + xact_rollback)::int8 FROM pg_stat_database";
constexpr const char* kWithCallsQuery =
    "SELECT (SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database)::int8, "
    "(SELECT sum(calls) FROM pg_stat_statements)::int8";
// The client backends that started since $1 (Unix time), this session's left out.
constexpr const char* kLoadBackendsQuery =
    "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
    "AND pid <> pg_backend_pid() AND backend_start >= to_timestamp($1::float8)";

std::optional<uint64_t> counter(const PGresult* result, int column) {
  if (PQntuples(result) < 1 || PQnfields(result) <= column) return std::nullopt;
  const auto text = cell(result, 0, column);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::chrono::steady_clock::duration as_duration(base::Seconds seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(seconds);
}

}  // namespace

std::optional<model::ServerThroughput> throughput_between(const ServerCounters& before,
                                                          const ServerCounters& after) {
  if (after.at <= before.at || after.transactions < before.transactions) return std::nullopt;
  const auto own = static_cast<double>(after.own_statements - before.own_statements);
  model::ServerThroughput reading;
  reading.from = before.at;
  reading.to = after.at;
  reading.transactions = static_cast<double>(after.transactions - before.transactions) - own;
  if (before.calls && after.calls && *after.calls >= *before.calls) {
    reading.calls = static_cast<double>(*after.calls - *before.calls) - own;
  }
  return reading;
}

asio::awaitable<CollectResult> ServerThroughputCollector::prepare(PgSession& session) {
  (void)session;
  previous_.reset();
  co_return std::nullopt;
}

asio::awaitable<void> ServerThroughputCollector::wait_for_load_backends(PgSession& session) {
  const auto since = std::chrono::duration<double>(run_start_->time_since_epoch()).count();
  const std::vector<std::string> params{fmt::format("{:.6f}", since)};
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto deadline = model::SteadyClock::now() + as_duration(kLastReadingWait);
  for (bool gone = false; !gone;) {
    auto left = co_await session.execute(kLoadBackendsQuery, params);
    gone = !left.ok() || counter(left.result.get(), 0).value_or(0) == 0 ||
           model::SteadyClock::now() >= deadline;
    if (!gone) server_throughput_log()->debug("waiting for the load's backends to exit");
    timer.expires_after(as_duration(kPollEvery));
    co_await timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
}

asio::awaitable<CollectResult> ServerThroughputCollector::collect(CollectContext& context) {
  auto& session = *context.session;
  // The first collection is due at the run's start (context.now), before the load generator
  // was started: its backends are those that started since.
  if (!run_start_) {
    run_start_ =
        model::SystemClock::now() - std::chrono::duration_cast<model::SystemClock::duration>(
                                        model::SteadyClock::now() - context.now);
  }
  if (context.last && session.connected()) co_await wait_for_load_backends(session);
  // pgwaitprof's own queries on this session are taken out as they are sent, but the server
  // shows them when the backend hands them over: at the first and the last reading they are
  // handed over first (PostgreSQL 15 and later), so that none straddles the run's ends (this
  // session sends a dozen a second).
  if ((!previous_ || context.last) && session.connected() && session.server_version() >= 150000) {
    (void)co_await session.execute("SELECT pg_stat_force_next_flush()");
  }
  // Chosen before co_await: GCC 12 miscompiles ?: in a co_await's arguments.
  const std::string statement = with_calls_ ? kWithCallsStatement : kTransactionsStatement;
  const std::string query = with_calls_ ? kWithCallsQuery : kTransactionsQuery;
  // Planned once a session, not at each of the dozen readings a second (0.10 ms a reading
  // against 0.27 ms, pgbench -M prepared against -M extended, PostgreSQL 15, 2026-12-06).
  auto prepared = co_await session.ensure_prepared(statement, query);
  // When the counters were read, not when the reading was due: the middle of the round trip
  // (on a busy host the query may wait for a CPU on either side).
  const auto sent = model::SteadyClock::now();
  // (No co_await inside ?:, which GCC 12 miscompiles: the result was destroyed twice.)
  PgOutcome read{nullptr, prepared};
  if (!prepared) read = co_await session.execute_prepared(statement);
  if (!read.ok()) {
    // pg_stat_statements dropped during the run: transactions only from now on.
    if (session.connected()) with_calls_ = false;
    co_return collector_error(*read.error, session);
  }
  ServerCounters now;
  now.at = sent + (model::SteadyClock::now() - sent) / 2;
  const auto transactions = counter(read.result.get(), 0);
  if (!transactions) {
    CollectorError error;
    error.message = "pg_stat_database gave no transaction count";
    co_return error;
  }
  now.transactions = *transactions;
  if (with_calls_) now.calls = counter(read.result.get(), 1);
  // Read after the query, so that it counts itself (the server counted it too).
  now.own_statements = own_statements_();
  server_throughput_log()->debug(
      "server counters transactions={} calls={} own_statements={} last={}", now.transactions,
      now.calls.value_or(0), now.own_statements, context.last);
  const auto reading = previous_ ? throughput_between(*previous_, now) : std::nullopt;
  previous_ = now;
  if (reading) context.sink->on_server_throughput(*reading);
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
