// The sampler's CPU against the kernel's.
#include "model/kernel_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/statistics.h"

namespace pgwaitprof::model {

bool KernelCheck::judged() const {
  return intervals >= kKernelCheckMinIntervals && std::isfinite(sampled_stderr) &&
         (!sampled_running_aas || std::isfinite(running_stderr));
}

bool KernelCheck::within() const {
  if (!judged()) return true;
  const double stderr_of_compared = sampled_running_aas ? running_stderr : sampled_stderr;
  const double slack = kKernelCheckSlackAas + 2 * stderr_of_compared;
  const double compared = compared_aas();
  const bool cpu_not_above =
      sampled_cpu_aas <= highest() + kKernelCheckSlackAas + 2 * sampled_stderr;
  return compared >= lowest() - slack && compared <= highest() + slack && cpu_not_above;
}

void SampledCounts::add(uint64_t cpu, uint64_t taken, const RunningSamples& states) {
  cpu_samples.push_back(static_cast<double>(cpu));
  snapshots.push_back(static_cast<double>(taken));
  if (states.snapshots == 0) return;
  running.push_back(static_cast<double>(states.running));
  state_snapshots.push_back(static_cast<double>(states.snapshots));
}

KernelCheck make_kernel_check(const SampledCounts& counts, const KernelTime& clients,
                              base::Seconds exited) {
  const auto sampled = estimate_ratio(counts.cpu_samples, counts.snapshots);
  KernelCheck check;
  check.sampled_cpu_aas = sampled.mean;
  check.sampled_stderr = sampled.standard_error;
  check.on_cpu_aas = clients.on_cpu_aas();
  check.runqueue_aas = clients.runqueue_aas();
  check.exited_aas = clients.covered > base::Seconds(0) ? exited / clients.covered : 0;
  check.intervals = counts.cpu_samples.size();
  // Running samples only where most intervals read states (a source that started reading them
  // mid-window is judged on CPU until then).
  if (!counts.state_snapshots.empty() &&
      2 * counts.state_snapshots.size() >= counts.cpu_samples.size()) {
    const auto running = estimate_ratio(counts.running, counts.state_snapshots);
    check.sampled_running_aas = running.mean;
    check.running_stderr = running.standard_error;
  }
  return check;
}

std::optional<KernelCheck> kernel_check(const Run& run) {
  if (!takes_snapshots(run.sampler.source)) return std::nullopt;
  SampledCounts counts;
  KernelTime kernel;
  base::Seconds exited{0};
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
    // Their time on a CPU, and on the run queue as estimated (collectors/kernel.cc).
    if (const auto found = slice.kernel.find(kExitedProcesses); found != slice.kernel.end()) {
      exited += found->second.on_cpu + found->second.runqueue;
    }
    uint64_t cpu = 0;
    for (const auto& [key, count] : slice.profile.counts()) {
      if (key.wait_event_type == kCpu && key.backend_type == "client backend") cpu += count;
    }
    counts.add(cpu, slice.profile.snapshots(), slice.running);
  }
  if (counts.snapshots.empty() || kernel.covered <= base::Seconds(0)) return std::nullopt;
  return make_kernel_check(counts, kernel, exited);
}

bool trace_witness_judged(const TraceWitness& witness) {
  return witness.kernel_s() >= kTraceWitnessLeastS;
}

bool trace_witness_within(const TraceWitness& witness) {
  if (!trace_witness_judged(witness)) return true;
  return std::abs(witness.traced_s() - witness.kernel_s()) <=
         kTraceWitnessTolerance * witness.kernel_s() + kTraceWitnessSlackS;
}

double trace_witness_difference(const TraceWitness& witness) {
  return witness.kernel_s() > 0 ? witness.traced_s() / witness.kernel_s() - 1 : 0;
}

namespace {

std::optional<std::string> trace_witness_warning(const TraceWitness& witness) {
  if (trace_witness_within(witness)) return std::nullopt;
  return fmt::format(
      "the traced time of client backends ({:.3f} s on a CPU + {:.3f} s waiting for one) is "
      "{:+.1f} % off the kernel's own accounting of the same processes ({:.3f} s + {:.3f} s, "
      "schedstat; expected within {:.0f} %): the traced figures miss or double some switches",
      witness.on_cpu_s, witness.runqueue_s, 100 * trace_witness_difference(witness),
      witness.kernel_on_cpu_s, witness.kernel_runqueue_s, 100 * kTraceWitnessTolerance);
}

}  // namespace

std::optional<std::string> kernel_check_warning(const Run& run) {
  if (run.sampler.source == SamplerSource::kTrace) {
    return run.sampler.trace ? trace_witness_warning(run.sampler.trace->witness) : std::nullopt;
  }
  const auto check = kernel_check(run);
  if (!check) {
    if (run.sampler.source != SamplerSource::kActivity) return std::nullopt;
    return "the CPU share is a lower bound: the activity source queries pg_stat_activity, which "
           "needs a CPU to look, so on a busy host it looks when fewer backends run, and there is "
           "no kernel view to check it against (the server is not on this host)";
  }
  if (!check->judged() || check->within()) return std::nullopt;
  if (check->sampled_running_aas) {
    const bool low = *check->sampled_running_aas < check->lowest();
    return fmt::format(
        "the client backends sampled running ({:.2f} AAS in state R, with or without a wait "
        "event; {:.2f} AAS as CPU) are {} the kernel's ({:.2f} on a CPU, {:.2f} waiting for one, "
        "{:.2f} of processes that exited between readings, /proc; expected {:.2f} to {:.2f})",
        *check->sampled_running_aas, check->sampled_cpu_aas, low ? "below" : "above",
        check->on_cpu_aas, check->runqueue_aas, check->exited_aas, check->lowest(),
        check->highest());
  }
  const bool low = check->sampled_cpu_aas < check->lowest();
  return fmt::format(
      "the sampled CPU of client backends ({:.2f} AAS) is {} the kernel's ({:.2f} on a CPU, "
      "{:.2f} waiting for one, {:.2f} of processes that exited between readings, /proc; "
      "expected {:.2f} to {:.2f}){}",
      check->sampled_cpu_aas, low ? "below" : "above", check->on_cpu_aas, check->runqueue_aas,
      check->exited_aas, check->lowest(), check->highest(),
      low && run.sampler.source == SamplerSource::kActivity
          ? ": pg_stat_activity needs a CPU to look and on a busy host looks when fewer backends "
            "run; the memory source (--source memory, the default for a local server) does not"
          : "");
}

}  // namespace pgwaitprof::model
