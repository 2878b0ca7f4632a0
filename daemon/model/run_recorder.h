// Records one run while it is active: a SampleSink attached to the target's sampler that files
// every sample into the run's profile and into the timeline interval it fell in, together
// with load-generator progress, background activity and host CPU per interval.
#pragma once

#include <chrono>
#include <vector>

#include "daemon/model/run.h"
#include "daemon/model/sample_sink.h"

namespace pgwaitprof::model {

class RunRecorder : public SampleSink {
 public:
  // `start` is time zero of the timeline (the load generator's launch).
  RunRecorder(SteadyClock::time_point start, SystemClock::time_point start_wall,
              std::chrono::duration<double> interval);

  void on_snapshot(const Snapshot& snapshot) override;
  void on_profile_delta(const Profile& delta, SystemClock::time_point read_at) override;
  void on_missed_tick() override { ++missed_ticks_; }
  void on_hidden_backends(int hidden) override { hidden_backends_ = std::max(hidden_backends_, hidden); }

  // A progress line; its elapsed time (seconds since the load generator's start, or a Unix
  // time with --progress-timestamp) marks the end of the interval it reports.
  void add_progress(const LoadgenProgress& progress);
  void add_background(SteadyClock::time_point at, const Background& background);
  void set_cpu(SteadyClock::time_point interval_end, const HostCpu& cpu);

  // Fills run.profile, run.query_ids, run.timeline, run.stalls and the sampler figures.
  void finish(SteadyClock::time_point end, Run& run);

  size_t slice_index(SteadyClock::time_point at) const;
  const Profile& profile() const { return profile_; }

 private:
  TimelineSlice& slice(size_t index);

  SteadyClock::time_point start_;
  SystemClock::time_point start_wall_;
  double interval_s_;
  Profile profile_;
  std::map<int64_t, uint64_t> query_ids_;
  std::vector<TimelineSlice> timeline_;
  std::vector<uint32_t> snapshot_duration_buckets_;  // log buckets of 5 % from 1 us
  uint64_t missed_ticks_ = 0;
  int hidden_backends_ = 0;
};

}  // namespace pgwaitprof::model
