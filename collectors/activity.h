// The activity source: snapshots of pg_stat_activity taken by pgwaitprof itself, one per tick
// of the target's sampler, and their parsing (pure, tested on results).
#pragma once

#include <libpq-fe.h>

#include <string>

#include "collectors/collector.h"
#include "daemon/model/sample.h"

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
  asio::awaitable<CollectResult> collect(CollectContext& context) override;
};

}  // namespace pgwaitprof::collectors
