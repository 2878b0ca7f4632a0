// Background activity of the server during a run (a run collector, a few times per interval):
// autovacuum workers, a running checkpoint, a manual VACUUM. The timeline's av/ch/vac flags.
#pragma once

#include <optional>

#include "collectors/collector.h"

namespace pgwaitprof::collectors {

inline constexpr const char* kBackgroundQuery =
    "SELECT count(*) FILTER (WHERE backend_type = 'autovacuum worker'),"
    " count(*) FILTER (WHERE backend_type = 'checkpointer'"
    "   AND wait_event IS DISTINCT FROM 'CheckpointerMain'),"
    " (SELECT count(*) FROM pg_stat_progress_vacuum v JOIN pg_stat_activity c ON c.pid = v.pid"
    "   WHERE c.backend_type = 'client backend'),"
    " (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)"
    " FROM pg_stat_activity";

// A checkpoint counts as running when the checkpointer is out of its main-loop sleep or the
// checkpoint counter moved since the previous collection.
class BackgroundStatsCollector : public Collector {
 public:
  std::string_view name() const override { return "background"; }
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

 private:
  std::optional<long long> checkpoints_;
};

}  // namespace pgwaitprof::collectors
