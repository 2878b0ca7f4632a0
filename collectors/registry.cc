// Collector registrations and the schedule runner.
#include "collectors/registry.h"

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>

#include "base/backoff.h"
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

auto registry_log() {
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
  const bool traced = options.source == model::SamplerSource::kTrace;
  if (!model::takes_snapshots(options.source) && !traced) return schedule;
  // At most 10 lookups a second, and only while Lock waits exist (the collector checks; the
  // traced source's sampler gives it the processes blocked on locks at each read).
  schedule.push_back({std::make_unique<LockBlockerCollector>(), std::chrono::milliseconds(100)});
  if (traced) return schedule;
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
    schedule.push_back(
        {std::make_unique<ServerThroughputCollector>(options.own_statements,
                                                     options.statement_calls),
         as_duration(options.interval / ServerThroughputCollector::kReadingsPerInterval), true});
  }
  // Drained several times a second, so its buffers never fill at 999 Hz, and once more when
  // the run ends, so its last 200 ms are in the profile too.
  if (options.cpu_profile) {
    schedule.push_back({std::move(options.cpu_profile), CpuProfileCollector::kPeriod, true});
  }
  return schedule;
}

namespace {

// The schedule's session while the server is away: attempts on base::Backoff's delays, one
// per schedule turn that finds the delay passed; the sink hears when it went and came back.
class SessionKeeper {
 public:
  SessionKeeper(const ScheduleReconnect* reconnect, CollectContext& context)
      : reconnect_(reconnect), context_(context) {}

  // Whether the session can take queries now, after an attempt to connect it again if it was
  // lost and the backoff's delay has passed.
  asio::awaitable<bool> ready(std::vector<ScheduledCollector>& schedule,
                              std::chrono::steady_clock::time_point now) {
    auto& session = *context_.session;
    if (!reconnect_ || session.connected()) co_return true;
    if (!down_) {
      down_ = true;
      down_at_ = now;
      retry_at_ = now;
      registry_log()->warn("lost the run's connection: reconnecting");
      context_.sink->on_run_connection_state(false, now, "connection lost");
    }
    if (now < retry_at_) co_return false;
    auto error = co_await session.connect(reconnect_->conninfo, reconnect_->attempt_timeout);
    for (size_t index = 0; !error && index < schedule.size(); ++index) {
      if (auto failed = co_await schedule[index].collector->prepare(session)) {
        error = PgError{failed->message, failed->sqlstate};
      }
    }
    if (error) {
      session.close();
      const auto delay = backoff_.next();
      if (error->message != last_error_) {
        registry_log()->warn("could not reconnect the run's connection: {} retry_in_ms={}",
                             error->message, delay.count());
        last_error_ = error->message;
      }
      retry_at_ = std::chrono::steady_clock::now() + delay;
      co_return false;
    }
    const auto back = std::chrono::steady_clock::now();
    registry_log()->info("the run's connection is back gap_s={:.3f}",
                         std::chrono::duration<double>(back - down_at_).count());
    down_ = false;
    backoff_.reset();
    last_error_.clear();
    context_.sink->on_run_connection_state(true, back, "");
    co_return true;
  }

 private:
  const ScheduleReconnect* reconnect_;  // null: the session is not kept up
  CollectContext& context_;
  base::Backoff backoff_;
  bool down_ = false;
  std::chrono::steady_clock::time_point down_at_{};
  std::chrono::steady_clock::time_point retry_at_{};
  std::string last_error_;
};

}  // namespace

asio::awaitable<void> run_schedule(std::vector<ScheduledCollector>& schedule,
                                   CollectContext context,
                                   std::chrono::steady_clock::time_point start,
                                   base::AsyncEvent& stop, const ScheduleReconnect* reconnect) {
  using namespace asio::experimental::awaitable_operators;
  if (schedule.empty()) co_return;
  std::vector<std::chrono::steady_clock::time_point> due;
  for (const auto& entry : schedule) {
    due.push_back(entry.at_start_and_stop ? start : start + entry.period);
  }
  SessionKeeper keeper(reconnect, context);
  // Logged once per change, not per collection: a failing collector fails every time.
  std::vector<std::string> last_errors(schedule.size());
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!stop.is_set()) {
    const auto next = *std::min_element(due.begin(), due.end());
    timer.expires_at(next);
    co_await (timer.async_wait(asio::experimental::as_tuple(asio::use_awaitable)) || stop.wait());
    if (stop.is_set()) break;
    // While the session is away its collectors fail ("not connected", logged once); those
    // that read the host only go on.
    co_await keeper.ready(schedule, next);
    for (size_t index = 0; index < schedule.size(); ++index) {
      if (due[index] > next) continue;
      due[index] += schedule[index].period;
      context.now = next;
      auto error = co_await collect_timed(*schedule[index].collector, context);
      const std::string message = error ? error->message : "";
      if (message != last_errors[index]) {
        if (error) {
          registry_log()->warn("collection failed collector={} error=\"{}\"",
                               schedule[index].collector->name(), message);
        } else {
          registry_log()->info("collection works again collector={}",
                               schedule[index].collector->name());
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
