// The sampler's CPU against the kernel's.
#include "model/kernel_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/statistics.h"

namespace pgwaitprof::model {

bool KernelCheck::judged() const {
  return intervals >= kKernelCheckMinIntervals && std::isfinite(sampled_stderr);
}

bool KernelCheck::within() const {
  if (!judged()) return true;
  const double slack = kKernelCheckSlackAas + 2 * sampled_stderr;
  return sampled_cpu_aas >= lowest() - slack && sampled_cpu_aas <= highest() + slack;
}

KernelCheck make_kernel_check(std::span<const double> cpu_samples,
                              std::span<const double> snapshots, const KernelTime& kernel) {
  const auto sampled = estimate_ratio(cpu_samples, snapshots);
  return {sampled.mean, sampled.standard_error, kernel.on_cpu_aas(), kernel.runqueue_aas(),
          cpu_samples.size()};
}

std::optional<KernelCheck> kernel_check(const Run& run) {
  if (!takes_snapshots(run.sampler.source)) return std::nullopt;
  std::vector<double> cpu_samples;
  std::vector<double> snapshots;
  KernelTime kernel;
  for (const auto& slice : run.timeline) {
    // An interval whose server was read (the sampler's own backend always is) without client
    // backends had none running: their zero time over what the readings covered. The load
    // generator's times are read for remote servers too, and do not count.
    KernelTime clients;
    for (const char* group : {kSamplerBackend, kBackgroundProcesses, kClientBackends}) {
      if (const auto found = slice.kernel.find(group); found != slice.kernel.end()) {
        clients.covered = std::max(clients.covered, found->second.covered);
      }
    }
    if (const auto found = slice.kernel.find(kClientBackends); found != slice.kernel.end()) {
      clients = found->second;
    }
    if (clients.covered <= base::Seconds(0) || slice.profile.snapshots() == 0) continue;
    kernel.add(clients);
    uint64_t cpu = 0;
    for (const auto& [key, count] : slice.profile.counts()) {
      if (key.wait_event_type == kCpu && key.backend_type == "client backend") cpu += count;
    }
    cpu_samples.push_back(static_cast<double>(cpu));
    snapshots.push_back(static_cast<double>(slice.profile.snapshots()));
  }
  if (snapshots.empty() || kernel.covered <= base::Seconds(0)) return std::nullopt;
  return make_kernel_check(cpu_samples, snapshots, kernel);
}

std::optional<std::string> kernel_check_warning(const Run& run) {
  const auto check = kernel_check(run);
  if (!check) {
    if (run.sampler.source != SamplerSource::kActivity) return std::nullopt;
    return "the CPU share is a lower bound: the activity source queries pg_stat_activity, which "
           "needs a CPU to look, so on a busy host it looks when fewer backends run, and there is "
           "no kernel view to check it against (the server is not on this host)";
  }
  if (!check->judged() || check->within()) return std::nullopt;
  const bool low = check->sampled_cpu_aas < check->lowest();
  return fmt::format(
      "the sampled CPU of client backends ({:.2f} AAS) is {} the kernel's ({:.2f} on a CPU, "
      "{:.2f} waiting for one, /proc/<pid>/schedstat; expected {:.2f} to {:.2f}){}",
      check->sampled_cpu_aas, low ? "below" : "above", check->on_cpu_aas, check->runqueue_aas,
      check->lowest(), check->highest(),
      low && run.sampler.source == SamplerSource::kActivity
          ? ": pg_stat_activity needs a CPU to look and on a busy host looks when fewer backends "
            "run; the memory source (--source memory, the default for a local server) does not"
          : "");
}

}  // namespace pgwaitprof::model
