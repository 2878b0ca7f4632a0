// Collector registrations and the schedule runner.
#include "collectors/registry.h"

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>

#include "base/logging.h"
#include "collectors/activity.h"
#include "collectors/background_stats.h"
#include "collectors/cpu_profile.h"
#include "collectors/host_cpu.h"
#include "collectors/kernel.h"
#include "collectors/lock_blockers.h"
#include "collectors/memory/memory_source.h"
#include "collectors/pg_wait_sampling.h"
#include "collectors/server_throughput.h"
#include "collectors/statements.h"

namespace pgwaitprof::collectors {
namespace {

// Background activity is polled several times per interval so short checkpoints are seen.
constexpr int kBackgroundPollsPerInterval = 4;

auto log() {
  static auto logger = base::component_logger("collector");
  return logger;
}

std::chrono::steady_clock::duration as_duration(std::chrono::duration<double> seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(seconds);
}

}  // namespace

std::vector<std::unique_ptr<Collector>> make_snapshot_stages(const SamplerOptions& options) {
  std::vector<std::unique_ptr<Collector>> stages;
  if (!model::takes_snapshots(options.source)) return stages;
  stages.push_back(std::make_unique<KernelStage>(options.local));
  return stages;
}

std::vector<ScheduledCollector> make_target_collectors(const SamplerOptions& options) {
  std::vector<ScheduledCollector> schedule;
  if (!model::takes_snapshots(options.source)) return schedule;
  // At most 10 lookups a second, and only while Lock waits exist (the collector checks).
  schedule.push_back({std::make_unique<LockBlockerCollector>(), std::chrono::milliseconds(100)});
  // Five lookups a second, and only while the latest snapshot shows a query id not seen before.
  schedule.push_back({std::make_unique<StatementTextCollector>(), std::chrono::milliseconds(200)});
  return schedule;
}

std::vector<ScheduledCollector> make_run_collectors(RunCollectorOptions options) {
  std::vector<ScheduledCollector> schedule;
  schedule.push_back({std::make_unique<BackgroundStatsCollector>(),
                      as_duration(options.interval / kBackgroundPollsPerInterval)});
  schedule.push_back({std::make_unique<HostCpuCollector>(options.loadgen_pid, options.interval),
                      as_duration(options.interval)});
  schedule.push_back({std::make_unique<LoadgenKernelCollector>(options.loadgen_pid),
                      as_duration(options.interval)});
  if (options.own_statements) {
    schedule.push_back({std::make_unique<ServerThroughputCollector>(
                            options.own_statements, options.interval, options.statement_calls),
                        as_duration(options.interval), true,
                        as_duration(ServerThroughputCollector::kHandOverLag)});
  }
  // Drained several times a second, so its buffers never fill at 999 Hz, and once more when
  // the run ends, so its last 200 ms are in the profile too.
  if (options.cpu_profile) {
    schedule.push_back({std::move(options.cpu_profile), CpuProfileCollector::kPeriod, true});
  }
  return schedule;
}

asio::awaitable<void> run_schedule(std::vector<ScheduledCollector>& schedule,
                                   CollectContext context,
                                   std::chrono::steady_clock::time_point start,
                                   base::AsyncEvent& stop) {
  using namespace asio::experimental::awaitable_operators;
  if (schedule.empty()) co_return;
  std::vector<std::chrono::steady_clock::time_point> due;
  for (const auto& entry : schedule) {
    due.push_back(entry.at_start_and_stop ? start : start + entry.period + entry.lag);
  }
  // Logged once per change, not per collection: a failing collector fails every time.
  std::vector<std::string> last_errors(schedule.size());
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!stop.is_set()) {
    const auto next = *std::min_element(due.begin(), due.end());
    timer.expires_at(next);
    co_await (timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable)) || stop.wait());
    if (stop.is_set()) break;
    for (size_t index = 0; index < schedule.size(); ++index) {
      if (due[index] > next) continue;
      // The collection at the start has no lag; the next one is a period and the lag later.
      due[index] +=
          schedule[index].period +
          (due[index] == start ? schedule[index].lag : std::chrono::steady_clock::duration(0));
      context.now = next;
      auto error = co_await collect_timed(*schedule[index].collector, context);
      const std::string message = error ? error->message : "";
      if (message != last_errors[index]) {
        if (error) {
          log()->warn("collection failed collector={} error=\"{}\"",
                      schedule[index].collector->name(), message);
        } else {
          log()->info("collection works again collector={}", schedule[index].collector->name());
        }
        last_errors[index] = message;
      }
    }
  }
  context.last = true;
  for (auto& entry : schedule) {
    if (!entry.at_start_and_stop) continue;
    context.now = std::chrono::steady_clock::now();
    (void)co_await collect_timed(*entry.collector, context);
  }
}

}  // namespace pgwaitprof::collectors
