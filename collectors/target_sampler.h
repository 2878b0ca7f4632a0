// The sampler of one target: one libpq connection, its sampling source (snapshots from shared
// memory or pg_stat_activity at the configured rate, or pg_wait_sampling's profile at its poll
// interval; auto picks memory or activity at each connection) and the target's periodic
// collectors, delivering to every attached sink. At most one snapshot query is in
// flight: a tick whose whole period passes while one runs is counted as missed, never queued.
// A query for a tick already due goes out before the previous snapshot is processed.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/async_event.h"
#include "collectors/activity.h"
#include "collectors/collector.h"
#include "collectors/memory/memory_source.h"
#include "collectors/pg_session.h"
#include "collectors/registry.h"
#include "collectors/remote_feed.h"
#include "collectors/sampler_options.h"
#include "collectors/trace/trace_source.h"
#include "model/sample_sink.h"

namespace pgwaitprof::collectors {

// The sampler's states, in the order a healthy sampler passes through them:
//
// kConnecting: a connection attempt and the preparation of the source and collectors. Stop
//   during it ends the sampler without logging the aborted attempt as an error.
// kSampling: connected; the source samples on its ticks and the target's collectors on their
//   periods. A failed query on a live connection is logged and sampling goes on; a lost
//   connection (or a snapshot query silent for 5 s) ends the state, and sinks see "down".
// kBackingOff: after a failed attempt, a wait of 100 ms doubling up to 5 s before the next one;
//   one log line per distinct error, not per attempt.
// kStopping: stop() was called: every wait is cut short and run() returns.
enum class SamplerState { kConnecting, kSampling, kBackingOff, kStopping };

class TargetSampler {
 public:
  TargetSampler(asio::any_io_executor executor, SamplerOptions options);

  // The server's samples come from a sampler on its host (run --sampler-host) through `feed`,
  // which outlives this sampler: no source of its own, no collectors of its own.
  void set_remote_feed(RemoteFeed* feed) { remote_ = feed; }
  const RemoteFeed* remote_feed() const { return remote_; }
  RemoteFeed* remote_feed() { return remote_; }

  void add_sink(model::SampleSink* sink);
  void remove_sink(model::SampleSink* sink);

  // Samples until stop(); reconnects by itself. Never throws.
  asio::awaitable<void> run();
  // Cuts every wait short and asks the memory reader to end; run() then returns soon. The
  // session stays open until close_session() or the destructor: closing it wakes its server
  // backend to exit, and hundreds of backends exiting at once take the CPUs for seconds from
  // whatever the stopping process has left to do (DaemonApp::shutdown).
  void stop();
  void close_session() { session_.close(); }

  // Waits until a new sample has been delivered; false when `timeout` passed (or the sampler
  // stopped) first.
  asio::awaitable<bool> wait_for_sample(std::chrono::milliseconds timeout);
  // The traced source's time since its last read, read and delivered now: a run's last, partial
  // interval (the source reads once a second; a run shorter than that had none). Nothing for a
  // sampled source, whose samples are delivered as they are taken.
  asio::awaitable<void> read_traced_now();

  const SamplerOptions& options() const { return options_; }
  SamplerState state() const { return state_; }
  bool up() const { return state_ == SamplerState::kSampling; }
  // The source's own sampling period: 1/hz for activity, profile_period for pg_wait_sampling.
  double source_period_s() const;
  // The source in use on the current (or last) connection, never auto, and why where the choice
  // was the sampler's: "local server, read as root", "the server is on another host", ...
  model::SamplerSource source_in_use() const { return in_use_; }
  const std::string& source_reason() const { return reason_; }
  // The rate of the source in use: the traced source's in-kernel on-CPU samples a second (auto
  // may choose it at another rate than hz), else hz.
  double source_hz() const;
  int server_version() const { return server_version_; }
  const std::string& last_error() const { return last_error_; }
  // The source refused this target (CollectorError::refused): last_error() says why.
  bool refused() const { return refused_; }
  // Queries the sampler has sent to the target (snapshots, lock and statement look-ups): its
  // own transactions, which server-side throughput takes out.
  uint64_t own_statements() const { return session_.statements(); }
  // The snapshot delivered last (one object, refilled in place by each tick), or null before
  // the first one.
  const model::Snapshot* latest_snapshot() const { return delivered_ ? &snapshot_ : nullptr; }
  // The server pid of the sampler's connection (0 when not connected).
  int backend_pid() const { return session_.backend_pid(); }

