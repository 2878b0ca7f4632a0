// A fixed-size log-linear (HdrHistogram-style) histogram of latencies in microseconds, and the
// per-interval / per-run latency summaries made from it. Memory is a constant 14 KB per
// histogram, whatever the number of values recorded, so a run's latency percentiles cost the
// same for 3 thousand or 30 million transactions.
#pragma once

#include <array>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/time.h"

namespace pgwaitprof::model {

// Fractional microseconds: percentiles and means are not whole microseconds.
using MicrosecondsF = std::chrono::duration<double, std::micro>;

// The rank (1-based) of the q-th percentile among n values by the nearest-rank definition:
// the smallest rank r with r >= q/100 * n, at least 1. So q = 0 is the minimum, q = 100 the
// maximum, and p50 of {1,2,3,4} is 2 (no interpolation). q is clamped to [0, 100]; n = 0 gives 0.
// A product within 1e-12 (relative) above an integer counts as that integer, so that
// 99.9 * 1000 / 100 is rank 999 despite binary floating point.
std::uint64_t nearest_rank(double q, std::uint64_t n);

// Values are bucketed by their highest set bit (the octave) and the next 6 bits (64 linear
// sub-buckets per octave); values below 128 us each have their own bucket, as in HdrHistogram
// with 2 significant digits. A bucket [L, L + w) of an octave >= 128 us has w <= L / 64, and a
// percentile is reported as the middle of its bucket, clamped to the exact [min, max], so:
//
//   |reported - exact| / exact <= 1/128 (0.79 %) for every percentile, exact values < 128 us.
//
// "exact" is the nearest-rank percentile of the recorded values (see nearest_rank). The bound
// holds for values up to max_trackable() (2^32 - 1 us, 71.6 minutes); larger values are counted
// in the top bucket and still reported exactly by max().
class LatencyHistogram {
 public:
  // Adds count values equal to value (negative values count as 0). No allocation, no
  // floating point: a count-leading-zeros, two shifts and an add.
  void record(std::chrono::microseconds value, std::uint64_t count = 1) noexcept {
    const std::uint64_t value_us =
        value.count() < 0 ? 0 : static_cast<std::uint64_t>(value.count());
    if (count == 0) return;
    counts_[bucket_index(value_us)] += count;
    total_ += count;
    sum_us_ += value_us * count;
    if (value_us < min_us_) min_us_ = value_us;
    if (value_us > max_us_) max_us_ = value_us;
  }

  // Adds every value recorded in other: the result equals recording both sets into one.
  void merge(const LatencyHistogram& other) noexcept;
  // Forgets every value (the histogram can be reused for the next interval).
  void reset() noexcept;

  std::uint64_t count() const noexcept { return total_; }
  bool empty() const noexcept { return total_ == 0; }
  // Exact smallest and largest value recorded; zero when empty.
  std::chrono::microseconds min() const noexcept;
  std::chrono::microseconds max() const noexcept;
  // Exact arithmetic mean of the values recorded; zero when empty.
  MicrosecondsF mean() const noexcept;
  // The q-th percentile (q in [0, 100], nearest rank) within the bound above; zero when empty.
  // q = 0 and q = 100 return min() and max() exactly.
  MicrosecondsF percentile(double q) const noexcept;

  // Memory held, in bytes: constant (no heap), whatever count() is.
  static constexpr std::size_t bytes() noexcept { return sizeof(LatencyHistogram); }
  static constexpr std::chrono::microseconds max_trackable() noexcept {
    return std::chrono::microseconds((std::int64_t{1} << kTrackableBits) - 1);
  }
  // Upper bound of |reported - exact| / exact of any percentile (see the class comment).
  static constexpr double relative_error_bound() noexcept {
    return 1.0 / static_cast<double>(2 * kSubBucketHalfCount);
  }

