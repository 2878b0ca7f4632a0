// Estimates the length of contiguous waits from consecutive snapshots: one backend (same pid
// and backend start) showing the same wait event in consecutive snapshots is one wait.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/model/sample.h"

namespace pgwaitprof::model {

struct CompletedWait {
  std::string wait_event_type;
  std::string wait_event;
  std::chrono::duration<double> estimated_length;
};

class WaitTracker {
 public:
  // Feeds the next snapshot (in time order) and returns the waits that it shows have ended.
  // A wait seen from snapshot t_first to t_last started after the snapshot before t_first and
  // ended before the snapshot after t_last; the estimate is the middle of those bounds.
  std::vector<CompletedWait> observe(const Snapshot& snapshot);
  // Forgets every open wait (after a connection loss the next snapshot is not consecutive).
  void reset();
  size_t open_waits() const { return open_.size(); }

 private:
  struct OpenWait {
    std::string wait_event_type;
    std::string wait_event;
    SteadyClock::time_point before_first;  // the snapshot before the wait was first seen
    SteadyClock::time_point first_seen;
    SteadyClock::time_point last_seen;
  };
  using BackendId = std::pair<int32_t, int64_t>;
  std::map<BackendId, OpenWait> open_;
  SteadyClock::time_point previous_{};
  bool have_previous_ = false;
};

}  // namespace pgwaitprof::model
