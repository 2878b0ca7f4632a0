// The sampler's state machine, its tick loop and the fan-out to sinks.
#include "collectors/target_sampler.h"

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/use_awaitable.hpp>

#include "base/as_tuple.h"
#include "base/backoff.h"
#include "base/logging.h"
#include "collectors/activity.h"
#include "collectors/kernel.h"
#include "collectors/pg_wait_sampling.h"
#include "model/wait_key.h"

namespace pgwaitprof::collectors {
namespace {

using namespace std::chrono_literals;
using base::kAsTuple;
constexpr auto kTickLineEvery = 100ms;
// A snapshot query that has not answered in this long is taken for a dead connection (a
// network partition can leave a socket open without any answer ever coming).
constexpr auto kSnapshotTimeout = 5000ms;

auto target_sampler_log() {
  static auto logger = base::component_logger("sampler");
  return logger;
}

}  // namespace

void TargetSampler::Fanout::on_snapshot(const model::Snapshot& snapshot) {
  for (auto* sink : sinks) sink->on_snapshot(snapshot);
}
void TargetSampler::Fanout::on_profile_delta(const model::Profile& delta,
                                             model::SystemClock::time_point at) {
  for (auto* sink : sinks) sink->on_profile_delta(delta, at);
}
void TargetSampler::Fanout::on_missed_ticks(uint64_t ticks) {
  for (auto* sink : sinks) sink->on_missed_ticks(ticks);
}
void TargetSampler::Fanout::on_source(model::SamplerSource source, std::string_view reason) {
  for (auto* sink : sinks) sink->on_source(source, reason);
}
void TargetSampler::Fanout::on_connection_state(bool up, model::SteadyClock::time_point at,
                                                std::string_view reason) {
  for (auto* sink : sinks) sink->on_connection_state(up, at, reason);
}
void TargetSampler::Fanout::on_collector_status(std::string_view collector, base::Seconds duration,
                                                bool success) {
  for (auto* sink : sinks) sink->on_collector_status(collector, duration, success);
}
void TargetSampler::Fanout::on_kernel_times(const model::KernelTimes& times) {
  for (auto* sink : sinks) sink->on_kernel_times(times);
}
void TargetSampler::Fanout::on_lock_waits(const model::LockLookup& lookup) {
  for (auto* sink : sinks) sink->on_lock_waits(lookup);
}
void TargetSampler::Fanout::on_statement_texts(const std::map<int64_t, std::string>& texts) {
  for (auto* sink : sinks) sink->on_statement_texts(texts);
}

void TargetSampler::Fanout::on_statement_delta(const model::StatementDelta& delta) {
  for (auto* sink : sinks) sink->on_statement_delta(delta);
}

void TargetSampler::Fanout::on_trace_counts(const model::TraceCounts& counts) {
  for (auto* sink : sinks) sink->on_trace_counts(counts);
}

TargetSampler::TargetSampler(asio::any_io_executor executor, SamplerOptions options)
    : executor_(executor),
      options_(std::move(options)),
      session_(executor),
      timer_(executor),
      stopped_(executor),
      sample_delivered_(executor),
      stages_(make_snapshot_stages(options_)),
      collectors_(make_target_collectors(options_)) {
  using model::SamplerSource;
  const auto source = options_.source;
  if (source == SamplerSource::kMemory || source == SamplerSource::kAuto) {
    memory_source_ = std::make_unique<memory::MemorySource>();
  }
  if (source == SamplerSource::kActivity || source == SamplerSource::kAuto) {
    activity_source_ = std::make_unique<ActivitySource>();
  }
  if (source == SamplerSource::kPgWaitSampling) {
    wait_sampling_source_ = std::make_unique<WaitSamplingSource>();
  }
  if (source == SamplerSource::kTrace || (source == SamplerSource::kAuto && options_.auto_traces)) {
    trace_source_ = std::make_unique<trace::TraceSource>();
    const double hz =
        source == SamplerSource::kAuto && options_.trace_hz > 0 ? options_.trace_hz : options_.hz;
    trace_source_->set_sample_hz(static_cast<int>(hz));
    // Auto traces a server once per process: a daemon's other targets on it read memory.
    trace_source_->set_once_per_server(source == SamplerSource::kAuto);
  }
  // Until a connection decides: what auto falls back to.
  in_use_ = source == SamplerSource::kAuto ? SamplerSource::kActivity : source;
}

void TargetSampler::add_sink(model::SampleSink* sink) {
  fanout_.sinks.push_back(sink);
  sink->on_source(in_use_, reason_);
  sink->on_connection_state(connected_, model::SteadyClock::now(), last_error_);
}

void TargetSampler::remove_sink(model::SampleSink* sink) {
  auto& sinks = fanout_.sinks;
  sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
}

void TargetSampler::stop() {
  if (state_ == SamplerState::kStopping) return;
  state_ = SamplerState::kStopping;
  stopped_.set();
  sample_delivered_.notify();
  timer_.cancel();
  if (memory_) {
    memory_->request_stop();
    memory_->wake();
  }
  if (remote_) remote_->close();
  // An in-flight query ends with an error as soon as its socket wait is cancelled.
  session_.cancel();
}

double TargetSampler::source_hz() const {
  return in_use_ == model::SamplerSource::kTrace ? trace_source_->sample_hz() : options_.hz;
}

double TargetSampler::source_period_s() const {
  // The traced source's counts are microseconds.
  if (in_use_ == model::SamplerSource::kTrace) return 1e-6;
  if (const auto* wait_sampling =
          dynamic_cast<const WaitSamplingSource*>(wait_sampling_source_.get())) {
    return wait_sampling->period_s();
  }
  return options_.hz > 0 ? 1.0 / options_.hz : 0;
}

asio::awaitable<bool> TargetSampler::wait_for_sample(std::chrono::milliseconds timeout) {
  if (state_ == SamplerState::kStopping) co_return false;
  if (refused_) co_return false;
  const bool notified = co_await sample_delivered_.wait_for(timeout);
  co_return notified&& state_ != SamplerState::kStopping && !refused_;
}

asio::awaitable<void> TargetSampler::read_traced_now() {
  if (in_use_ != model::SamplerSource::kTrace || state_ != SamplerState::kSampling || lost_ ||
      source_ != trace_source_.get()) {
    co_return;
  }
  // The traced source's collection does not suspend: it cannot interleave with the loop's.
  CollectContext context{&session_, &fanout_, nullptr, nullptr, model::SteadyClock::now()};
  if (auto error = co_await collect_timed(*trace_source_, context)) {
    target_sampler_log()->warn("trace read failed target={}: {}", options_.name, error->message);
  }
}

void TargetSampler::set_connected(bool up, const std::string& reason) {
  if (connected_ == up) return;
  connected_ = up;
  fanout_.on_connection_state(up, model::SteadyClock::now(), reason);
}

void TargetSampler::count_missed(uint64_t ticks) {
  missed_total_ += ticks;
  if (ticks > 0) fanout_.on_missed_ticks(ticks);
}

void TargetSampler::log_tick() {
  ++ticks_since_line_;
  const auto now = model::SteadyClock::now();
  if (now - tick_line_at_ < kTickLineEvery) return;
  const auto active = std::count_if(snapshot_.backends.begin(), snapshot_.backends.end(),
                                    [](const auto& backend) { return backend.state == "active"; });
  target_sampler_log()->debug(
      "tick target={} source={} backends={} active={} snapshot_ms={:.3f} ticks={} "
      "missed_total={}",
      options_.name, to_string(in_use_), snapshot_.backends.size(), active,
      std::chrono::duration<double, std::milli>(snapshot_.query_duration).count(),
      ticks_since_line_, missed_total_);
  ticks_since_line_ = 0;
  tick_line_at_ = now;
}

asio::awaitable<void> TargetSampler::sleep_until(model::SteadyClock::time_point until) {
  timer_.expires_at(until);
  co_await timer_.async_wait(kAsTuple);
}

asio::awaitable<void> TargetSampler::run() {
  base::Backoff backoff;
  bool ever_connected = false;
  down_since_ = model::SteadyClock::now();
  while (state_ != SamplerState::kStopping) {
    state_ = SamplerState::kConnecting;
    auto error = co_await connect();
    if (state_ == SamplerState::kStopping) break;
    if (error) {
      session_.close();
      const auto delay = backoff.next();
      on_failed_attempt(*error, delay);
      state_ = SamplerState::kBackingOff;
      co_await sleep_until(model::SteadyClock::now() + delay);
      continue;
    }
    backoff.reset();
    on_connected(ever_connected);
    ever_connected = true;
    state_ = SamplerState::kSampling;
    lost_ = false;
    set_connected(true, "");
    co_await sample();
    set_connected(false, lost_ ? last_error_ : "sampler stopped");
    down_since_ = model::SteadyClock::now();
    if (state_ != SamplerState::kStopping) session_.close();  // stop(): see there
  }
}

asio::awaitable<CollectResult> TargetSampler::connect() {
  if (remote_) co_return co_await connect_remote();
  if (auto error = co_await session_.connect(options_.conninfo, options_.connect_timeout)) {
    co_return CollectorError{error->message, error->sqlstate, true};
  }
  server_version_ = session_.server_version();
  // JIT would only slow down these tiny queries.
  if (auto outcome = co_await session_.execute("SET jit = off"); !outcome.ok()) {
    co_return collector_error(*outcome.error, session_);
  }
  auto privileges = co_await session_.execute(
      "SELECT current_user, rolsuper OR pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')"
      " FROM pg_roles WHERE rolname = current_user");
  if (!privileges.ok()) co_return collector_error(*privileges.error, session_);
  if (!warned_privileges_ && PQntuples(privileges.result.get()) == 1 &&
      cell(privileges.result.get(), 0, 1) != "t") {
    const auto role = cell(privileges.result.get(), 0, 0);
    target_sampler_log()->warn(
        "role \"{}\" cannot see the wait events of other roles' sessions target={} HINT: Grant it "
        "the monitoring role: GRANT pg_monitor TO \"{}\";",
        role, options_.name, role);
    warned_privileges_ = true;
  }
  if (auto error = co_await prepare_source()) co_return error;
  delivered_ = false;
  for (auto& stage : stages_) {
    if (auto error = co_await stage->prepare(session_)) co_return error;
  }
  for (auto& entry : collectors_) {
    if (auto error = co_await entry.collector->prepare(session_)) co_return error;
  }
  co_return std::nullopt;
}

void TargetSampler::on_connected(bool reconnected) {
  if (reconnected) {
    const double gap_s =
        std::chrono::duration<double>(model::SteadyClock::now() - down_since_).count();
    // The ticks that fell into the gap were not sampled: count them as missed.
    if (model::takes_snapshots(in_use_)) {
      count_missed(static_cast<uint64_t>(gap_s * options_.hz));
    }
    target_sampler_log()->info("connection restored target={} gap_s={:.3f}", options_.name, gap_s);
  } else if (activity_) {
    target_sampler_log()->info(
        "sampling target={} source=activity hz={} server_version={} dsn=\"{}\"", options_.name,
        options_.hz, server_version_, mask_password(options_.conninfo));
  } else if (memory_) {
    target_sampler_log()->info(
        "sampling target={} source=memory hz={} server_version={} dsn=\"{}\" {} limits=\"{}\"",
        options_.name, options_.hz, server_version_, mask_password(options_.conninfo),
        memory_->attachment().description, model::sampler_source_limits(in_use_));
  } else if (in_use_ == model::SamplerSource::kTrace) {
    target_sampler_log()->info(
        "sampling target={} source=trace read_every_ms={} server_version={} dsn=\"{}\" {} "
        "limits=\"{}\"",
        options_.name, options_.wait_sampling_poll.count(), server_version_,
        mask_password(options_.conninfo), trace_source_->description(),
        model::sampler_source_limits(in_use_));
  } else {
    target_sampler_log()->info(
        "sampling target={} source={} period_ms={:g} server_version={} dsn=\"{}\" limits=\"{}\"",
        options_.name, to_string(in_use_), source_period_s() * 1000, server_version_,
        mask_password(options_.conninfo), model::sampler_source_limits(in_use_));
  }
  last_error_.clear();
}

void TargetSampler::connection_lost(const std::string& reason) {
  if (lost_ || state_ == SamplerState::kStopping) return;
  lost_ = true;
  timer_.cancel();
  target_sampler_log()->error("lost connection to target={}: {}", options_.name, reason);
  last_error_ = reason;
}

asio::awaitable<void> TargetSampler::sample() {
  using namespace asio::experimental::awaitable_operators;
  if (remote_) {
    co_await sample_remote();
  } else if (activity_) {
    co_await (sample_activity() || watch_snapshots());
  } else if (memory_) {
    co_await sample_memory();
  } else {
    co_await sample_wait_sampling();
  }
}

// Tick k's window is [start + k * period, start + (k + 1) * period). A snapshot starts at the
// beginning of its window, or later within it when the previous query ran long; a window that
// passes entirely while a query runs (or the process is not scheduled) is a missed tick. When
// the next tick is already due as a snapshot arrives, its query is sent before the snapshot is
// processed: the server answers it while the sinks work, and the time is still its send time.
asio::awaitable<void> TargetSampler::sample_activity() {
  const auto period = std::chrono::duration_cast<model::SteadyClock::duration>(
      std::chrono::duration<double>(1.0 / options_.hz));
  std::vector<model::SteadyClock::time_point> due;
  auto window = model::SteadyClock::now();
  for (const auto& entry : collectors_) due.push_back(window + entry.period);
  // Counts the windows that passed before `now` and moves to the one after now's.
  auto start_tick = [&](model::SteadyClock::time_point now) {
    if (const auto passed = (now - window) / period; passed > 0) {
      count_missed(static_cast<uint64_t>(passed));
      window += passed * period;
    }
    window += period;
    return send_snapshot();
  };
  bool in_flight = false;
  while (state_ == SamplerState::kSampling && !lost_) {
    if (!in_flight) {
      auto now = model::SteadyClock::now();
      // Between ticks: the target's collectors, on the same connection, one at a time.
      for (size_t index = 0; index < collectors_.size() && now < window; ++index) {
        if (due[index] > now) continue;
        due[index] = now + collectors_[index].period;
        CollectContext context{&session_, &fanout_, nullptr, delivered_ ? &snapshot_ : nullptr,
                               now};
        co_await collect_timed(*collectors_[index].collector, context);
        now = model::SteadyClock::now();
      }
      if (now < window) {
        co_await sleep_until(window);
        continue;
      }
      if (!(in_flight = start_tick(now))) continue;
    }
    const bool received = co_await receive_snapshot();
    in_flight = false;
    if (!received) continue;
    if (const auto now = model::SteadyClock::now();
        now >= window && state_ == SamplerState::kSampling && !lost_) {
      in_flight = start_tick(now);
    }
    co_await deliver_snapshot();
  }
  // A query sent ahead may still be on the connection: run() closes it.
}

// One timer for the whole connection, not one per query: it wakes when the query in flight
// would be 5 s old, and otherwise sets itself for 5 s after the one in flight then.
asio::awaitable<void> TargetSampler::watch_snapshots() {
  asio::steady_timer timer(executor_);
  while (state_ == SamplerState::kSampling && !lost_) {
    const auto now = model::SteadyClock::now();
    if (in_flight_ && now - in_flight_since_ >= kSnapshotTimeout) {
      connection_lost("snapshot query did not answer in 5 s");
      session_.close();
      co_return;
    }
    timer.expires_at((in_flight_ ? in_flight_since_ : now) + kSnapshotTimeout);
    if (auto [error] = co_await timer.async_wait(kAsTuple); error) co_return;
  }
}

bool TargetSampler::send_snapshot() {
  if (auto error = activity_->send(session_)) {
    connection_lost(error->message);
    return false;
  }
  in_flight_ = true;
  in_flight_since_ = model::SteadyClock::now();
  return true;
}

asio::awaitable<bool> TargetSampler::receive_snapshot() {
  CollectContext context{&session_, &fanout_, &snapshot_, nullptr, model::SteadyClock::now()};
  const auto error = co_await activity_->receive(context);
  in_flight_ = false;
  if (lost_) co_return false;  // the watchdog closed the connection
  fanout_.on_collector_status(activity_->name(), snapshot_.query_duration, !error.has_value());
  if (!error) co_return true;
  if (error->connection_lost) {
    connection_lost(error->message);
  } else if (error->message != last_error_) {
    target_sampler_log()->warn("snapshot query failed target={} sqlstate={}: {}", options_.name,
                               error->sqlstate, error->message);
    last_error_ = error->message;
  }
  co_return false;
}

asio::awaitable<void> TargetSampler::deliver_snapshot() {
  activity_->parse(snapshot_);
  co_await deliver_stages();
}

asio::awaitable<void> TargetSampler::deliver_stages() {
  CollectContext context{&session_, &fanout_, &snapshot_, nullptr, model::SteadyClock::now()};
  for (auto& stage : stages_) co_await collect_timed(*stage, context);
  // Once per row, after every stage: the sinks count by these keys.
  model::assign_keys(snapshot_);
  if (target_sampler_log()->should_log(spdlog::level::debug)) log_tick();
  fanout_.on_snapshot(snapshot_);
  delivered_ = true;
  sample_delivered_.notify();
}

asio::awaitable<void> TargetSampler::sample_wait_sampling() {
  std::vector<model::SteadyClock::time_point> due;
  for (const auto& entry : collectors_) due.push_back(model::SteadyClock::now() + entry.period);
  while (state_ == SamplerState::kSampling && !lost_) {
    const auto started = model::SteadyClock::now();
    CollectContext context{&session_, &fanout_, nullptr, nullptr, started};
    if (auto error = co_await collect_timed(*source_, context)) {
      if (error->connection_lost) {
        connection_lost(error->message);
        break;
      }
      target_sampler_log()->warn("{} read failed target={}: {}", source_->name(), options_.name,
                                 error->message);
    } else {
      sample_delivered_.notify();
    }
    // The traced source's processes, for the look-up of lock blockers and statement texts.
    const model::Snapshot* latest = nullptr;
    if (in_use_ == model::SamplerSource::kTrace) {
      trace_source_->latest_backends(snapshot_);
      snapshot_.taken_at_steady = started;
      latest = &snapshot_;
    }
    for (size_t index = 0; index < collectors_.size(); ++index) {
      if (due[index] > model::SteadyClock::now()) continue;
      due[index] += collectors_[index].period;
      CollectContext collector_context{&session_, &fanout_, nullptr, latest,
                                       model::SteadyClock::now()};
      co_await collect_timed(*collectors_[index].collector, collector_context);
    }
    co_await sleep_until(started + options_.wait_sampling_poll);
  }
}

}  // namespace pgwaitprof::collectors
