// Stall detection and the profile's warnings.
#include "model/run_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "model/kernel_check.h"

namespace pgwaitprof::model {
namespace {

bool is_client_load(const WaitKey& key) {
  return key.backend_type == "client backend" && !is_idle(key);
}

bool has_client_load(const Profile& profile) {
  return std::any_of(profile.counts().begin(), profile.counts().end(), [](const auto& entry) {
    return entry.second > 0 && is_client_load(entry.first);
  });
}

}  // namespace

namespace {

// The worst latency of `slice`'s transactions into `worst` (NaN: none yet).
void keep_worst_latency(const TimelineSlice& slice, base::Milliseconds& worst) {
  if (!slice.latency || !std::isfinite(slice.latency->max.count())) return;
  worst = std::isfinite(worst.count()) ? std::max(worst, slice.latency->max) : slice.latency->max;
}

// One stall as its intervals are added; finish() fills in its waits, background and blocker.
class StallBuilder {
 public:
  StallBuilder(const TimelineSlice& first, double median, double steady) {
    stall_.start = first.start;
    stall_.median_tps = median;
    stall_.steady_tps = steady;
  }
  void add(const TimelineSlice& slice) {
    stall_.duration = slice.start + slice.duration - stall_.start;
    waits_.merge(slice.profile);
    background_.merge(slice.background);
    if (!slice.lock_blocker.empty()) ++blockers_[slice.lock_blocker];
    tps_sum_ += slice.loadgen->tps;
    ++intervals_;
    keep_worst_latency(slice, stall_.max_latency);  // the worst transaction that ended in it
  }
  // Transactions stuck in a stall end just after it: the next interval holds its tail.
  void add_tail(const TimelineSlice& next) { keep_worst_latency(next, stall_.max_latency); }
  Stall finish() &&;

