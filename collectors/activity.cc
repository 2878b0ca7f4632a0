// pg_stat_activity snapshots.
#include "collectors/activity.h"

#include <charconv>

#include "collectors/pg_session.h"

namespace pgwaitprof::collectors {
namespace {

template <typename Integer>
Integer to_integer(const char* text) {
  Integer value{};
  std::from_chars(text, text + std::char_traits<char>::length(text), value);
  return value;
}

}  // namespace

std::string activity_query(int server_version_num) {
  const char* query_id = server_version_num >= 140000 ? "query_id" : "NULL::bigint";
  // The query text is compared, never fetched: it is only how PostgreSQL marks rows the role
  // may not see.
  return std::string("SELECT pid, backend_type, state, wait_event_type, wait_event, ") + query_id +
         ", datname, application_name,"
         " (extract(epoch FROM backend_start) * 1000000)::bigint,"
         " coalesce(query = '<insufficient privilege>', false)"
         " FROM pg_stat_activity WHERE pid <> pg_backend_pid()";
}

void parse_activity(const PGresult* result, model::Snapshot& snapshot) {
  const int rows = PQntuples(result);
  snapshot.backends.clear();
  snapshot.backends.reserve(static_cast<size_t>(rows));
  snapshot.hidden_backends = 0;
  for (int row = 0; row < rows; ++row) {
    model::BackendSample backend;
    backend.pid = to_integer<int32_t>(PQgetvalue(result, row, 0));
    backend.backend_type = cell(result, row, 1);
    backend.state = cell(result, row, 2);
    backend.wait_event_type = cell(result, row, 3);
    backend.wait_event = cell(result, row, 4);
    if (!PQgetisnull(result, row, 5))
      backend.query_id = to_integer<int64_t>(PQgetvalue(result, row, 5));
    backend.datname = cell(result, row, 6);
    backend.application_name = cell(result, row, 7);
    backend.backend_start =
        std::chrono::microseconds(to_integer<int64_t>(PQgetvalue(result, row, 8)));
    backend.hidden = PQgetvalue(result, row, 9)[0] == 't';
    if (backend.hidden) ++snapshot.hidden_backends;
    snapshot.backends.push_back(std::move(backend));
  }
}

namespace {
constexpr const char* kSnapshotStatement = "pgwaitprof_snapshot";
}  // namespace

asio::awaitable<CollectResult> ActivitySource::prepare(PgSession& session) {
  if (auto error =
          co_await session.prepare(kSnapshotStatement, activity_query(session.server_version()))) {
    co_return collector_error(*error, session);
  }
  co_return std::nullopt;
}

asio::awaitable<CollectResult> ActivitySource::collect(CollectContext& context) {
  model::Snapshot& snapshot = *context.snapshot;
  snapshot.taken_at = model::SystemClock::now();
  snapshot.taken_at_steady = model::SteadyClock::now();
  auto outcome = co_await context.session->execute_prepared(kSnapshotStatement);
  snapshot.query_duration = model::SteadyClock::now() - snapshot.taken_at_steady;
  if (!outcome.ok()) co_return collector_error(*outcome.error, *context.session);
  parse_activity(outcome.result.get(), snapshot);
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
