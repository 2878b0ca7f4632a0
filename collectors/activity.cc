// pg_stat_activity snapshots.
#include "collectors/activity.h"

#include <charconv>

#include "collectors/pg_session.h"

namespace pgwaitprof::collectors {
namespace {

template <typename Integer>
Integer to_integer(const PGresult* result, int row, int column) {
  const char* text = PQgetvalue(result, row, column);
  Integer value{};
  std::from_chars(text, text + PQgetlength(result, row, column), value);
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
  // The rows of the last snapshot are overwritten in place: their strings keep their storage,
  // so a tick allocates nothing once the backends' names have been seen.
  snapshot.backends.resize(static_cast<size_t>(rows));
  snapshot.hidden_backends = 0;
  auto text = [result](int row, int column, std::string& into) {
    into.assign(PQgetvalue(result, row, column),
                static_cast<size_t>(PQgetlength(result, row, column)));
  };
  for (int row = 0; row < rows; ++row) {
    model::BackendSample& backend = snapshot.backends[static_cast<size_t>(row)];
    backend.pid = to_integer<int32_t>(result, row, 0);
    text(row, 1, backend.backend_type);
    text(row, 2, backend.state);
    text(row, 3, backend.wait_event_type);
    text(row, 4, backend.wait_event);
    backend.query_id.reset();
    if (!PQgetisnull(result, row, 5)) backend.query_id = to_integer<int64_t>(result, row, 5);
    text(row, 6, backend.datname);
    text(row, 7, backend.application_name);
    backend.backend_start = std::chrono::microseconds(to_integer<int64_t>(result, row, 8));
    backend.hidden = PQgetvalue(result, row, 9)[0] == 't';
    backend.kernel_state = 0;
    backend.key = nullptr;
    if (backend.hidden) ++snapshot.hidden_backends;
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
  if (auto error = send(*context.session)) co_return error;
  if (auto error = co_await receive(context)) co_return error;
  parse(*context.snapshot);
  co_return std::nullopt;
}

CollectResult ActivitySource::send(PgSession& session) {
  sent_at_ = model::SystemClock::now();
  sent_at_steady_ = model::SteadyClock::now();
  if (auto error = session.send_prepared(kSnapshotStatement)) {
    return collector_error(*error, session);
  }
  return std::nullopt;
}

asio::awaitable<CollectResult> ActivitySource::receive(CollectContext& context) {
  auto outcome = co_await context.session->receive();
  model::Snapshot& snapshot = *context.snapshot;
  snapshot.taken_at = sent_at_;
  snapshot.taken_at_steady = sent_at_steady_;
  snapshot.query_duration = model::SteadyClock::now() - sent_at_steady_;
  if (!outcome.ok()) co_return collector_error(*outcome.error, *context.session);
  answer_ = std::move(outcome.result);
  co_return std::nullopt;
}

void ActivitySource::parse(model::Snapshot& snapshot) {
  if (answer_) parse_activity(answer_.get(), snapshot);
  answer_.reset();
}

}  // namespace pgwaitprof::collectors
