// Profiles: counts per wait key over a window plus the number of snapshots taken, and the
// statistics derived from them (share, average active sessions, sampling error).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

#include "base/time.h"
#include "model/sample.h"
#include "model/traced_time.h"
#include "model/wait_key.h"

namespace pgwaitprof::model {

struct WaitStat {
  WaitKey key;
  uint64_t count = 0;
  double share = 0;  // of the non-idle samples (or of all, with idle included), 0..1
  double aas = 0;    // average active sessions: count / snapshots
  // Standard errors, from batch means over a run's timeline (run_estimates.h); NaN until they
  // are estimated, and when the run is too short for an estimate. Never binomial: consecutive
  // snapshots of one backend are not independent samples.
  double share_stderr = std::numeric_limits<double>::quiet_NaN();
  double aas_stderr = std::numeric_limits<double>::quiet_NaN();
  bool errors_reliable = false;  // the estimate had enough independent batches
};

// Counters per wait key found by the interned key (intern_key() in wait_key.h, never another
// WaitKey: the index keeps the pointer) instead of by comparing strings: `index` maps each key
// seen to its entry in `counts` (std::map nodes never move).
using KeyIndex = std::unordered_map<const WaitKey*, uint64_t*>;
inline void count_key(std::map<WaitKey, uint64_t>& counts, KeyIndex& index,
                      const WaitKey* interned) {
  auto counter = index.find(interned);
  if (counter == index.end()) counter = index.emplace(interned, &counts[*interned]).first;
  ++*counter->second;
}

class Profile {
 public:
  Profile() = default;
  // A copy rebuilds its own index of counters; a move takes the index with the counters.
  Profile(const Profile& other)
      : snapshots_(other.snapshots_), counts_(other.counts_), traced_(other.traced_) {}
  Profile& operator=(const Profile& other) {
    if (this != &other) {
      snapshots_ = other.snapshots_;
      counts_ = other.counts_;
      traced_ = other.traced_;
      counters_.clear();
    }
    return *this;
  }
  Profile(Profile&&) = default;
  Profile& operator=(Profile&&) = default;

  // Counts every visible backend of the snapshot under its wait key.
  void add_snapshot(const Snapshot& snapshot);
  // For sources that deliver counts rather than snapshots (pg_wait_sampling).
  void add(const WaitKey& key, uint64_t count);
  void add_snapshots(uint64_t snapshots) { snapshots_ += snapshots; }
  // The traced source (collectors/trace/): its counts are microseconds of time and its
  // snapshots microseconds of wall-clock time, so that shares and AAS read the same as a
  // sampler's; beside them, the parts of each key's time, its waits and their durations.
  void add_traced(const WaitKey& key, const TracedTime& traced) { traced_[key].merge(traced); }
  const std::map<WaitKey, TracedTime>& traced() const { return traced_; }
  // Exact figures from the traced source (the counts are microseconds, not samples).
  bool exact() const { return !traced_.empty(); }
  void merge(const Profile& other);

  uint64_t snapshots() const { return snapshots_; }
  const std::map<WaitKey, uint64_t>& counts() const { return counts_; }
  uint64_t total(bool include_idle) const;

  // Statistics per key, sorted by count ascending (the hackers' table order).
  std::vector<WaitStat> stats(bool include_idle) const;
  // Counts summed per wait_event_type (CPU, LWLock, Lock, IO, IPC, Client, ...), non-idle only.
  std::map<std::string, uint64_t> by_wait_class() const;

 private:
  uint64_t snapshots_ = 0;
  std::map<WaitKey, uint64_t> counts_;
  std::map<WaitKey, TracedTime> traced_;
  KeyIndex counters_;  // into counts_, for add_snapshot()
};

// Share and AAS of `count` among `total` samples in `snapshots` (errors not estimated).
WaitStat make_stat(const WaitKey& key, uint64_t count, uint64_t total, uint64_t snapshots);

// Cumulative-bucket histogram of durations with fixed upper bounds (Prometheus semantics; the
// exporter writes them in seconds).
struct Histogram {
  std::vector<base::Seconds> upper_bounds;
  std::vector<uint64_t> bucket_counts;  // non-cumulative, one per bound plus +Inf
  base::Seconds sum{0};
  uint64_t count = 0;

  explicit Histogram(std::vector<base::Seconds> bounds = {});
  void observe(base::Seconds value);
};

// Bucket bounds used for the exported histograms.
std::vector<base::Seconds> wait_duration_buckets();
std::vector<base::Seconds> snapshot_duration_buckets();

// The bounds of the traced source's exported wait durations: every power of two from 2^10 ns
// (1.024 us) to 2^36 ns (68.7 s). Each is an edge of the traced buckets (traced_time.h: four per
// power of two), so an exported bucket sums whole traced buckets and nothing is interpolated. A
// traced bucket holds [lower, upper): a wait of exactly 2^p ns counts above le = 2^p ns, the one
// nanosecond per bound where "less than" and Prometheus' "at most" differ.
std::vector<base::Seconds> traced_duration_buckets();
// The blocking waits of `traced` in those buckets: the count of its histogram, the sum of its
// blocked time (the kernel charges blocked time only with the wait that ends it: one total).
Histogram traced_duration_histogram(const TracedTime& traced);

}  // namespace pgwaitprof::model
