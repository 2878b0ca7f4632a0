// The server's own count of the load (a run collector, once per timeline interval and at the
// run's start and end): committed and rolled-back transactions of every database from
// pg_stat_database and, when pg_stat_statements is installed, its calls. Throughput for load
// generators that report none (any command, a recording window of load from elsewhere), and a
// check beside those that do. pgwaitprof's own queries are counted by the server too: they are
// taken out, counted on pgwaitprof's sessions. Backends (pgwaitprof's too) hand their counts to
// the server when they go idle, at most once a second: at any moment the counters lag the
// transactions by half a second on average (each busy backend anywhere from 0 to 1 s). So each
// reading after the first is taken that lag after its interval's end and stands for the
// interval's end (kHandOverLag; the schedule adds it): its transactions are the interval's own,
// not half of the one before, and the first interval is filled. The time is the one at which
// it was taken, less the lag, not the one it was due at: a reading taken late on a busy host
// stands for a later end. The recorder counts the readings over the load generator's own
// intervals (model/run_recorder.h), whose clock starts after the run's. The last reading,
// taken when the load has ended (its backends hand over their last counts as they exit),
// stands for its own time, and joins the reading before it when it is shorter than most of an
// interval (the last stub is folded into the interval before: the recorder marks such a figure
// as spread, not measured per interval); each reading is delivered when the next one is
// taken, or at the last.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "base/time.h"
#include "collectors/collector.h"
#include "model/sample.h"

namespace pgwaitprof::collectors {

// One reading of the counters.
struct ServerCounters {
  model::SteadyClock::time_point at;
  uint64_t transactions = 0;      // sum of xact_commit + xact_rollback
  std::optional<uint64_t> calls;  // sum of pg_stat_statements.calls
  uint64_t own_statements = 0;    // pgwaitprof's own queries by then
};

// The load between two readings, pgwaitprof's own statements taken out (each of them is one
// transaction and, tracked by pg_stat_statements, one call). Counters that went backwards (a
// pg_stat_reset(), a restart) give no reading.
std::optional<model::ServerThroughput> throughput_between(const ServerCounters& before,
                                                          const ServerCounters& after);

class ServerThroughputCollector : public Collector {
 public:
  // How late the counters are on average, and so how long after an interval's end its reading
  // is taken (registry.cc's schedule).
  static constexpr base::Seconds kHandOverLag{0.5};
  // `own_statements`: how many queries pgwaitprof has sent to the target so far. A reading is
  // of one `interval`; the last one, when the load ends, only when it covers most of one.
  // `with_calls`: pg_stat_statements is usable (statements_availability(), decided once at
  // the run's start), so its calls are read too.
  ServerThroughputCollector(std::function<uint64_t()> own_statements, base::Seconds interval,
                            bool with_calls)
      : own_statements_(std::move(own_statements)), interval_(interval), with_calls_(with_calls) {}
  std::string_view name() const override { return "server_throughput"; }
  // On a session connected again (the server restarted): the next reading starts afresh, so
  // no reading spans the outage (the time it covers is the run's minus the outage).
  asio::awaitable<CollectResult> prepare(PgSession& session) override;
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

 private:
  std::function<uint64_t()> own_statements_;
  base::Seconds interval_;
  bool with_calls_;
  std::optional<ServerCounters> previous_;
  bool read_before_ = false;                        // the run's first reading was taken
  std::optional<model::ServerThroughput> pending_;  // taken, not delivered yet
};

}  // namespace pgwaitprof::collectors
