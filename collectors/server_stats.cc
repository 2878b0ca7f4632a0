// Background activity and server description queries.
#include "collectors/server_stats.h"

namespace pgwaitprof::collectors {

asio::awaitable<std::optional<model::Background>> BackgroundPoller::poll(PgSession& session) {
  auto outcome = co_await session.execute(kBackgroundQuery);
  if (!outcome.ok() || PQntuples(outcome.result.get()) != 1) co_return std::nullopt;
  const PGresult* result = outcome.result.get();
  model::Background background;
  background.autovacuum = cell(result, 0, 0) != "0";
  background.checkpoint = cell(result, 0, 1) != "0";
  background.manual_vacuum = cell(result, 0, 2) != "0";
  const auto counter = cell(result, 0, 3);
  if (!counter.empty()) {
    const long long checkpoints = std::stoll(counter);
    if (checkpoints_ && checkpoints != *checkpoints_) background.checkpoint = true;
    checkpoints_ = checkpoints;
  }
  co_return background;
}

asio::awaitable<std::optional<PgError>> describe_server(PgSession& session,
                                                        model::Environment& environment) {
  auto version = co_await session.execute(
      "SELECT version(), current_setting('server_version_num')::int,"
      " current_setting('data_checksums')::bool");
  if (!version.ok()) co_return version.error;
  environment.server_version = cell(version.result.get(), 0, 0);
  environment.server_version_num = std::stoi(cell(version.result.get(), 0, 1));
  environment.data_checksums = cell(version.result.get(), 0, 2) == "t";

  auto settings = co_await session.execute(
      "SELECT name, setting, coalesce(unit, ''), source FROM pg_settings"
      " WHERE source NOT IN ('default', 'override', 'client', 'session') ORDER BY name");
  if (!settings.ok()) co_return settings.error;
  const PGresult* result = settings.result.get();
  environment.settings.clear();
  for (int row = 0; row < PQntuples(result); ++row) {
    environment.settings.push_back(
        {cell(result, row, 0), cell(result, row, 1), cell(result, row, 2), cell(result, row, 3)});
  }
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
