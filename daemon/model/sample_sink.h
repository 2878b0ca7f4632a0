// The model's intake: what a sampler delivers to whoever aggregates its samples (the
// daemon's continuous profile, and the recorder of a run while one is active).
#pragma once

#include <chrono>
#include <string>

#include "daemon/model/profile.h"
#include "daemon/model/sample.h"

namespace pgwaitprof::model {

class SampleSink {
 public:
  virtual ~SampleSink() = default;
  // One snapshot of pg_stat_activity (source "activity").
  virtual void on_snapshot(const Snapshot& snapshot) = 0;
  // Counts that pg_wait_sampling's own sampler gathered since the previous read; the delta's
  // snapshots() is the number of its sampling periods in that time.
  virtual void on_profile_delta(const Profile& delta, SystemClock::time_point read_at) = 0;
  virtual void on_missed_tick() {}
  virtual void on_connection_state(bool up) { (void)up; }
  // Backends whose wait events the sampling role may not see, as of the latest snapshot.
  virtual void on_hidden_backends(int hidden) { (void)hidden; }
  // How long one collection took and whether it worked (per-collector gauges).
  virtual void on_collector_status(const std::string& collector, double duration_s, bool success) {
    (void)collector, (void)duration_s, (void)success;
  }
};

}  // namespace pgwaitprof::model
