// The sampler of one target: one connection, reconnected with capped exponential backoff; the
// activity source ticks at the configured rate with at most one snapshot query in flight (a
// tick that finds one running is counted as missed, never queued); the pg_wait_sampling
// source reads the extension's profile at a low rate. Samples go to every attached sink.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/steady_timer.hpp>

#include "collectors/pg_session.h"
#include "collectors/pg_wait_sampling.h"
#include "config/config.h"
#include "daemon/model/sample_sink.h"

namespace pgwaitprof::collectors {

struct SamplerOptions {
  std::string name = "default";
  std::string conninfo;  // "" = PG* environment variables
  double hz = 100;
  config::Source source = config::Source::kAuto;
  std::chrono::milliseconds wait_sampling_poll{1000};
  std::chrono::milliseconds connect_timeout{5000};
};

class TargetSampler {
 public:
  TargetSampler(asio::any_io_executor executor, SamplerOptions options);

  void add_sink(model::SampleSink* sink);
  void remove_sink(model::SampleSink* sink);

  // Samples until stop(); reconnects by itself.
  asio::awaitable<void> run();
  void stop();

  // Waits until a new sample has been delivered; false when `timeout` passed first.
  asio::awaitable<bool> wait_until_sampling(std::chrono::milliseconds timeout);

  const SamplerOptions& options() const { return options_; }
  bool up() const { return up_; }
  // "activity" or "pg_wait_sampling" once connected.
  const std::string& source() const { return source_; }
  double wait_sampling_period_s() const { return wait_sampling_period_s_; }
  int server_version() const { return server_version_; }
  const std::string& last_error() const { return last_error_; }

 private:
  asio::awaitable<std::optional<PgError>> set_up_session();
  asio::awaitable<void> sample_activity();
  asio::awaitable<void> take_snapshot();
  asio::awaitable<void> sample_wait_sampling();
  void connection_lost(const PgError& error);
  void set_up(bool up);
  void count_missed(uint64_t ticks);

  asio::any_io_executor executor_;
  SamplerOptions options_;
  PgSession session_;
  asio::steady_timer timer_;
  std::vector<model::SampleSink*> sinks_;
  std::string source_;
  double wait_sampling_period_s_ = 0;
  int server_version_ = 0;
  bool up_ = false;
  bool stopping_ = false;
  bool lost_ = false;
  bool in_flight_ = false;
  model::SteadyClock::time_point in_flight_since_{};
  bool warned_privileges_ = false;
  uint64_t samples_delivered_ = 0;
  std::string last_error_;
  model::SteadyClock::time_point down_since_{};
};

}  // namespace pgwaitprof::collectors
