// The collector interface (after node_exporter's Collector): one source of data about a target
// or its host, one implementation per file, delivering into a model::SampleSink. Failures are
// values, never exceptions; collect_timed() times every collection and reports
// pgwaitprof_collector_duration_seconds / pgwaitprof_collector_success for all of them.
//
// Collectors by when they run (collectors/registry.h):
//  - the sampling source of a target sampler (activity or pg_wait_sampling);
//  - snapshot stages, which amend each snapshot before the sinks see it (the kernel's view);
//  - collectors on a period beside it, for a target's whole life (lock blockers, statement
//    texts) or during a run only (background activity, host CPU, the load generator's
//    kernel times).
#pragma once

#include <asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "collectors/pg_session.h"
#include "model/sample.h"
#include "model/sample_sink.h"

namespace pgwaitprof::collectors {

struct CollectorError {
  std::string message;   // one line, passwords masked
  std::string sqlstate;  // when the server sent one
  bool connection_lost = false;
  // The source cannot work with this target as it is (the memory source on a remote server,
  // without the right to read its memory, ...): a run fails at once instead of retrying.
  bool refused = false;
};
using CollectResult = std::optional<CollectorError>;

struct CollectContext {
  PgSession* session = nullptr;  // null for collectors that read only the host
  model::SampleSink* sink = nullptr;
  // A snapshot source fills this snapshot, and snapshot stages amend it; the sampler delivers
  // it to the sinks afterwards.
  model::Snapshot* snapshot = nullptr;
  // For the target's periodic collectors: the latest snapshot delivered, if any.
  const model::Snapshot* latest = nullptr;
  model::SteadyClock::time_point now{};
  // The schedule's last collection, after its stop (ScheduledCollector::at_start_and_stop).
  bool last = false;
};

class Collector {
 public:
  virtual ~Collector() = default;
  // The value of the `collector` label.
  virtual std::string_view name() const = 0;
  // Once per (re)connected session: prepared statements, checks that the source exists.
  virtual asio::awaitable<CollectResult> prepare(PgSession& session);
  virtual asio::awaitable<CollectResult> collect(CollectContext& context) = 0;
};

// One collection of `collector`, timed; its duration and success go to context.sink.
asio::awaitable<CollectResult> collect_timed(Collector& collector, CollectContext& context);

// A PgError (from a query) as a collector error.
CollectorError collector_error(const PgError& error, const PgSession& session);

}  // namespace pgwaitprof::collectors
