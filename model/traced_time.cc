// Traced wait statistics.
#include "model/traced_time.h"

#include <algorithm>
#include <cmath>

namespace pgwaitprof::model {

double traced_bucket_lower_s(int index) {
  if (index <= 0) return 0;
  const int power = kTracedFirstPower + (index - 1) / kTracedPerPower;
  const int quarter = (index - 1) % kTracedPerPower;
  return (std::ldexp(1.0, power) + quarter * std::ldexp(1.0, power - 2)) * 1e-9;
}

double traced_bucket_upper_s(int index) {
  if (index >= kTracedBuckets - 1) return INFINITY;
  if (index <= 0) return std::ldexp(1.0, kTracedFirstPower) * 1e-9;
  const int power = kTracedFirstPower + (index - 1) / kTracedPerPower;
  return traced_bucket_lower_s(index) + std::ldexp(1.0, power - 2) * 1e-9;
}

void TracedTime::merge(const TracedTime& other) {
  blocked_s += other.blocked_s;
  runqueue_s += other.runqueue_s;
  on_cpu_s += other.on_cpu_s;
  waits += other.waits;
  ended_blocked_s += other.ended_blocked_s;
  if (other.min_s > 0 && (min_s == 0 || other.min_s < min_s)) min_s = other.min_s;
  max_s = std::max(max_s, other.max_s);
  for (int index = 0; index < kTracedBuckets; ++index) histogram[index] += other.histogram[index];
}

double TracedTime::mean_s() const {
  return waits > 0 ? ended_blocked_s / static_cast<double>(waits) : 0;
}

double TracedTime::percentile_s(double fraction) const {
  uint64_t total = 0;
  for (const auto count : histogram) total += count;
  if (total == 0) return 0;
  const double rank = std::clamp(fraction, 0.0, 1.0) * static_cast<double>(total);
  double below = 0;
  for (int index = 0; index < kTracedBuckets; ++index) {
    const auto count = static_cast<double>(histogram[index]);
    if (count > 0 && below + count >= rank) {
      // The bucket's part that can hold waits: inside the known extremes.
      double lower = traced_bucket_lower_s(index);
      double upper = traced_bucket_upper_s(index);
      if (min_s > 0 && min_s >= lower && min_s < upper) lower = min_s;
      if (max_s > 0 && max_s >= lower && max_s < upper) upper = max_s;
      if (std::isinf(upper)) return lower;
      return lower + (upper - lower) * std::clamp((rank - below) / count, 0.0, 1.0);
    }
    below += count;
  }
  return traced_bucket_lower_s(kTracedBuckets - 1);
}

double TracedTime::longest_s() const {
  if (max_s > 0) return max_s;
  for (int index = kTracedBuckets - 1; index >= 0; --index) {
    if (histogram[index] > 0) {
      const double upper = traced_bucket_upper_s(index);
      return std::isinf(upper) ? traced_bucket_lower_s(index) : upper;
    }
  }
  return 0;
}

}  // namespace pgwaitprof::model
