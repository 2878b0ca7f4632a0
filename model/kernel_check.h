// The kernel check of a sampler (DESIGN.md, "the witness"): where the server runs on this host,
// the CPU the sampler saw its client backends use (no wait event, running) against the kernel's
// own accounting of the same backends over the same intervals (/proc/<pid>/schedstat: time on a
// CPU and time runnable on the run queue). A sampled backend without a wait event is on a CPU
// or queued for one, and a backend on a CPU may have a wait event set (an I/O wait copying in
// the kernel), so a true sampler lands between 0.85 x on-CPU and 1.1 x (on-CPU + run queue).
// pg_stat_activity needs a CPU to look: on a busy host it looks when fewer backends run and
// falls below the band (issue 39: 0.51-0.56 sampled against 0.97-1.00 on-CPU at pgbench -c 2).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/run.h"

namespace pgwaitprof::model {

inline constexpr double kKernelCheckLowest = 0.85;   // of the kernel's on-CPU AAS
inline constexpr double kKernelCheckHighest = 1.10;  // of on-CPU + run-queue AAS
// The band is widened by what sampling cannot resolve: two standard errors of the sampled AAS
// (batch means over the intervals) and 0.02 AAS (an idle server's stray milliseconds of CPU,
// which few samples cannot see). With fewer intervals there is no verdict.
inline constexpr double kKernelCheckSlackAas = 0.02;
inline constexpr size_t kKernelCheckMinIntervals = 5;

struct KernelCheck {
  double sampled_cpu_aas = 0;  // client backends sampled as CPU
  double sampled_stderr = 0;   // its standard error (batch means); NaN when not estimable
  double on_cpu_aas = 0;       // the kernel: client backends on a CPU
  double runqueue_aas = 0;     // the kernel: client backends runnable, waiting for a CPU
  size_t intervals = 0;        // timeline intervals (or kernel readings) it covers
  double lowest() const { return kKernelCheckLowest * on_cpu_aas; }
  double highest() const { return kKernelCheckHighest * (on_cpu_aas + runqueue_aas); }
  bool judged() const;
  // Inside the band, give or take the slack; true when not judged.
  bool within() const;
};

// From per-interval counts of client backends sampled as CPU and snapshots, and the kernel's
// times of client backends over the same intervals.
KernelCheck make_kernel_check(std::span<const double> cpu_samples,
                              std::span<const double> snapshots, const KernelTime& kernel);

// Over the timeline intervals whose client backends' kernel times were read; none when none
// were (a remote server, --local false) or the source takes no snapshots (pg_wait_sampling).
std::optional<KernelCheck> kernel_check(const Run& run);

// The report's warning when the check fails, and for a source that has no check, what its CPU
// share is worth; none when there is nothing to say.
std::optional<std::string> kernel_check_warning(const Run& run);

}  // namespace pgwaitprof::model
