// The remote sampler over SSH (run --sampler-host ssh://[user@]host[:port]): this host starts
// `ssh -o BatchMode=yes [-p PORT] [user@]host PROGRAM __sample-remote` (the user's own ssh with
// its configuration, keys and known_hosts; BatchMode, so a missing key fails at once with ssh's
// reason) and speaks store/sample_wire.h's messages with the pgwaitprof there on ssh's stdin and
// stdout (base/frame_channel.h). The connection string, with its password, goes on the channel
// in the start message, never on a command line of either host. The clocks' offset is taken
// from the fastest of a few pings (the midpoint method) and refused beyond kMaxClockOffset.
// The ssh child is started with process.h's spawn (own process group, supervised by the
// watchdog), and killed and reaped on every path; closing its stdin ends the remote side.
#pragma once

#include <sys/types.h>

#include <asio/any_io_executor.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/async_event.h"
#include "base/frame_channel.h"
#include "collectors/remote_feed.h"
#include "config/sampler_host.h"
#include "daemon/engine/process.h"
#include "store/sample_wire.h"

namespace pgwaitprof::engine {

// Beyond this offset between the two hosts' clocks a run is refused: clocks that far apart are
// not kept in step (no NTP or chrony on one of them), so they also drift apart during a run,
// and the offset measured at its start would no longer place the server's samples on the load
// generator's timeline (a 1 s interval is the timeline's resolution).
inline constexpr std::chrono::milliseconds kMaxClockOffset{1000};
// Pings whose fastest round trip gives the offset.
inline constexpr int kClockPings = 5;

struct RemoteSamplerOptions {
  config::SamplerHost host;
  // The program on the remote host, run by the remote user's login shell: "pgwaitprof" on its
  // PATH unless named (--sampler-program).
  std::string program = "pgwaitprof";
  // The ssh client and options of our own before the destination: $PGWAITPROF_SSH_COMMAND
  // split at spaces (an ssh with -F CONFIG, say), else "ssh".
  std::vector<std::string> ssh_command = {"ssh"};
  std::chrono::seconds connect_timeout{10};
};

class SshFeed;
// The feed of `sampler_host` (ssh://[user@]host[:port], already checked) and the pgwaitprof
// there, with ssh_command_from_environment(); none for "". For `run`, `matrix` and a daemon
// target's sampler_host alike (a run's CPU profile is begun on the channel when the run opens
// its collector).
std::unique_ptr<SshFeed> make_ssh_feed(const std::string& sampler_host, const std::string& program,
                                       asio::any_io_executor executor);

// The password libpq on this host would send for `conninfo`: the string's own, PGPASSWORD, or
// the password file's (~/.pgpass, PGPASSFILE) for its first host, port, database and user; ""
// for none. libpq reads the file when a connection starts: one is started and dropped at once,
// before any authentication. The remote side gets it on the channel, as PGPASSWORD.
std::string libpq_password(const std::string& conninfo);

// ssh_command from $PGWAITPROF_SSH_COMMAND, or "ssh".
std::vector<std::string> ssh_command_from_environment();

// ssh's argv: no connection string, no password (they go on the channel).
std::vector<std::string> ssh_argv(const RemoteSamplerOptions& options);

// One ping: sent and received on this host's clock, answered on the remote one.
struct ClockPing {
  int64_t sent_us = 0;
  int64_t answered_us = 0;  // the remote clock
  int64_t received_us = 0;
};
struct ClockEstimate {
  std::chrono::microseconds offset{0};      // remote minus local
  std::chrono::microseconds round_trip{0};  // of the ping it comes from
};
// The midpoint of the fastest ping: its error is at most half that round trip.
ClockEstimate estimate_clock(const std::vector<ClockPing>& pings);

class SshFeed : public collectors::RemoteFeed {
 public:
  SshFeed(asio::any_io_executor executor, RemoteSamplerOptions options);
  // A child still running (open() succeeded and deliver() never ran) is killed and reaped.
  ~SshFeed() override;

  asio::awaitable<std::optional<collectors::CollectorError>> open(
      const collectors::SamplerOptions& options, model::SampleSink& intake) override;
  asio::awaitable<std::string> deliver(model::SampleSink& intake) override;
  void close() override;
  const model::SamplerHost& host() const override { return host_; }
  asio::awaitable<std::string> begin_cpu_profile(int hz) override;
  std::vector<model::CpuSampleBatch> take_cpu_batches() override;
  asio::awaitable<void> wait_cpu_batches(model::SteadyClock::time_point until,
                                         std::chrono::milliseconds timeout) override;
  void end_cpu_profile() override;

 private:
  // The hello, the pings, the start and the remote sampler's first connection; "" or why not.
  asio::awaitable<std::string> handshake(const collectors::SamplerOptions& options,
                                         model::SampleSink& intake);
  // The pings, the clocks' offset (refused beyond kMaxClockOffset) into clock_ and host_; "" or
  // why not ("-": the channel ended).
  asio::awaitable<std::string> set_clock(std::chrono::seconds timeout);
  asio::awaitable<std::optional<std::string>> read_frame(std::chrono::seconds timeout);
  // A message of the remote sampler's sinks or an error of its own; false at an error.
  bool on_message(const std::string& payload, model::SampleSink& intake, std::string& error);
  // The remote CPU profile's answer or batch; false when the message is neither.
  bool on_cpu_message(const std::string& type, const nlohmann::json& body);
  // Asks the remote side for the CPU profile at cpu_hz_ (its answer: on_cpu_message); false
  // when the channel is closed.
  bool send_cpu_start();
  // The channel ended (or never opened): wakes a begin_cpu_profile() waiting for its answer.
  void set_ending();
  // Closes the child's stdin, reads the rest of its stderr (terminating it after kExitGrace)
  // and reaps it.
  asio::awaitable<int> end_child();
  asio::awaitable<void> read_stderr();
  // The last line ssh (or the remote shell) wrote on stderr, for a failure's message.
  std::string stderr_reason() const;
  std::string failure(const std::string& why) const;

  asio::any_io_executor executor_;
  RemoteSamplerOptions options_;
  std::optional<Child> child_;
  std::unique_ptr<base::FramedChannel> channel_;
  std::unique_ptr<asio::posix::stream_descriptor> stderr_;
  std::string stderr_text_;
  std::unique_ptr<base::AsyncEvent> ending_;  // the channel ended or close() was called
  bool stopping_ = false;                     // close() was called
  store::WireClock clock_;
  model::SamplerHost host_;
  int exit_code_ = -1;
  std::string cpu_refusal_;  // the remote side's latest answer to a "cpu_start"
  int cpu_starts_ = 0;       // "cpu_start" sent on this channel
  int cpu_answers_ = 0;      // and answered
  base::AsyncPulse cpu_answered_{executor_};
  int cpu_hz_ = 0;
  bool cpu_kept_ = false;  // between begin_cpu_profile() and end_cpu_profile()
  std::deque<model::CpuSampleBatch> cpu_batches_;
  model::SteadyClock::time_point cpu_drained_at_{};  // of the latest batch
  base::AsyncPulse cpu_arrived_{executor_};
};

}  // namespace pgwaitprof::engine
