// The run's CPU profile from the sampler host's batches, or this host's own.
#include "collectors/remote_cpu_profile.h"

#include <algorithm>
#include <vector>

#include "collectors/cpu_profile.h"

namespace pgwaitprof::collectors {

RemoteCpuProfileCollector::RemoteCpuProfileCollector(RemoteFeed& feed)
    : feed_(feed), began_(model::SteadyClock::now()) {}

RemoteCpuProfileCollector::~RemoteCpuProfileCollector() { feed_.end_cpu_profile(); }

asio::awaitable<CollectResult> RemoteCpuProfileCollector::collect(CollectContext& context) {
  if (context.last) co_await feed_.wait_cpu_batches(model::SteadyClock::now(), kLastWait);
  for (auto& batch : feed_.take_cpu_batches()) {
    std::erase_if(batch.samples,
                  [this](const model::CpuSample& sample) { return sample.at < began_; });
    if (context.sink != nullptr) context.sink->on_cpu_samples(batch);
  }
  co_return std::nullopt;
}

asio::awaitable<base::Expected<std::unique_ptr<Collector>>> open_run_cpu_profile(
    PgSession& session, TargetSampler& sampler, int hz) {
  using Result = base::Expected<std::unique_ptr<Collector>>;
  if (auto* feed = sampler.remote_feed()) {
    // Opened there now, for this run (or why not).
    auto refusal = co_await feed->begin_cpu_profile(hz);
    if (!refusal.empty()) co_return Result(base::Error{std::move(refusal)});
    co_return Result(std::unique_ptr<Collector>(new RemoteCpuProfileCollector(*feed)));
  }
  // The sampler's backend is pgwaitprof's, like the run's session (which open_cpu_profile adds).
  std::vector<pid_t> own_pids{sampler.backend_pid()};
  // Named, not returned from the co_await: GCC 12 destroys a temporary of a co_await
  // expression twice.
  auto opened = co_await open_cpu_profile(session, sampler.options().local, hz, own_pids);
  co_return opened;
}

}  // namespace pgwaitprof::collectors
