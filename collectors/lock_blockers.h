// Who blocks a Lock wait: while the latest snapshot shows backends waiting on heavyweight
// locks, look up (at most 10 times a second, never on the snapshot query itself) their
// blockers with pg_blocking_pids: the lock's type and object, and the blocker's pid, backend
// type, application, state, transaction age and statement (literals replaced), or the prepared
// transaction (name, owner, when it was prepared) that holds the lock with no backend.
#pragma once

#include <libpq-fe.h>

#include <string_view>
#include <vector>

#include "collectors/collector.h"

namespace pgwaitprof::collectors {

// A blocker pid of 0 is a prepared transaction (it has no backend, so no pg_stat_activity row):
// the one whose granted lock (pid NULL) is on the object the waiter asks for. Its transaction is
// the one of its own transactionid lock of the same virtual transaction (PostgreSQL 15 keeps the
// one it had before PREPARE, later versions show '-1/XID'), named from pg_prepared_xacts.
inline constexpr const char* kLockBlockersQuery =
    "SELECT w.pid, w.locktype, w.mode,"
    " CASE WHEN w.relation IS NOT NULL THEN coalesce(c.relname, w.relation::text)"
    "      WHEN w.transactionid IS NOT NULL THEN 'transaction ' || w.transactionid"
    "      WHEN w.virtualxid IS NOT NULL THEN 'virtual transaction ' || w.virtualxid"
    "      WHEN w.objid IS NOT NULL THEN w.classid::regclass::text || ' ' || w.objid"
    "      ELSE '' END,"
    " blocker.pid, coalesce(b.backend_type, ''), coalesce(b.application_name, ''),"
    " coalesce(b.state, ''),"
    " coalesce(extract(epoch FROM clock_timestamp() - coalesce(b.xact_start, p.prepared)), -1),"
    " coalesce(left(b.query, 2000), ''), coalesce(b.wait_event_type = 'Lock', false),"
    " coalesce(p.gid, ''), coalesce(p.owner::text, '')"
    " FROM pg_locks w"
    " LEFT JOIN pg_class c ON c.oid = w.relation"
    " CROSS JOIN LATERAL unnest(pg_blocking_pids(w.pid)) AS blocker(pid)"
    " LEFT JOIN pg_stat_activity b ON b.pid = blocker.pid AND blocker.pid <> 0"
    " LEFT JOIN LATERAL (SELECT DISTINCT x.gid, x.prepared, x.owner"
    "   FROM pg_locks h"
    "   JOIN pg_locks o ON o.pid IS NULL AND o.locktype = 'transactionid' AND o.granted"
    "    AND o.mode = 'ExclusiveLock' AND o.virtualtransaction = h.virtualtransaction"
    "   JOIN pg_prepared_xacts x ON x.transaction = o.transactionid"
    "   WHERE blocker.pid = 0 AND h.pid IS NULL AND h.granted AND h.locktype = w.locktype"
    "   AND h.database IS NOT DISTINCT FROM w.database"
    "   AND h.relation IS NOT DISTINCT FROM w.relation AND h.page IS NOT DISTINCT FROM w.page"
    "   AND h.tuple IS NOT DISTINCT FROM w.tuple"
    "   AND h.virtualxid IS NOT DISTINCT FROM w.virtualxid"
    "   AND h.transactionid IS NOT DISTINCT FROM w.transactionid"
    "   AND h.classid IS NOT DISTINCT FROM w.classid AND h.objid IS NOT DISTINCT FROM w.objid"
    "   AND h.objsubid IS NOT DISTINCT FROM w.objsubid) p ON true"
    " WHERE NOT w.granted AND w.pid = ANY($1::int[]) AND (b.pid IS NOT NULL OR p.gid IS NOT NULL)";

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
