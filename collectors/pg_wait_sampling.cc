// pg_wait_sampling deltas.
#include "collectors/pg_wait_sampling.h"

#include <charconv>

#include "model/wait_key.h"

namespace pgwaitprof::collectors {

model::WaitKey wait_sampling_key(const WaitSamplingRow& row) {
  model::WaitKey key{row.backend_type.empty() ? "unknown" : row.backend_type, "active",
                     row.event_type, row.event};
  if (key.wait_event_type.empty()) {
    key.wait_event_type = model::kCpu;
    key.wait_event = model::kCpu;
  }
  if (key.backend_type != "client backend" && key.backend_type != "unknown") {
    key.state = "background";
  } else if (key.wait_event_type == "Client" && key.wait_event == "ClientRead") {
    key.state = "idle";
  }
  return key;
}

std::optional<model::Profile> WaitSamplingDelta::update(const std::vector<WaitSamplingRow>& rows,
                                                        uint64_t periods) {
  // pg_wait_sampling_profile has one row per (pid, event_type, event, queryid).
  std::map<RowKey, uint64_t> current;
  model::Profile delta;
  delta.add_snapshots(periods);
  for (const auto& row : rows) {
    const RowKey row_key{row.pid, row.event_type, row.event, row.query_id};
    current[row_key] = row.count;
    const auto before = previous_.find(row_key);
    const uint64_t old_count = before == previous_.end() ? 0 : before->second;
    const uint64_t added = row.count >= old_count ? row.count - old_count : row.count;
    if (added > 0) delta.add(wait_sampling_key(row), added);
  }
  previous_ = std::move(current);
  if (!have_baseline_) {
    have_baseline_ = true;
    return std::nullopt;
  }
  return delta;
}

namespace {

constexpr const char* kWaitSamplingStatement = "pgwaitprof_wait_sampling";

template <typename Number>
bool parse_number(const PGresult* result, int row, int column, Number& value) {
  const char* text = PQgetvalue(result, row, column);
  const char* end = text + PQgetlength(result, row, column);
  const auto [stop, error] = std::from_chars(text, end, value);
  return error == std::errc() && stop == end;
}

}  // namespace

std::optional<std::vector<WaitSamplingRow>> parse_wait_sampling(const PGresult* result) {
  std::vector<WaitSamplingRow> rows;
  rows.reserve(static_cast<size_t>(PQntuples(result)));
  for (int row = 0; row < PQntuples(result); ++row) {
    WaitSamplingRow parsed;
    if (!parse_number(result, row, 0, parsed.pid) ||
        !parse_number(result, row, 4, parsed.query_id) ||
        !parse_number(result, row, 5, parsed.count)) {
      return std::nullopt;
    }
    parsed.backend_type = cell(result, row, 1);
    parsed.event_type = cell(result, row, 2);
    parsed.event = cell(result, row, 3);
    rows.push_back(std::move(parsed));
  }
  return rows;
}

asio::awaitable<CollectResult> WaitSamplingSource::prepare(PgSession& session) {
  auto installed = co_await session.execute(
      "SELECT count(*) FROM pg_extension WHERE extname = 'pg_wait_sampling'");
  if (!installed.ok()) co_return collector_error(*installed.error, session);
  if (cell(installed.result.get(), 0, 0) == "0") {
    co_return CollectorError{
        "extension \"pg_wait_sampling\" is not installed in this database (CREATE EXTENSION "
        "pg_wait_sampling, with it in shared_preload_libraries)",
        "", false};
  }
  auto period = co_await session.execute(kWaitSamplingPeriodQuery);
  if (!period.ok()) co_return collector_error(*period.error, session);
  int period_ms = 0;
  if (!parse_number(period.result.get(), 0, 0, period_ms) || period_ms <= 0) {
    co_return CollectorError{"could not read pg_wait_sampling.profile_period", "", false};
  }
  period_s_ = period_ms / 1000.0;
  delta_ = WaitSamplingDelta{};  // a new session: the first read sets a new baseline
  previous_read_.reset();
  if (auto error = co_await session.prepare(kWaitSamplingStatement, kWaitSamplingQuery)) {
    co_return collector_error(*error, session);
  }
  co_return std::nullopt;
}

asio::awaitable<CollectResult> WaitSamplingSource::collect(CollectContext& context) {
  const auto started = model::SteadyClock::now();
  auto outcome = co_await context.session->execute_prepared(kWaitSamplingStatement);
  if (!outcome.ok()) co_return collector_error(*outcome.error, *context.session);
  auto rows = parse_wait_sampling(outcome.result.get());
  if (!rows) co_return CollectorError{"malformed row in pg_wait_sampling_profile", "", false};
  uint64_t periods = 0;
  if (previous_read_) {
    const double elapsed_s = std::chrono::duration<double>(started - *previous_read_).count();
    periods = static_cast<uint64_t>(elapsed_s / period_s_ + 0.5);
  }
  previous_read_ = started;
  if (auto profile = delta_.update(*rows, periods)) {
    context.sink->on_profile_delta(*profile, model::SystemClock::now());
  }
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