 private:
  static constexpr int kSubBucketHalfBits = 6;  // 64 sub-buckets per octave: 1/128 error bound
  static constexpr std::uint64_t kSubBucketHalfCount = std::uint64_t{1} << kSubBucketHalfBits;
  static constexpr std::uint64_t kSubBucketMask = (kSubBucketHalfCount << 1) - 1;  // 127
  static constexpr int kTrackableBits = 32;
  // Octaves above the linear [0, 128) range: 128 << 25 = 2^32.
  static constexpr int kOctaves = kTrackableBits - (kSubBucketHalfBits + 1);
  static constexpr std::size_t kBuckets = (kOctaves + 2) * kSubBucketHalfCount;  // 1728

  // The HdrHistogram index: octave 0 is [0, 128) in steps of 1; octave k >= 1 is
  // [64 << k, 128 << k) in steps of 1 << k, stored after octave k - 1.
  static std::size_t bucket_index(std::uint64_t value_us) noexcept {
    if (value_us > static_cast<std::uint64_t>(max_trackable().count())) {
      value_us = static_cast<std::uint64_t>(max_trackable().count());
    }
    const int octave = 63 - std::countl_zero(value_us | kSubBucketMask) - kSubBucketHalfBits;
    const std::uint64_t sub_bucket = value_us >> octave;  // in [64, 128) for octave >= 1
    return (static_cast<std::size_t>(octave) << kSubBucketHalfBits) + sub_bucket;
  }
  // The middle of the integer values [low, low + width) that bucket index holds.
  static double bucket_middle(std::size_t index) noexcept;

  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t total_ = 0;
  std::uint64_t sum_us_ = 0;
  std::uint64_t min_us_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_us_ = 0;
};

// What a report shows of one interval or of a whole run. Latencies in milliseconds; NaN when
// no transaction completed (a stall shows as count 0, not as a missing interval).
struct LatencySummary {
  std::uint64_t count = 0;    // completed transactions (logged ones: see sampling_rate)
  std::uint64_t failed = 0;   // serialization, deadlock or other failures (PG 15+)
  std::uint64_t skipped = 0;  // too late under --rate with --latency-limit
  std::uint64_t retries = 0;  // retries summed over transactions (--max-tries other than 1)
  base::Milliseconds min{std::numeric_limits<double>::quiet_NaN()};
  base::Milliseconds mean{std::numeric_limits<double>::quiet_NaN()};
  base::Milliseconds p50{std::numeric_limits<double>::quiet_NaN()};
  base::Milliseconds p95{std::numeric_limits<double>::quiet_NaN()};
  base::Milliseconds p99{std::numeric_limits<double>::quiet_NaN()};
  base::Milliseconds max{std::numeric_limits<double>::quiet_NaN()};
};

// Fills the latency fields of a summary from a histogram (counts of failures are the caller's).
LatencySummary summarize(const LatencyHistogram& histogram);

// Per-transaction latencies of one run, per interval and overall.
struct LatencyTimeline {
  std::chrono::system_clock::time_point start;  // intervals are aligned to it
  std::chrono::microseconds interval{std::chrono::seconds(1)};
  // intervals[i] holds the transactions that ended in [start + i*interval, start + (i+1)*interval),
  // from 0 to the last interval with a transaction; empty intervals are present with count 0.
  std::vector<LatencySummary> intervals;
  LatencySummary run;  // every parsed transaction, including those outside the intervals
  // pgbench --sampling-rate: counts are of logged transactions only, never scaled; percentiles
  // of a random sample stay unbiased estimates of the run's.
  double sampling_rate = 1.0;
  std::uint64_t lines = 0;             // lines read (complete or not)
  std::uint64_t unparsable_lines = 0;  // garbage, wrong number of fields, a truncated last line
  // Transactions counted in `run` but in no interval: ended before start, past max_intervals,
  // or after their interval was closed (a file out of time order: not seen with pgbench 14+,
  // whose timestamps come from a monotonic clock).
  std::uint64_t outside_intervals = 0;
  std::vector<std::string> errors;  // files that could not be read, one line each
};

}  // namespace pgwaitprof::model
