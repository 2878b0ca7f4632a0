// Who blocks a Lock wait: while the latest snapshot shows backends waiting on heavyweight
// locks, look up (at most 10 times a second, never on the snapshot query itself) their
// blockers with pg_blocking_pids: the lock's type and object, and the blocker's pid, backend
// type, application, state, transaction age and statement (literals replaced).
#pragma once

#include <libpq-fe.h>

#include <string_view>
#include <vector>

#include "collectors/collector.h"

namespace pgwaitprof::collectors {

inline constexpr const char* kLockBlockersQuery =
    "SELECT w.pid, w.locktype, w.mode,"
    " CASE WHEN w.relation IS NOT NULL THEN coalesce(c.relname, w.relation::text)"
    "      WHEN w.transactionid IS NOT NULL THEN 'transaction ' || w.transactionid"
    "      WHEN w.virtualxid IS NOT NULL THEN 'virtual transaction ' || w.virtualxid"
    "      WHEN w.objid IS NOT NULL THEN w.classid::regclass::text || ' ' || w.objid"
    "      ELSE '' END,"
    " b.pid, b.backend_type, b.application_name, coalesce(b.state, ''),"
    " coalesce(extract(epoch FROM clock_timestamp() - b.xact_start), -1),"
    " left(b.query, 2000), coalesce(b.wait_event_type = 'Lock', false)"
    " FROM pg_locks w"
    " LEFT JOIN pg_class c ON c.oid = w.relation"
    " CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS blocker(pid)"
    " JOIN pg_stat_activity b ON b.pid = blocker.pid"
    " WHERE NOT w.granted AND w.pid = ANY($1::int[])";

// The rows of kLockBlockersQuery.
std::vector<model::LockWait> parse_lock_blockers(const PGresult* result);

class LockBlockerCollector : public Collector {
 public:
  std::string_view name() const override { return "lock_blockers"; }
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

 private:
  model::SteadyClock::time_point looked_at_snapshot_{};
};

}  // namespace pgwaitprof::collectors
