// The sampler's CPU against the kernel's.
#include "model/kernel_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/statistics.h"

namespace pgwaitprof::model {

double KernelCheckMargin::slack() const {
  return kKernelCheckSlackAas +
         student_t_quantile(0.5 + kKernelCheckConfidence / 2, degrees_of_freedom) * standard_error;
}

bool KernelCheck::judged() const {
  return intervals >= kKernelCheckMinIntervals && below.estimated() && above.estimated() &&
         cpu_above.estimated();
}

bool KernelCheck::within() const {
  if (!judged()) return true;
  return below.mean >= -below.slack() && above.mean <= above.slack() &&
         cpu_above.mean <= cpu_above.slack();
}

void SampledCounts::add(uint64_t cpu, uint64_t taken, const RunningSamples& states,
                        const KernelTime& clients, base::Seconds exited) {
  intervals.push_back({static_cast<double>(cpu), static_cast<double>(taken),
                       static_cast<double>(states.running), static_cast<double>(states.snapshots),
                       clients, exited});
}

namespace {

// Sum over the intervals of d_i = sampled_i - factor x bound_i x weight_i, over the sum of the
// weights W, with the bound of each interval in AAS; its standard error as of independent
// intervals, sqrt(k / (k - 1) x sum (d_i - mean x weight_i)^2) / W. The pairing takes out what
// made the intervals depend on each other (the load's own course), and the few intervals of a
// run give no usable estimate of what is left: the batch means' correction for it
// (statistics.h) tripled the error of an 8 s run of the activity source whose first two
// seconds saw more of the CPU than the rest, and hid its bias (0.77 AAS against 1.31 on a CPU).
template <typename Sampled, typename Weight, typename Bound>
KernelCheckMargin margin(const std::vector<SampledCounts::Interval>& intervals, Sampled sampled,
                         Weight weight, double factor, Bound bound) {
  std::vector<double> differences, weights;
  for (const auto& interval : intervals) {
    if (weight(interval) <= 0) continue;
    differences.push_back(sampled(interval) - factor * bound(interval) * weight(interval));
    weights.push_back(weight(interval));
  }
  KernelCheckMargin margin;
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  if (total <= 0) return margin;
  margin.mean = std::accumulate(differences.begin(), differences.end(), 0.0) / total;
  const auto k = static_cast<double>(differences.size());
  if (k < 2) return margin;
  double squares = 0;
  for (size_t index = 0; index < differences.size(); ++index) {
    const double residual = differences[index] - margin.mean * weights[index];
    squares += residual * residual;
  }
  margin.standard_error = std::sqrt(k / (k - 1) * squares) / total;
  margin.degrees_of_freedom = k - 1;
  return margin;
}

}  // namespace

KernelCheck make_kernel_check(const SampledCounts& counts) {
  using Interval = SampledCounts::Interval;
  std::vector<double> cpu, snapshots, running, state_snapshots;
  KernelTime clients;
  base::Seconds exited{0};
  for (const auto& interval : counts.intervals) {
    cpu.push_back(interval.cpu);
    snapshots.push_back(interval.snapshots);
    if (interval.state_snapshots > 0) {
      running.push_back(interval.running);
      state_snapshots.push_back(interval.state_snapshots);
    }
    clients.add(interval.clients);
    exited += interval.exited;
  }
  const auto sampled = estimate_ratio(cpu, snapshots);
  KernelCheck check;
  check.sampled_cpu_aas = sampled.mean;
  check.sampled_stderr = sampled.standard_error;
  check.on_cpu_aas = clients.on_cpu_aas();
  check.runqueue_aas = clients.runqueue_aas();
  check.exited_aas = clients.covered > base::Seconds(0) ? exited / clients.covered : 0;
  check.intervals = counts.intervals.size();
  const auto on_cpu = [](const Interval& i) { return i.clients.on_cpu_aas(); };
  const auto runnable = [](const Interval& i) {
    return i.clients.on_cpu_aas() + i.clients.runqueue_aas();
  };
  const auto any = [](const Interval& i) {
    const double covered = i.clients.covered.count();
    return i.clients.on_cpu_aas() + i.clients.runqueue_aas() +
           (covered > 0 ? i.exited.count() / covered : 0);
  };
  const auto cpu_of = [](const Interval& i) { return i.cpu; };
  const auto snapshots_of = [](const Interval& i) { return i.snapshots; };
  check.cpu_above = margin(counts.intervals, cpu_of, snapshots_of, kKernelCheckHighest, any);
  // Running samples only where most intervals read states (a source that started reading them
  // mid-window is judged on CPU until then).
  if (!state_snapshots.empty() && 2 * state_snapshots.size() >= cpu.size()) {
    const auto estimate = estimate_ratio(running, state_snapshots);
    check.sampled_running_aas = estimate.mean;
    check.running_stderr = estimate.standard_error;
    const auto running_of = [](const Interval& i) { return i.running; };
    const auto states_of = [](const Interval& i) { return i.state_snapshots; };
    check.below = margin(counts.intervals, running_of, states_of, kKernelCheckLowest, runnable);
    check.above = margin(counts.intervals, running_of, states_of, kKernelCheckHighest, any);
  } else {
    check.below = margin(counts.intervals, cpu_of, snapshots_of, kKernelCheckLowest, on_cpu);
    check.above = check.cpu_above;
  }
  return check;
}

std::optional<KernelCheck> kernel_check(const Run& run) {
  if (!takes_snapshots(run.sampler.source)) return std::nullopt;
  SampledCounts counts;
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
    // Their time on a CPU, and on the run queue as estimated (collectors/kernel.cc).
    base::Seconds exited{0};
    if (const auto found = slice.kernel.find(kExitedProcesses); found != slice.kernel.end()) {
      exited = found->second.on_cpu + found->second.runqueue;
    }
    uint64_t cpu = 0;
    for (const auto& [key, count] : slice.profile.counts()) {
      if (key.wait_event_type == kCpu && key.backend_type == "client backend") cpu += count;
    }
    counts.add(cpu, slice.profile.snapshots(), slice.running, clients, exited);
  }
  if (counts.intervals.empty()) return std::nullopt;
  return make_kernel_check(counts);
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
