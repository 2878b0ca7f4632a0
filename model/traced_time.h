// What the traced source (collectors/trace/) knows of a wait key beyond its time: the blocked,
// run-queue and on-CPU parts of it, the number of blocking waits and the histogram of their
// durations, and the statistics read from them (mean, percentiles, max). Exact, except the
// on-CPU part, which is the exact on-CPU time spread by in-kernel samples.
#pragma once

#include <array>
#include <cstdint>

namespace pgwaitprof::model {

// Log-linear buckets of wait durations: bucket 0 below 2^10 ns (about 1 us); then 4 buckets per
// power of two up to 2^36 ns (about 69 s): bucket 1 + 4 * (p - 10) + q holds
// [2^p + q * 2^(p-2), 2^p + (q + 1) * 2^(p-2)) ns; the last one everything longer. The BPF
// programs fill the same buckets (collectors/trace/trace_shared.h, checked at compile time).
inline constexpr int kTracedFirstPower = 10;
inline constexpr int kTracedLastPower = 35;
inline constexpr int kTracedPerPower = 4;
inline constexpr int kTracedBuckets =
    2 + (kTracedLastPower - kTracedFirstPower + 1) * kTracedPerPower;

// Bucket `index`'s bounds in seconds: [lower, upper); the last upper is infinite.
double traced_bucket_lower_s(int index);
double traced_bucket_upper_s(int index);

struct TracedTime {
  double blocked_s = 0;   // switched out, not runnable, until woken: exact
  double runqueue_s = 0;  // runnable and not on a CPU, with this wait event still set: exact
  double on_cpu_s = 0;    // on a CPU with this wait event: sampled share of the exact time
  uint64_t waits = 0;     // blocking waits (ended by a wake-up): exact
  // The blocked time of those `waits`: blocked_s without the part of a wait still in progress
  // at the read (charged to blocked_s as it goes, counted in `waits` when it ends). What the
  // waits' mean and the histogram's sum are of.
  double ended_blocked_s = 0;
  // The shortest and longest blocking wait where known exactly (0: not known; the histogram
  // bounds them).
  double min_s = 0;
  double max_s = 0;
  std::array<uint64_t, kTracedBuckets> histogram{};  // of the blocking waits' durations

  void merge(const TracedTime& other);
  double time_s() const { return blocked_s + runqueue_s + on_cpu_s; }
  // The blocking waits' mean (their blocked time / waits), 0 without waits.
  double mean_s() const;
  // The duration below which `fraction` of the blocking waits ended, interpolated inside its
  // bucket and kept between the known shortest and longest; 0 without waits.
  double percentile_s(double fraction) const;
  // The longest wait: exact where known, else the upper bound of its bucket.
  double longest_s() const;
};

}  // namespace pgwaitprof::model
