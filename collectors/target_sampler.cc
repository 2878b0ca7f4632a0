// Connection lifecycle and tick loops of one target's sampler.
#include "collectors/target_sampler.h"

#include <algorithm>
#include <charconv>

#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>

#include "collectors/activity.h"
#include "config/logging.h"

namespace pgwaitprof::collectors {
namespace {

using namespace std::chrono_literals;
constexpr auto kAsTuple = asio::experimental::as_tuple(asio::use_awaitable);
constexpr auto kBackoffStart = 100ms;
constexpr auto kBackoffCap = 5000ms;
// A snapshot query that has not answered in this long is taken for a dead connection (a
// network partition can leave a socket open without any answer ever coming).
constexpr auto kSnapshotTimeout = 5000ms;
constexpr const char* kSnapshotStatement = "pgwaitprof_snapshot";
constexpr const char* kWaitSamplingStatement = "pgwaitprof_wait_sampling";

auto log() {
  static auto logger = config::component_logger("sampler");
  return logger;
}

double seconds_since(model::SteadyClock::time_point start) {
  return std::chrono::duration<double>(model::SteadyClock::now() - start).count();
}

}  // namespace

TargetSampler::TargetSampler(asio::any_io_executor executor, SamplerOptions options)
    : executor_(executor), options_(std::move(options)), session_(executor), timer_(executor) {}

void TargetSampler::add_sink(model::SampleSink* sink) {
  sinks_.push_back(sink);
  sink->on_connection_state(up_);
}

void TargetSampler::remove_sink(model::SampleSink* sink) {
  sinks_.erase(std::remove(sinks_.begin(), sinks_.end(), sink), sinks_.end());
}

void TargetSampler::stop() {
  stopping_ = true;
  timer_.cancel();
  // An in-flight query ends with an error as soon as its socket wait is cancelled.
  session_.close();
}

void TargetSampler::set_up(bool up) {
  if (up_ == up) return;
  up_ = up;
  for (auto* sink : sinks_) sink->on_connection_state(up);
}

void TargetSampler::count_missed(uint64_t ticks) {
  for (uint64_t tick = 0; tick < ticks; ++tick) {
    for (auto* sink : sinks_) sink->on_missed_tick();
  }
}

asio::awaitable<bool> TargetSampler::wait_until_sampling(std::chrono::milliseconds timeout) {
  // A fresh sample, not an old one: after a restart of the server the sampler may still be
  // reconnecting.
  const auto deadline = model::SteadyClock::now() + timeout;
  const uint64_t before = samples_delivered_;
  asio::steady_timer poll(executor_);
  while (samples_delivered_ == before && !stopping_ && model::SteadyClock::now() < deadline) {
    poll.expires_after(10ms);
    co_await poll.async_wait(kAsTuple);
  }
  co_return samples_delivered_ > before;
}

asio::awaitable<void> TargetSampler::run() {
  const auto target = mask_password(options_.conninfo);
  auto backoff = std::chrono::milliseconds(kBackoffStart);
  bool ever_connected = false;
  down_since_ = model::SteadyClock::now();
  while (!stopping_) {
    auto error = co_await session_.connect(options_.conninfo, options_.connect_timeout);
    if (!error) error = co_await set_up_session();
    if (error) {
      session_.close();
      // Log once per state change, not per attempt.
      if (error->message != last_error_) {
        log()->error("could not connect to \"{}\": {} target={} retry_in_ms={}", target,
                     error->message, options_.name, backoff.count());
        last_error_ = error->message;
      }
      timer_.expires_after(backoff);
      co_await timer_.async_wait(kAsTuple);
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, kBackoffCap);
      continue;
    }
    backoff = kBackoffStart;
    last_error_.clear();
    if (ever_connected) {
      const double gap_s = seconds_since(down_since_);
      // The ticks that fell into the gap were not sampled: count them as missed.
      if (source_ == "activity") count_missed(static_cast<uint64_t>(gap_s * options_.hz));
      log()->info("connection restored target={} gap_s={:.3f}", options_.name, gap_s);
    } else {
      log()->info("sampling target={} source={} hz={} server_version={} dsn=\"{}\"", options_.name,
                  source_, options_.hz, server_version_, target);
    }
    ever_connected = true;
    lost_ = false;
    set_up(true);
    if (source_ == "pg_wait_sampling") {
      co_await sample_wait_sampling();
    } else {
      co_await sample_activity();
    }
    set_up(false);
    down_since_ = model::SteadyClock::now();
    session_.close();
  }
  co_return;
}