 private:
  Stall stall_;
  Profile waits_;                        // every backend's samples over the stall
  Background background_;                // what ran in the background during it
  std::map<std::string, int> blockers_;  // the intervals' dominant lock blockers
  double tps_sum_ = 0;
  int intervals_ = 0;
};

Stall StallBuilder::finish() && {
  stall_.tps = tps_sum_ / intervals_;
  const double snapshots = static_cast<double>(std::max<uint64_t>(waits_.snapshots(), 1));
  // The client backends' waits; the same display name can appear under several states.
  std::map<std::string, uint64_t> merged;
  uint64_t clients = 0;
  for (const auto& [key, count] : waits_.counts()) {
    if (!is_client_load(key)) continue;
    clients += count;
    merged[display_name(key)] += count;
  }
  for (const auto& [name, count] : merged) {
    stall_.waits.push_back({name, static_cast<double>(count) / snapshots});
  }
  std::sort(stall_.waits.begin(), stall_.waits.end(),
            [](const StallWait& a, const StallWait& b) { return a.backends > b.backends; });
  if (stall_.waits.size() > 3) stall_.waits.resize(3);
  stall_.client_backends = static_cast<double>(clients) / snapshots;
  stall_.background = background_.flags();
  if (!blockers_.empty() && !stall_.waits.empty() &&
      stall_.waits.front().wait.starts_with("Lock |")) {
    stall_.blocker = std::max_element(blockers_.begin(), blockers_.end(), [](auto& a, auto& b) {
                       return a.second < b.second;
                     })->first;
  }
  return std::move(stall_);
}

}  // namespace

double steady_tps(std::vector<double> tps) {
  if (tps.empty()) return 0;
  // The upper quartile: a stall over up to three quarters of the run leaves it at the level
  // the load ran at when nothing held it up, where the median falls to the stall's once the
  // stall covers half of the run.
  const auto at = tps.begin() + static_cast<long>((3 * tps.size()) / 4);
  std::nth_element(tps.begin(), at, tps.end());
  return *at;
}

std::vector<Stall> detect_stalls(const std::vector<TimelineSlice>& timeline, double fraction) {
  std::vector<double> tps;
  for (const auto& slice : timeline) {
    if (slice.loadgen && std::isfinite(slice.loadgen->tps)) tps.push_back(slice.loadgen->tps);
  }
  if (tps.size() < 3) return {};
  const double steady = steady_tps(tps);
  std::nth_element(tps.begin(), tps.begin() + static_cast<long>(tps.size() / 2), tps.end());
  const double median = tps[tps.size() / 2];

  std::vector<Stall> stalls;
  std::optional<StallBuilder> current;
  for (const auto& slice : timeline) {
    const bool measured = slice.loadgen && std::isfinite(slice.loadgen->tps);
    // Below a fifth of the steady level; or no transaction at all while client backends were
    // busy, which holds when a stall covers so much of the run that no steady level is left.
    const bool stalled = measured && (slice.loadgen->tps < fraction * steady ||
                                      (slice.loadgen->tps <= 0 && has_client_load(slice.profile)));
    if (stalled) {
      if (!current) current.emplace(slice, median, steady);
      current->add(slice);
    } else if (current) {
      current->add_tail(slice);
      stalls.push_back(std::move(*current).finish());
      current.reset();
    }
  }
  if (current) stalls.push_back(std::move(*current).finish());
  return stalls;
}

std::optional<std::string> missed_ticks_warning(const Run& run) {
  if (!takes_snapshots(run.sampler.source)) return std::nullopt;
  // Ticks of a time the sampler was disconnected are the outage's (its own warning), not a
  // sampler too slow for its rate.
  uint64_t outage_ticks = 0;
  for (const auto& outage : run.outages) outage_ticks += outage.missed_ticks;
  const uint64_t missed =
      run.sampler.missed_ticks - std::min(outage_ticks, run.sampler.missed_ticks);
  const uint64_t ticks = run.sampler.snapshots + missed;
  if (ticks == 0 || missed * 20 <= ticks) return std::nullopt;
  // Each source misses a tick for its own reason: the memory source runs no query.
  const std::string why =
      run.sampler.source == SamplerSource::kMemory
          ? fmt::format(
                "reading the server's memory fell behind the {:.0f} Hz period (the "
                "reader was not scheduled in time on a busy host, or a read took longer)",
                run.sampler.hz)
          : fmt::format("the snapshot query took longer than the {:.0f} Hz period", run.sampler.hz);
  return fmt::format("the sampler missed {} of {} ticks: {} (lower --hz)", missed, ticks, why);
}

std::vector<std::string> bottleneck_warnings(const Run& run, int loadgen_threads) {
  std::vector<std::string> warnings;
  int intervals = 0, saturated = 0, no_idle = 0;
  const double cores =
      std::max(1, std::min(loadgen_threads, std::max(1, run.environment.cpu_count)));
  for (const auto& slice : run.timeline) {
    if (!slice.cpu) continue;
    ++intervals;
    if (slice.cpu->loadgen_cores >= 0.9 * cores) ++saturated;
    if (slice.cpu->idle_pct + slice.cpu->iowait_pct < 5) ++no_idle;
  }
  // One busy second is noise; a fifth of the run is a pattern.
  if (intervals > 0 && saturated * 5 >= intervals) {
    warnings.push_back(fmt::format(
        "pgbench saturated its {} thread(s) in {} of {} intervals: Client | ClientRead is inflated "
        "by the client, not the server (give pgbench more -j threads or another host)",
        loadgen_threads, saturated, intervals));
  }
  if (intervals > 0 && no_idle * 5 >= intervals) {
    // Measured where the server runs on this host (schedstat), guessed elsewhere.
    const auto clients = run.kernel.find(kClientBackends);
    if (clients != run.kernel.end() && clients->second.covered > base::Seconds(0)) {
      warnings.push_back(fmt::format(
          "the host had no idle CPU in {} of {} intervals: client backends waited for a CPU "
          "{:.2f} AAS on average (measured from /proc), time their waits and the CPU row include",
          no_idle, intervals, clients->second.runqueue_aas()));
    } else {
      warnings.push_back(fmt::format(
          "the host had no idle CPU in {} of {} intervals: server and client competed for CPU, "
          "so waits include time spent runnable but not running",
          no_idle, intervals));
    }
  }
  if (auto missed = missed_ticks_warning(run)) warnings.push_back(std::move(*missed));
  if (run.sampler.hidden_backends > 0) {
    warnings.push_back(fmt::format(
        "{} backend(s) were hidden from the sampling role: grant it pg_monitor to see their waits",
        run.sampler.hidden_backends));
  }
  for (const auto& outage : run.outages) {
    warnings.push_back(fmt::format("the {} lost the target: {}",
                                   outage.connection == kRunConnection ? "run" : "sampler",
                                   outage.summary()));
  }
  if (const auto limits = sampler_source_limits(run.sampler.source); !limits.empty()) {
    warnings.push_back(std::string(limits));
  }
  if (auto check = kernel_check_warning(run)) warnings.push_back(std::move(*check));
  return warnings;
}

}  // namespace pgwaitprof::model
