// Background activity query.
#include "collectors/background_stats.h"

#include <charconv>

namespace pgwaitprof::collectors {

asio::awaitable<CollectResult> BackgroundStatsCollector::collect(CollectContext& context) {
  auto outcome = co_await context.session->execute(kBackgroundQuery);
  if (!outcome.ok()) co_return collector_error(*outcome.error, *context.session);
  const PGresult* result = outcome.result.get();
  if (PQntuples(result) != 1)
    co_return CollectorError{"background query returned no row", "", false};
  model::Background background;
  background.autovacuum = cell(result, 0, 0) != "0";
  background.checkpoint = cell(result, 0, 1) != "0";
  background.manual_vacuum = cell(result, 0, 2) != "0";
  const auto counter = cell(result, 0, 3);
  long long checkpoints = 0;
  if (std::from_chars(counter.data(), counter.data() + counter.size(), checkpoints).ec ==
      std::errc()) {
    if (checkpoints_ && checkpoints != *checkpoints_) background.checkpoint = true;
    checkpoints_ = checkpoints;
  }
  context.sink->on_background(context.now, background);
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
