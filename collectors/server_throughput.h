// The server's own count of the load (a run collector, kReadingsPerInterval times per timeline
// interval, at the run's start and at its end): committed and rolled-back transactions of every
// database from pg_stat_database and, when pg_stat_statements is installed, its calls.
// Throughput for load generators that report none (any command, a recording window of load from
// elsewhere), and a check beside those that do. pgwaitprof's own queries are counted by the
// server too: they are taken out, counted on pgwaitprof's sessions. Backends (pgwaitprof's too)
// hand their counts to the server when they go idle, at most once a second (PostgreSQL 15 and
// later; 13 and 14 send them to the statistics collector every half second), and when they
// exit: the counters show a transaction up to a second late, and clients that connected
// together (pgbench's, at its start) hand over together, once a second from their first
// transaction, so that every reading a second apart saw a whole second of the load but which
// second depended on when the load generator started (pgbench's first interval 25 % above its
// own figure and its last 40 % below on a loaded CI machine). Read ten times an interval, each
// hand-over is seen within a tenth of it: a reading is the increase since the one before, for
// the recorder to place (model/run_recorder.h). Its time is the middle of its query's round
// trip. The last reading waits until the client backends that started during the run (the load
// generator's, but pgwaitprof's own) have exited and handed over their last counts, at most
// kLastReadingWait.
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
  // Readings per timeline interval (registry.cc's schedule).
  static constexpr int kReadingsPerInterval = 10;
  // How long the last reading waits for the load generator's backends to exit.
  static constexpr base::Seconds kLastReadingWait{2};
  static constexpr base::Seconds kPollEvery{0.05};
  // `own_statements`: how many queries pgwaitprof has sent to the target so far. `with_calls`:
  // pg_stat_statements is usable (statements_availability(), decided once at the run's start),
  // so its calls are read too.
  ServerThroughputCollector(std::function<uint64_t()> own_statements, bool with_calls)
      : own_statements_(std::move(own_statements)), with_calls_(with_calls) {}
  std::string_view name() const override { return "server_throughput"; }
  // On a session connected again (the server restarted): the next reading starts afresh, so
  // no reading spans the outage (the time it covers is the run's minus the outage).
  asio::awaitable<CollectResult> prepare(PgSession& session) override;
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

 private:
  // Until no client backend that started since the run's start is left but this session's,
  // polled every kPollEvery (the server tells no one when a backend exits), at most
  // kLastReadingWait; then kPollEvery more, since a backend leaves pg_stat_activity just before
  // its last hand-over.
  asio::awaitable<void> wait_for_load_backends(PgSession& session);

  std::function<uint64_t()> own_statements_;
  bool with_calls_;
  std::optional<ServerCounters> previous_;
  std::optional<model::SystemClock::time_point> run_start_;  // from the first collection
};

}  // namespace pgwaitprof::collectors