 private:
  asio::awaitable<CollectResult> connect();
  // The source of this connection prepared: the one asked for, or with auto the traced source
  // where the server is local and the kernel lets this process trace it, else the memory source
  // where the server is local and readable, else activity.
  asio::awaitable<CollectResult> prepare_source();
  // Auto's first choice: the traced source prepared for the server of `postmaster` (0: not
  // known yet), or why not (refused, or the connection failed).
  asio::awaitable<CollectResult> prepare_traced(pid_t postmaster);
  void use_source(Collector* source, model::SamplerSource kind, std::string reason);
  asio::awaitable<void> sample();
  // With a remote feed (target_sampler_remote.cc): its opening instead of a connection, and
  // its delivery instead of a source's ticks.
  asio::awaitable<CollectResult> connect_remote();
  asio::awaitable<void> sample_remote();
  asio::awaitable<void> sample_activity();
  asio::awaitable<void> sample_wait_sampling();
  asio::awaitable<void> sample_memory();
  // The memory reader's wait (memory::MemorySource::wait) raced against the end of the idle
  // session: why the server ended it, or nothing when the reader woke first.
  asio::awaitable<std::optional<PgError>> idle_until_woken(model::SteadyClock::time_point until);
  // One snapshot in three steps, so the next query can go out before this one is processed.
  bool send_snapshot();
  // Ends sampling when a snapshot query has not answered in 5 s.
  asio::awaitable<void> watch_snapshots();
  asio::awaitable<bool> receive_snapshot();
  asio::awaitable<void> deliver_snapshot();
  // The snapshot stages, then the sinks, for the snapshot in snapshot_.
  asio::awaitable<void> deliver_stages();
  asio::awaitable<void> sleep_until(model::SteadyClock::time_point until);
  void on_connected(bool reconnected);
  void on_failed_attempt(const CollectorError& error, std::chrono::milliseconds retry_in);
  void connection_lost(const std::string& reason);
  void set_connected(bool up, const std::string& reason);
  void count_missed(uint64_t ticks);
  // log_level debug: a line per tick, at most one per kTickLineEvery per target (each says how
  // many ticks it stands for), so that 1 kHz does not flood the log.
  void log_tick();

  // Delivers to every sink attached now.
  class Fanout : public model::SampleSink {
   public:
    std::vector<model::SampleSink*> sinks;
    void on_snapshot(const model::Snapshot& snapshot) override;
    void on_profile_delta(const model::Profile& delta, model::SystemClock::time_point at) override;
    void on_missed_ticks(uint64_t ticks) override;
    void on_source(model::SamplerSource source, std::string_view reason) override;
    void on_connection_state(bool up, model::SteadyClock::time_point at,
                             std::string_view reason) override;
    void on_collector_status(std::string_view collector, base::Seconds duration,
                             bool success) override;
    void on_kernel_times(const model::KernelTimes& times) override;
    void on_lock_waits(const model::LockLookup& lookup) override;
    void on_statement_texts(const std::map<int64_t, std::string>& texts) override;
    void on_statement_delta(const model::StatementDelta& delta) override;
    void on_trace_counts(const model::TraceCounts& counts) override;
  };

  // What a remote feed delivers: to the sinks, as the sampler's own source would.
  class Intake : public model::SampleSink {
   public:
    explicit Intake(TargetSampler& sampler) : sampler_(sampler) {}
    void on_snapshot(const model::Snapshot& snapshot) override;
    void on_profile_delta(const model::Profile& delta, model::SystemClock::time_point at) override;
    void on_missed_ticks(uint64_t ticks) override { sampler_.count_missed(ticks); }
    void on_source(model::SamplerSource source, std::string_view reason) override;
    void on_connection_state(bool up, model::SteadyClock::time_point at,
                             std::string_view reason) override;
    void on_collector_status(std::string_view collector, base::Seconds duration,
                             bool success) override {
      sampler_.fanout_.on_collector_status(collector, duration, success);
    }
    void on_kernel_times(const model::KernelTimes& times) override {
      sampler_.fanout_.on_kernel_times(times);
    }
    void on_lock_waits(const model::LockLookup& lookup) override {
      sampler_.fanout_.on_lock_waits(lookup);
    }
    void on_statement_texts(const std::map<int64_t, std::string>& texts) override {
      sampler_.fanout_.on_statement_texts(texts);
    }

   private:
    TargetSampler& sampler_;
  };

  asio::any_io_executor executor_;
  SamplerOptions options_;
  PgSession session_;
  asio::steady_timer timer_;
  base::AsyncEvent stopped_;
  base::AsyncPulse sample_delivered_;
  Fanout fanout_;
  RemoteFeed* remote_ = nullptr;
  Intake intake_{*this};
  // The sources this target may use: the one asked for, or for auto trace, memory and activity.
  std::unique_ptr<memory::MemorySource> memory_source_;
  std::unique_ptr<ActivitySource> activity_source_;
  std::unique_ptr<Collector> wait_sampling_source_;
  std::unique_ptr<trace::TraceSource> trace_source_;
  Collector* source_ = nullptr;             // the one in use on this connection
  ActivitySource* activity_ = nullptr;      // source_, when it is the activity source
  memory::MemorySource* memory_ = nullptr;  // source_, when it is the memory source
  model::SamplerSource in_use_ = model::SamplerSource::kActivity;
  std::string reason_;
  std::string untraced_;  // why auto did not trace, as last logged
  std::vector<std::unique_ptr<Collector>> stages_;
  std::vector<ScheduledCollector> collectors_;
  model::Snapshot snapshot_;  // reused: its backends' storage survives from tick to tick
  bool delivered_ = false;    // snapshot_ holds a delivered snapshot (the target collectors')
  bool in_flight_ = false;    // a snapshot query has been sent and not yet answered
  model::SteadyClock::time_point in_flight_since_{};
  SamplerState state_ = SamplerState::kConnecting;
  bool connected_ = false;  // as last told to the sinks
  bool lost_ = false;       // the current connection is gone; leave kSampling
  bool warned_privileges_ = false;
  bool refused_ = false;
  int server_version_ = 0;
  std::string last_error_;
  model::SteadyClock::time_point down_since_{};
  uint64_t missed_total_ = 0;      // missed ticks on this sampler, for the debug tick lines
  uint64_t ticks_since_line_ = 0;  // snapshots delivered since the last debug tick line
  model::SteadyClock::time_point tick_line_at_{};
};

}  // namespace pgwaitprof::collectors