asio::awaitable<std::optional<PgError>> TargetSampler::set_up_session() {
  server_version_ = session_.server_version();
  // JIT would only slow down these tiny queries.
  if (auto outcome = co_await session_.execute("SET jit = off"); !outcome.ok()) co_return outcome.error;

  auto privileges = co_await session_.execute(
      "SELECT current_user, rolsuper OR pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')"
      " FROM pg_roles WHERE rolname = current_user");
  if (!privileges.ok()) co_return privileges.error;
  if (!warned_privileges_ && PQntuples(privileges.result.get()) == 1 &&
      cell(privileges.result.get(), 0, 1) != "t") {
    const auto role = cell(privileges.result.get(), 0, 0);
    log()->warn(
        "role \"{}\" cannot see the wait events of other roles' sessions target={} HINT: Grant it "
        "the monitoring role: GRANT pg_monitor TO \"{}\";",
        role, options_.name, role);
    warned_privileges_ = true;
  }

  source_ = "activity";
  if (options_.source != config::Source::kActivity) {
    auto installed = co_await session_.execute(
        "SELECT count(*) FROM pg_extension WHERE extname = 'pg_wait_sampling'");
    if (!installed.ok()) co_return installed.error;
    const bool available = cell(installed.result.get(), 0, 0) != "0";
    if (available) {
      auto period = co_await session_.execute(kWaitSamplingPeriodQuery);
      if (period.ok()) {
        source_ = "pg_wait_sampling";
        wait_sampling_period_s_ = std::stod(cell(period.result.get(), 0, 0)) / 1000.0;
      } else if (options_.source == config::Source::kPgWaitSampling) {
        co_return period.error;
      }
    } else if (options_.source == config::Source::kPgWaitSampling) {
      co_return PgError{"extension \"pg_wait_sampling\" is not installed in this database", ""};
    }
  }
  if (source_ == "pg_wait_sampling") {
    co_return co_await session_.prepare(kWaitSamplingStatement, kWaitSamplingQuery);
  }
  co_return co_await session_.prepare(kSnapshotStatement, activity_query(server_version_));
}

void TargetSampler::connection_lost(const PgError& error) {
  if (lost_ || stopping_) return;
  lost_ = true;
  timer_.cancel();
  log()->error("lost connection to target={}: {}", options_.name, error.message);
  last_error_ = error.message;
}

asio::awaitable<void> TargetSampler::sample_activity() {
  const auto period = std::chrono::duration_cast<model::SteadyClock::duration>(
      std::chrono::duration<double>(1.0 / options_.hz));
  auto next = model::SteadyClock::now();
  while (!stopping_ && !lost_) {
    next += period;
    timer_.expires_at(next);
    co_await timer_.async_wait(kAsTuple);
    if (stopping_ || lost_) break;
    const auto late = model::SteadyClock::now() - next;
    if (late >= period) {
      // The process was not scheduled for whole periods: those ticks are missed, not made up.
      const auto behind = late / period;
      count_missed(static_cast<uint64_t>(behind));
      next += behind * period;
    }
    if (in_flight_) {
      count_missed(1);
      if (model::SteadyClock::now() - in_flight_since_ > kSnapshotTimeout) {
        connection_lost({"snapshot query did not answer in 5 s", ""});
        session_.close();  // cancels the query's socket wait: it ends with an error
      }
      continue;
    }
    in_flight_ = true;
    in_flight_since_ = model::SteadyClock::now();
    asio::co_spawn(executor_, take_snapshot(), [this](std::exception_ptr failure) {
      in_flight_ = false;
      if (failure) {
        try {
          std::rethrow_exception(failure);
        } catch (const std::exception& error) {
          connection_lost({error.what(), ""});
        }
      }
    });
  }
  // The in-flight query finishes (or fails on the closed socket) before the session goes.
  asio::steady_timer drain(executor_);
  while (in_flight_) {
    drain.expires_after(1ms);
    co_await drain.async_wait(kAsTuple);
  }
}

