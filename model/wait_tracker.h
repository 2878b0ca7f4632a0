// Estimates the length of contiguous waits from consecutive snapshots: one backend (same pid
// and backend start) showing the same wait event in consecutive snapshots is one wait.
#pragma once

#include <chrono>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/sample.h"
#include "model/wait_key.h"

namespace pgwaitprof::model {

struct CompletedWait {
  const WaitKey* key = nullptr;  // interned (wait_key.h)
  std::chrono::duration<double> estimated_length{0};
};

class WaitTracker {
 public:
  // Feeds the next snapshot (in time order) and returns the waits that it shows have ended.
  // A wait seen from snapshot t_first to t_last started after the snapshot before t_first and
  // ended before the snapshot after t_last; the estimate is the middle of those bounds.
  // The result is valid until the next call.
  const std::vector<CompletedWait>& observe(const Snapshot& snapshot);
  // Forgets every open wait (after a connection loss the next snapshot is not consecutive).
  void reset();
  size_t open_waits() const { return open_.size(); }

 private:
  struct OpenWait {
    const WaitKey* key = nullptr;          // interned: one wait event is one key of one backend
    SteadyClock::time_point before_first;  // the snapshot before the wait was first seen
    SteadyClock::time_point first_seen;
    SteadyClock::time_point last_seen;
    uint64_t seen_in = 0;  // the number of the last snapshot that showed it
  };
  using BackendId = std::pair<int32_t, int64_t>;
  struct BackendIdHash {
    size_t operator()(const BackendId& id) const {
      return std::hash<int64_t>()(id.second * 31 + id.first);
    }
  };
  // Updated in place: only a wait that starts or ends inserts or erases an entry.
  std::unordered_map<BackendId, OpenWait, BackendIdHash> open_;
  std::vector<CompletedWait> completed_;
  uint64_t snapshot_number_ = 0;
  SteadyClock::time_point previous_{};
  bool have_previous_ = false;
};

}  // namespace pgwaitprof::model
