// Profile arithmetic.
#include "model/profile.h"

#include <algorithm>
#include <cmath>

namespace pgwaitprof::model {

void Profile::add_snapshot(const Snapshot& snapshot) {
  ++snapshots_;
  for (const auto& backend : snapshot.backends) {
    if (const WaitKey* key = key_of(backend)) count_key(counts_, counters_, key);
  }
}

void Profile::add(const WaitKey& key, uint64_t count) { counts_[key] += count; }

void Profile::merge(const Profile& other) {
  snapshots_ += other.snapshots_;
  for (const auto& [key, count] : other.counts_) counts_[key] += count;
  for (const auto& [key, traced] : other.traced_) traced_[key].merge(traced);
}

uint64_t Profile::total(bool include_idle) const {
  uint64_t total = 0;
  for (const auto& [key, count] : counts_) {
    if (include_idle || !is_idle(key)) total += count;
  }
  return total;
}

WaitStat make_stat(const WaitKey& key, uint64_t count, uint64_t total, uint64_t snapshots) {
  WaitStat stat;
  stat.key = key;
  stat.count = count;
  if (total > 0) stat.share = static_cast<double>(count) / static_cast<double>(total);
  if (snapshots > 0) stat.aas = static_cast<double>(count) / static_cast<double>(snapshots);
  return stat;
}

std::vector<WaitStat> Profile::stats(bool include_idle) const {
  const uint64_t all = total(include_idle);
  std::vector<WaitStat> result;
  for (const auto& [key, count] : counts_) {
    if (include_idle || !is_idle(key)) result.push_back(make_stat(key, count, all, snapshots_));
  }
  std::stable_sort(result.begin(), result.end(),
                   [](const WaitStat& a, const WaitStat& b) { return a.count < b.count; });
  return result;
}

std::map<std::string, uint64_t> Profile::by_wait_class() const {
  std::map<std::string, uint64_t> result;
  for (const auto& [key, count] : counts_) {
    if (!is_idle(key)) result[key.wait_event_type] += count;
  }
  return result;
}

Histogram::Histogram(std::vector<base::Seconds> bounds)
    : upper_bounds(std::move(bounds)), bucket_counts(upper_bounds.size() + 1, 0) {}

void Histogram::observe(base::Seconds value) {
  const auto bucket = std::lower_bound(upper_bounds.begin(), upper_bounds.end(), value);
  ++bucket_counts[static_cast<size_t>(bucket - upper_bounds.begin())];
  sum += value;
  ++count;
}

std::vector<base::Seconds> wait_duration_buckets() {
  using namespace std::chrono_literals;
  return {500us, 1ms, 2500us, 5ms, 10ms, 25ms, 50ms, 100ms, 250ms, 500ms, 1s, 2500ms, 5s, 10s};
}

std::vector<base::Seconds> snapshot_duration_buckets() {
  using namespace std::chrono_literals;
  return {100us, 250us, 500us, 1ms, 2500us, 5ms, 10ms, 25ms, 50ms, 100ms, 250ms, 1s};
}

std::vector<base::Seconds> traced_duration_buckets() {
  std::vector<base::Seconds> bounds;
  // Divided, not multiplied by 1e-9: the double nearest to 2^power ns, which the exposition's 16
  // significant digits write as its decimal (0.268435456) for all but three bounds.
  for (int power = kTracedFirstPower; power <= kTracedLastPower + 1; ++power) {
    bounds.emplace_back(std::ldexp(1.0, power) / 1e9);
  }
  return bounds;
}

Histogram traced_duration_histogram(const TracedTime& traced) {
  Histogram histogram(traced_duration_buckets());
  for (int index = 0; index < kTracedBuckets; ++index) {
    // Bucket 0 (below 2^10 ns) is below the first bound; the four of power p lie below 2^(p+1)
    // ns, the bound after 2^p's; the last traced bucket (2^36 ns and longer) is +Inf's.
    const auto exported = static_cast<size_t>(index == 0 ? 0 : (index - 1) / kTracedPerPower + 1);
    histogram.bucket_counts[exported] += traced.histogram[index];
    histogram.count += traced.histogram[index];
  }
  histogram.sum = base::Seconds(traced.ended_blocked_s);
  return histogram;
}

}  // namespace pgwaitprof::model
