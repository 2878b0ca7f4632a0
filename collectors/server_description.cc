// Server description queries.
#include "collectors/server_description.h"

#include <charconv>
#include <set>

namespace pgwaitprof::collectors {

asio::awaitable<std::optional<PgError>> describe_server(PgSession& session,
                                                        model::Environment& environment) {
  auto version = co_await session.execute(
      "SELECT version(), current_setting('server_version_num')::int,"
      " current_setting('data_checksums')::bool");
  if (!version.ok()) co_return version.error;
  environment.server_version = cell(version.result.get(), 0, 0);
  const auto number = cell(version.result.get(), 0, 1);
  std::from_chars(number.data(), number.data() + number.size(), environment.server_version_num);
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

asio::awaitable<std::optional<PgError>> describe_wait_events(PgSession& session,
                                                             const model::Profile& profile,
                                                             model::Environment& environment) {
  if (session.server_version() < 170000) co_return std::nullopt;
  auto described = co_await session.execute("SELECT type, name, description FROM pg_wait_events");
  if (!described.ok()) co_return described.error;
  std::set<std::string> seen;
  for (const auto& [key, count] : profile.counts()) seen.insert(model::display_name(key));
  const PGresult* result = described.result.get();
  for (int row = 0; row < PQntuples(result); ++row) {
    const auto name = cell(result, row, 0) + " | " + cell(result, row, 1);
    if (seen.contains(name)) environment.wait_event_descriptions[name] = cell(result, row, 2);
  }
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
