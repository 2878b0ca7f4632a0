// The pg_wait_sampling source: reads the extension's cumulative profile at a low rate and turns
// it into deltas for the model. It never resets the profile: other users may be reading it.
// Used only when asked for (source pg_wait_sampling): it samples at the extension's own
// profile_period and cannot show CPU, session state or wait lengths.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "collectors/collector.h"
#include "model/profile.h"

namespace pgwaitprof::collectors {

inline constexpr const char* kWaitSamplingQuery =
    "SELECT p.pid, coalesce(a.backend_type, ''), coalesce(p.event_type, ''), coalesce(p.event, ''),"
    " coalesce(p.queryid, 0), p.count"
    " FROM pg_wait_sampling_profile p LEFT JOIN pg_stat_activity a USING (pid)";

inline constexpr const char* kWaitSamplingPeriodQuery =
    "SELECT current_setting('pg_wait_sampling.profile_period')::int";

struct WaitSamplingRow {
  int32_t pid = 0;
  std::string backend_type;  // "" when the backend has exited since
  std::string event_type;    // "" = on CPU
  std::string event;
  int64_t query_id = 0;
  uint64_t count = 0;
};

// The wait key of a pg_wait_sampling row. The extension keeps no session state, so a client
// backend on Client:ClientRead counts as idle, and anything else of a client backend as active.
model::WaitKey wait_sampling_key(const WaitSamplingRow& row);

// The rows of a result of kWaitSamplingQuery; nullopt (and nothing thrown) on a malformed number.
std::optional<std::vector<WaitSamplingRow>> parse_wait_sampling(const PGresult* result);

class WaitSamplingDelta {
 public:
  // Returns the counts added since the previous call (none on the first call, which only sets
  // the baseline). A count that went down means someone reset the profile: the new count is
  // then all new. `periods` is the number of the extension's sampling periods elapsed.
  std::optional<model::Profile> update(const std::vector<WaitSamplingRow>& rows, uint64_t periods);

 private:
  using RowKey = std::tuple<int32_t, std::string, std::string, int64_t>;
  std::map<RowKey, uint64_t> previous_;
  bool have_baseline_ = false;
};

class WaitSamplingSource : public Collector {
 public:
  std::string_view name() const override { return "pg_wait_sampling"; }
  // Fails when the extension is not installed in the target's database.
  asio::awaitable<CollectResult> prepare(PgSession& session) override;
  // Delivers the counts added since the previous read to context.sink (none on the first).
  asio::awaitable<CollectResult> collect(CollectContext& context) override;
  // pg_wait_sampling.profile_period, known once prepared.
  double period_s() const { return period_s_; }

 private:
  WaitSamplingDelta delta_;
  double period_s_ = 0;
  std::optional<model::SteadyClock::time_point> previous_read_;
};

}  // namespace pgwaitprof::collectors
