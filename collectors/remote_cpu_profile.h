// The CPU profile of a run whose sampler is on the server's host (run --sampler-host with
// --cpu-profile): the pgwaitprof there opens collectors/cpu_profile.h's collector on that host
// (its perf events, its binaries' symbols, its processes' backend types), drains and names its
// samples every CpuProfileCollector::kPeriod and sends the batches on the channel; this
// collector hands the ones its feed received to the run's sink, as the local collector hands
// its own. The remote side samples from the feed's begin_cpu_profile() (when the collector is
// opened) to its end_cpu_profile() (when it is destroyed), so a daemon's channel, which lives
// between runs, samples nothing between them; samples taken before the collector began are left
// out. Its last collection waits (kLastWait at most) for the batches of the samples taken until
// then, which are on the way.
#pragma once

#include <asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <string_view>

#include "base/expected.h"
#include "collectors/collector.h"
#include "collectors/remote_feed.h"
#include "collectors/target_sampler.h"

namespace pgwaitprof::collectors {

class RemoteCpuProfileCollector : public Collector {
 public:
  // `feed` outlives the collector, whose CPU profile it has begun.
  explicit RemoteCpuProfileCollector(RemoteFeed& feed);
  ~RemoteCpuProfileCollector() override;
  RemoteCpuProfileCollector(const RemoteCpuProfileCollector&) = delete;
  RemoteCpuProfileCollector& operator=(const RemoteCpuProfileCollector&) = delete;
  static constexpr std::chrono::milliseconds kLastWait{1000};
  std::string_view name() const override { return "cpu_profile"; }
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

 private:
  RemoteFeed& feed_;
  model::SteadyClock::time_point began_;
};

// The run's CPU profile at `hz` (--cpu-profile): the sampler host's when `sampler` has a remote
// feed (begun there, or why that host has none), else this host's (open_cpu_profile, on
// `session`, with the sampler's backend as pgwaitprof's own).
asio::awaitable<base::Expected<std::unique_ptr<Collector>>> open_run_cpu_profile(
    PgSession& session, TargetSampler& sampler, int hz);

}  // namespace pgwaitprof::collectors
