// The timed wrapper shared by every collector.
#include "collectors/collector.h"

namespace pgwaitprof::collectors {

asio::awaitable<CollectResult> Collector::prepare(PgSession& session) {
  (void)session;
  co_return std::nullopt;
}

asio::awaitable<CollectResult> collect_timed(Collector& collector, CollectContext& context) {
  const auto started = model::SteadyClock::now();
  auto result = co_await collector.collect(context);
  const base::Seconds duration = model::SteadyClock::now() - started;
  if (context.sink != nullptr) {
    context.sink->on_collector_status(collector.name(), duration, !result.has_value());
  }
  co_return result;
}

CollectorError collector_error(const PgError& error, const PgSession& session) {
  return {error.message, error.sqlstate, !session.connected()};
}

}  // namespace pgwaitprof::collectors
