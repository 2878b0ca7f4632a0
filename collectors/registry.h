// Where collectors are registered: the sampling source a target's sampler reads, the collectors
// that run on their own period beside it for the target's whole life, and those that run only
// during a benchmark run. A new collector is one file plus one line here.
#pragma once

#include <sys/types.h>

#include <asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/async_event.h"
#include "base/time.h"
#include "collectors/collector.h"
#include "collectors/sampler_options.h"

namespace pgwaitprof::collectors {

struct ScheduledCollector {
  std::unique_ptr<Collector> collector;
  std::chrono::steady_clock::duration period;
  // Also collected once when the schedule starts and once when it stops (counters whose
  // differences are the reading: the first and the last interval are covered too).
  bool at_start_and_stop = false;
};

// Stages that amend every snapshot before the sinks see it (activity source only).
std::vector<std::unique_ptr<Collector>> make_snapshot_stages(const SamplerOptions& options);

// Collectors beside the source, on the sampler's session, for as long as it is connected.
std::vector<ScheduledCollector> make_target_collectors(const SamplerOptions& options);

struct RunCollectorOptions {
  pid_t loadgen_pid = -1;
  base::Seconds interval{1};
  // How many queries pgwaitprof has sent to the target so far, for server-side throughput
  // (collectors/server_throughput.h); none: no server-side throughput.
  std::function<uint64_t()> own_statements;
  // pg_stat_statements is usable (statements_availability()): its calls are read too.
  bool statement_calls = false;
  // The CPU profile (open_cpu_profile() in collectors/cpu_profile.h), when the run has one.
  std::unique_ptr<Collector> cpu_profile;
};
// Collectors of one run, on the run's own session: background activity, host CPU, the CPU
// profile.
std::vector<ScheduledCollector> make_run_collectors(RunCollectorOptions options);

// How a schedule gets its session back when the server goes away (a restart mid-run): the
// connection string, and how long one attempt may take (the schedule's other collectors, which
// read only the host, wait meanwhile).
struct ScheduleReconnect {
  std::string conninfo;
  std::chrono::milliseconds attempt_timeout{2000};
};

// Runs every collector of `schedule` at start + k * period (and at start and after `stop` when
// it asks to), one after the other on `context`'s
// session (never two queries at once), until `stop` is set. Collection errors are reported to
// the sink (collect_timed) and to the log once per change; none ends the schedule. With
// `reconnect` (which must outlive the schedule), a lost session is connected again on
// base::Backoff's delays (as a target's sampler is), the collectors are prepared on it again, and
// the sink hears the outage (on_run_connection_state).
asio::awaitable<void> run_schedule(std::vector<ScheduledCollector>& schedule,
                                   CollectContext context,
                                   std::chrono::steady_clock::time_point start,
                                   base::AsyncEvent& stop,
                                   const ScheduleReconnect* reconnect = nullptr);

}  // namespace pgwaitprof::collectors
