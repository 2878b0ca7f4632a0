// Background activity of the server during a run (a run collector, a few times per interval):
// autovacuum workers, a running checkpoint, a manual VACUUM. The timeline's av/ch/vac flags.
#pragma once

#include <optional>
#include <string>

#include "collectors/collector.h"

namespace pgwaitprof::collectors {

// The background query for a server of `server_version_num`. The checkpoint counter moved from
// pg_stat_bgwriter to pg_stat_checkpointer in 17; from 18 on, num_timed also counts checkpoints
// skipped on an idle server, so num_done (checkpoints performed) is the counter there.
std::string background_query(int server_version_num);

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
