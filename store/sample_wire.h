// The messages of the remote sampler's channel (run --sampler-host): the hello that checks both
// ends speak the same protocol, the pings that estimate the clocks' offset, the start (with the
// connection string, which never goes on the remote command line), the remote host's
// description, and every call a sampler makes on its sinks (model/sample_sink.h), so that the
// samples of the server's host reach this host's recorder as a local sampler's do. Each message
// is one JSON object with a "type"; base/frame_channel.h frames them.
//
// Times cross as microseconds of the sender's system clock. A steady time of the sender is sent
// as its system time through one anchor (WireClock), and received into this host's steady clock
// through this host's anchor and the clocks' offset.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "collectors/sampler_options.h"
#include "model/run.h"
#include "model/sample_sink.h"

namespace pgwaitprof::store {

// Version 1: this file's messages without the CPU profile. Version 2: the CPU profile of the
// server's host, asked for by "cpu_start" (its rate) and ended by "cpu_stop" at any time after
// "ready", each start answered by "cpu_profile", then "cpu" batches until the stop. Both ends
// must speak the same one.
inline constexpr int kRemoteProtocolVersion = 2;

struct WireClock {
  model::SteadyClock::time_point steady = model::SteadyClock::now();
  model::SystemClock::time_point system = model::SystemClock::now();
  // The other end's clock minus this one's (zero on the sending end).
  std::chrono::microseconds offset{0};

  int64_t to_wire(model::SystemClock::time_point at) const;
  int64_t to_wire(model::SteadyClock::time_point at) const;
  // The sender's time as this host's.
  model::SystemClock::time_point system_from_wire(int64_t micros) const;
  model::SteadyClock::time_point steady_from_wire(int64_t micros) const;
};

struct Hello {
  int protocol = 0;
  std::string version;  // the program's (base::kVersion)
};
std::string hello_message(const Hello& hello);
// The hello in `payload`, or nullopt when it is none (not our program answering).
std::optional<Hello> parse_hello(const std::string& payload);

std::string ping_message(int64_t sent_us);
std::string pong_message(int64_t sent_us, int64_t at_us);

// What the remote end samples: the target's options (the connection string with its password,
// and `password`, the one libpq on this host would use: the string's own, PGPASSWORD or
// ~/.pgpass's, which parse_start puts in the remote end's environment as PGPASSWORD).
std::string start_message(const collectors::SamplerOptions& options, const std::string& password);
collectors::SamplerOptions parse_start(const nlohmann::json& message);

// A run's CPU profile of the server's host (--cpu-profile HZ): "cpu_start" opens it there at
// `hz` per CPU, "cpu_stop" closes it (nothing samples between runs).
std::string cpu_start_message(int hz);
int cpu_start_hz(const nlohmann::json& message);
std::string cpu_stop_message();

// The remote end's answer to each "cpu_start": "" when it has one, else why not (one line).
std::string cpu_profile_message(const std::string& refusal);
std::string cpu_profile_refusal(const nlohmann::json& message);
// A batch of the CPU profile, its frame and group names once per batch and the samples by
// index into them; `drained_at`: when its buffers were drained (it holds every sample taken
// before).
std::string cpu_message(const model::CpuSampleBatch& batch,
                        model::SteadyClock::time_point drained_at, const WireClock& clock);
// A "cpu" message's batch and drain time, on this host's clock.
model::CpuSampleBatch cpu_batch_from(const nlohmann::json& message, const WireClock& clock);
model::SteadyClock::time_point cpu_batch_drained_at(const nlohmann::json& message,
                                                    const WireClock& clock);

// The remote host's description (model::Environment's host fields).
std::string host_message(const model::Environment& host);
// A fatal error of the remote end, one line.
std::string error_message(const std::string& message);

// The message's type and its object; nullopt when the payload is not one of ours.
std::optional<std::pair<std::string, nlohmann::json>> parse_message(const std::string& payload);

// Encodes every sink call into a message for `send`.
class WireSink : public model::SampleSink {
 public:
  WireSink(WireClock clock, std::function<void(std::string)> send)
      : clock_(clock), send_(std::move(send)) {}
  void on_snapshot(const model::Snapshot& snapshot) override;
  void on_profile_delta(const model::Profile& delta,
                        model::SystemClock::time_point read_at) override;
  void on_missed_ticks(uint64_t ticks) override;
  void on_source(model::SamplerSource source, std::string_view reason) override;
  void on_connection_state(bool up, model::SteadyClock::time_point at,
                           std::string_view reason) override;
  void on_collector_status(std::string_view collector, base::Seconds duration,
                           bool success) override;
  void on_kernel_times(const model::KernelTimes& times) override;
  void on_lock_waits(const model::LockLookup& lookup) override;
  void on_statement_texts(const std::map<int64_t, std::string>& texts) override;

 private:
  WireClock clock_;
  std::function<void(std::string)> send_;
};

// Delivers a sink message to `sink` (its wait keys assigned, times on this host's clocks);
// false when `type` is not a sink call.
bool deliver_message(const std::string& type, const nlohmann::json& message, const WireClock& clock,
                     model::SampleSink& sink);

// The host message's fields into `host`.
void read_host(const nlohmann::json& message, model::SamplerHost& host);

}  // namespace pgwaitprof::store
