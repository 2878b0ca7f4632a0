// Server statistics sampled alongside a run at a low rate: background activity (autovacuum
// workers, a running checkpoint, manual VACUUM) and, once per run, the server's description
// (version, non-default settings, data checksums).
#pragma once

#include <optional>

#include <asio/awaitable.hpp>

#include "collectors/pg_session.h"
#include "daemon/model/run.h"

namespace pgwaitprof::collectors {

inline constexpr const char* kBackgroundQuery =
    "SELECT count(*) FILTER (WHERE backend_type = 'autovacuum worker'),"
    " count(*) FILTER (WHERE backend_type = 'checkpointer'"
    "   AND wait_event IS DISTINCT FROM 'CheckpointerMain'),"
    " (SELECT count(*) FROM pg_stat_progress_vacuum v JOIN pg_stat_activity c ON c.pid = v.pid"
    "   WHERE c.backend_type = 'client backend'),"
    " (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)"
    " FROM pg_stat_activity";

// Background activity since the previous poll. A checkpoint counts as running when the
// checkpointer is out of its main-loop sleep or the checkpoint counter moved.
class BackgroundPoller {
 public:
  asio::awaitable<std::optional<model::Background>> poll(PgSession& session);

 private:
  std::optional<long long> checkpoints_;
};

// Server version, non-default settings and data checksums into `environment`.
asio::awaitable<std::optional<PgError>> describe_server(PgSession& session,
                                                        model::Environment& environment);

}  // namespace pgwaitprof::collectors
