// The activity source: snapshots of pg_stat_activity taken by pgwaitprof itself, one per tick
// of the target's sampler, and their parsing (pure, tested on results).
#pragma once

#include <libpq-fe.h>

#include <string>

#include "collectors/collector.h"
#include "model/sample.h"

namespace pgwaitprof::collectors {

// The snapshot query for a server of `server_version_num` (query_id exists from 14 on). It runs
// in autocommit: pg_stat_activity is cached for the length of a transaction.
std::string activity_query(int server_version_num);

// Fills snapshot.backends (and hidden_backends) from a result of activity_query().
void parse_activity(const PGresult* result, model::Snapshot& snapshot);

class ActivitySource : public Collector {
 public:
  std::string_view name() const override { return "activity"; }
  asio::awaitable<CollectResult> prepare(PgSession& session) override;
  // Fills context.snapshot: its times, the query's duration and every backend but our own.
  // It is send(), receive() and parse().
  asio::awaitable<CollectResult> collect(CollectContext& context) override;
  // Sends the snapshot query; its send time is the snapshot's time.
  CollectResult send(PgSession& session);
  // Waits for the answer to send() and fills context.snapshot's times; the query's duration
  // runs from the send to the moment the answer is read. The rows wait for parse(), so the
  // next query can be sent first.
  asio::awaitable<CollectResult> receive(CollectContext& context);
  // Fills the backends of `snapshot` from the answer receive() got.
  void parse(model::Snapshot& snapshot);

 private:
  model::SystemClock::time_point sent_at_{};
  model::SteadyClock::time_point sent_at_steady_{};
  PgResult answer_;
};

}  // namespace pgwaitprof::collectors
