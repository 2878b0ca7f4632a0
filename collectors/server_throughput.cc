// pg_stat_database's transactions (and pg_stat_statements' calls) per reading.
#include "collectors/server_throughput.h"

#include <charconv>
#include <string>

#include "base/logging.h"

namespace pgwaitprof::collectors {
namespace {

auto log() {
  static auto logger = base::component_logger("throughput");
  return logger;
}

constexpr const char* kTransactionsQuery =
    "SELECT sum(xact_commit + xact_rollback)::int8 FROM pg_stat_database";
constexpr const char* kWithCallsQuery =
    "SELECT (SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database)::int8, "
    "(SELECT sum(calls) FROM pg_stat_statements)::int8";

std::optional<uint64_t> counter(const PGresult* result, int column) {
  if (PQntuples(result) < 1 || PQnfields(result) <= column) return std::nullopt;
  const auto text = cell(result, 0, column);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
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

asio::awaitable<CollectResult> ServerThroughputCollector::collect(CollectContext& context) {
  auto& session = *context.session;
  // Chosen before co_await: GCC 12 miscompiles ?: in a co_await's arguments.
  const std::string query = with_calls_ ? kWithCallsQuery : kTransactionsQuery;
  // When the counters were read, not when the reading was due: one taken late on a busy host
  // (the collectors before it on the session, the loop behind) holds the transactions up to
  // then, and the readings either side of it must say so.
  const auto sent = model::SteadyClock::now();
  auto read = co_await session.execute(query);
  if (!read.ok()) {
    // pg_stat_statements dropped during the run: transactions only from now on.
    if (session.connected()) with_calls_ = false;
    co_return collector_error(*read.error, session);
  }
  ServerCounters now;
  // Taken kHandOverLag after an interval's end, a reading stands for that end (the header), the
  // first after a reconnection too; the first (the start) and the last (the load ended, its
  // backends gone) for their own time.
  now.at = read_before_ && !context.last
               ? sent - std::chrono::duration_cast<model::SteadyClock::duration>(kHandOverLag)
               : sent;
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
  log()->debug("server counters transactions={} calls={} own_statements={} last={}",
               now.transactions, now.calls.value_or(0), now.own_statements, context.last);
  // A last reading of less than most of an interval joins the one before it (see the header).
  constexpr double kShortestReading = 0.9;
  auto reading = previous_ ? throughput_between(*previous_, now) : std::nullopt;
  previous_ = now;
  read_before_ = true;
  if (reading && pending_ && context.last &&
      base::Seconds(reading->to - reading->from) < kShortestReading * interval_) {
    pending_->to = reading->to;
    pending_->transactions += reading->transactions;
    if (pending_->calls && reading->calls) *pending_->calls += *reading->calls;
    reading.reset();
  }
  if (pending_ && (reading || context.last)) {
    context.sink->on_server_throughput(*pending_);
    pending_.reset();
  }
  if (reading && context.last) {
    context.sink->on_server_throughput(*reading);
  } else if (reading) {
    pending_ = reading;
  }
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