asio::awaitable<void> TargetSampler::take_snapshot() {
  model::Snapshot snapshot;
  snapshot.taken_at = model::SystemClock::now();
  snapshot.taken_at_steady = model::SteadyClock::now();
  auto outcome = co_await session_.execute_prepared(kSnapshotStatement);
  snapshot.query_duration = model::SteadyClock::now() - snapshot.taken_at_steady;
  const double duration_s = std::chrono::duration<double>(snapshot.query_duration).count();
  if (!outcome.ok()) {
    for (auto* sink : sinks_) sink->on_collector_status("activity", duration_s, false);
    if (!session_.connected()) {
      connection_lost(*outcome.error);
    } else {
      log()->warn("snapshot query failed target={} sqlstate={}: {}", options_.name,
                  outcome.error->sqlstate, outcome.error->message);
    }
    co_return;
  }
  const int hidden = parse_activity(outcome.result.get(), snapshot);
  ++samples_delivered_;
  for (auto* sink : sinks_) {
    sink->on_snapshot(snapshot);
    sink->on_hidden_backends(hidden);
    sink->on_collector_status("activity", duration_s, true);
  }
}

asio::awaitable<void> TargetSampler::sample_wait_sampling() {
  WaitSamplingDelta delta;
  auto previous_read = model::SteadyClock::now();
  bool first = true;
  while (!stopping_ && !lost_) {
    if (!first) {
      timer_.expires_after(options_.wait_sampling_poll);
      co_await timer_.async_wait(kAsTuple);
      if (stopping_ || lost_) break;
    }
    first = false;
    const auto started = model::SteadyClock::now();
    auto outcome = co_await session_.execute_prepared(kWaitSamplingStatement);
    const double duration_s = seconds_since(started);
    if (!outcome.ok()) {
      for (auto* sink : sinks_) sink->on_collector_status("pg_wait_sampling", duration_s, false);
      if (!session_.connected()) {
        connection_lost(*outcome.error);
      } else {
        log()->warn("pg_wait_sampling query failed target={}: {}", options_.name,
                    outcome.error->message);
      }
      continue;
    }
    std::vector<WaitSamplingRow> rows;
    const PGresult* result = outcome.result.get();
    for (int row = 0; row < PQntuples(result); ++row) {
      WaitSamplingRow parsed;
      parsed.pid = std::stoi(cell(result, row, 0));
      parsed.backend_type = cell(result, row, 1);
      parsed.event_type = cell(result, row, 2);
      parsed.event = cell(result, row, 3);
      parsed.query_id = std::stoll(cell(result, row, 4));
      parsed.count = std::stoull(cell(result, row, 5));
      rows.push_back(std::move(parsed));
    }
    const double elapsed_s = std::chrono::duration<double>(started - previous_read).count();
    previous_read = started;
    const auto periods = static_cast<uint64_t>(elapsed_s / wait_sampling_period_s_ + 0.5);
    auto profile = delta.update(rows, periods);
    for (auto* sink : sinks_) sink->on_collector_status("pg_wait_sampling", duration_s, true);
    if (!profile) continue;
    ++samples_delivered_;
    for (auto* sink : sinks_) sink->on_profile_delta(*profile, model::SystemClock::now());
  }
}

}  // namespace pgwaitprof::collectors
