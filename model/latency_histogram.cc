// The log-linear latency histogram's reading side (percentiles, merge) and the summaries made
// from it; the recording side is inline in the header because it is on the hot path.
#include "model/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace pgwaitprof::model {

std::uint64_t nearest_rank(double q, std::uint64_t n) {
  if (n == 0) return 0;
  if (!(q > 0.0)) return 1;  // also NaN
  if (q >= 100.0) return n;
  const double exact = q * static_cast<double>(n) / 100.0;
  const double floor = std::floor(exact);
  auto rank = static_cast<std::uint64_t>(floor);
  if (exact - floor > exact * 1e-12) ++rank;
  return std::clamp<std::uint64_t>(rank, 1, n);
}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  if (other.total_ == 0) return;
  for (std::size_t index = 0; index < kBuckets; ++index) counts_[index] += other.counts_[index];
  total_ += other.total_;
  sum_us_ += other.sum_us_;
  min_us_ = std::min(min_us_, other.min_us_);
  max_us_ = std::max(max_us_, other.max_us_);
}

void LatencyHistogram::reset() noexcept { *this = LatencyHistogram(); }

std::chrono::microseconds LatencyHistogram::min() const noexcept {
  return std::chrono::microseconds(total_ == 0 ? 0 : static_cast<std::int64_t>(min_us_));
}

std::chrono::microseconds LatencyHistogram::max() const noexcept {
  return std::chrono::microseconds(static_cast<std::int64_t>(max_us_));
}

MicrosecondsF LatencyHistogram::mean() const noexcept {
  if (total_ == 0) return MicrosecondsF(0.0);
  return MicrosecondsF(static_cast<double>(sum_us_) / static_cast<double>(total_));
}

double LatencyHistogram::bucket_middle(std::size_t index) noexcept {
  const int octave =
      index < 2 * kSubBucketHalfCount ? 0 : static_cast<int>(index >> kSubBucketHalfBits) - 1;
  const std::uint64_t sub_bucket =
      index - (static_cast<std::uint64_t>(octave) << kSubBucketHalfBits);
  const std::uint64_t low = sub_bucket << octave;
  const std::uint64_t width = std::uint64_t{1} << octave;
  return static_cast<double>(low) + static_cast<double>(width - 1) / 2.0;
}

MicrosecondsF LatencyHistogram::percentile(double q) const noexcept {
  if (total_ == 0) return MicrosecondsF(0.0);
  const std::uint64_t rank = nearest_rank(q, total_);
  if (rank <= 1 && !(q > 0.0)) return MicrosecondsF(static_cast<double>(min_us_));
  if (rank >= total_) return MicrosecondsF(static_cast<double>(max_us_));
  std::uint64_t seen = 0;
  for (std::size_t index = 0; index < kBuckets; ++index) {
    seen += counts_[index];
    if (seen >= rank) {
      // The exact value lies in this bucket and in [min, max]: clamping only brings the
      // middle closer to it.
      const double middle = bucket_middle(index);
      return MicrosecondsF(
          std::clamp(middle, static_cast<double>(min_us_), static_cast<double>(max_us_)));
    }
  }
  return MicrosecondsF(static_cast<double>(max_us_));
}

LatencySummary summarize(const LatencyHistogram& histogram) {
  LatencySummary summary;
  summary.count = histogram.count();
  if (histogram.empty()) return summary;
  const auto ms = [](auto duration) {
    return std::chrono::duration_cast<base::Milliseconds>(duration);
  };
  summary.min = ms(histogram.min());
  summary.mean = ms(histogram.mean());
  summary.p50 = ms(histogram.percentile(50));
  summary.p95 = ms(histogram.percentile(95));
  summary.p99 = ms(histogram.percentile(99));
  summary.max = ms(histogram.max());
  return summary;
}

}  // namespace pgwaitprof::model
