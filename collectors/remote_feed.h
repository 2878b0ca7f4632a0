// A sampler on another host (run --sampler-host): what a TargetSampler drives instead of a
// source of its own when the server's samples come from the pgwaitprof on the server's host.
// The feed is opened at each connection of the sampler and delivers what the remote sampler's
// sinks got, on this host's clock, until its channel ends; the TargetSampler's state machine
// (outages, back-off, reconnection) and its sinks are the same as for a local source, so a run
// records a remote sampler as it records its own. daemon/engine/remote_sampler.h implements it
// over SSH.
#pragma once

#include <asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "collectors/collector.h"
#include "collectors/sampler_options.h"
#include "model/cpu_profile.h"
#include "model/run.h"
#include "model/sample_sink.h"

namespace pgwaitprof::collectors {

class RemoteFeed {
 public:
  virtual ~RemoteFeed() = default;
  // Starts the remote sampler of `options`' target; its first messages (the source it chose)
  // reach `intake` before this returns. A refusal (CollectorError::refused) ends the run at once
  // with its one line: the remote program missing or of another version, the host unreachable,
  // the clocks too far apart.
  virtual asio::awaitable<std::optional<CollectorError>> open(const SamplerOptions& options,
                                                              model::SampleSink& intake) = 0;
  // Delivers to `intake` until the channel ends (returns why) or close() is called.
  virtual asio::awaitable<std::string> deliver(model::SampleSink& intake) = 0;
  // Ends the channel: the remote side sees end of file and exits.
  virtual void close() = 0;
  // The remote host and the clocks, once open() succeeded.
  virtual const model::SamplerHost& host() const = 0;

  // A run's CPU profile of the server's host (--cpu-profile HZ): asks the remote side to open
  // it at `hz` and returns its answer, "" when it has one, else why not, naming the host. From
  // then to end_cpu_profile() (which closes it there: nothing samples between runs), the
  // batches the remote side sends are kept for take_cpu_batches(); at other times they are
  // dropped. One profile at a time.
  virtual asio::awaitable<std::string> begin_cpu_profile(int hz) = 0;
  virtual std::vector<model::CpuSampleBatch> take_cpu_batches() = 0;
  // Returns when the batches holding every sample taken before `until` have arrived, or after
  // `timeout` (a run's last collection: its last samples are on the way as it ends).
  virtual asio::awaitable<void> wait_cpu_batches(model::SteadyClock::time_point until,
                                                 std::chrono::milliseconds timeout) = 0;
  virtual void end_cpu_profile() = 0;
};

}  // namespace pgwaitprof::collectors
