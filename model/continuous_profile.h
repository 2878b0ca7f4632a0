// The daemon's continuous profile of one target: counters since start-up with memory bounded
// by the number of distinct wait keys, never by uptime. The I/O thread updates it; scrapes
// read an immutable TargetMetrics published from it.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/time.h"
#include "model/kernel_check.h"
#include "model/profile.h"
#include "model/sample_sink.h"
#include "model/sampler_source.h"
#include "model/traced_time.h"
#include "model/wait_tracker.h"

namespace pgwaitprof::model {

struct CollectorStatus {
  base::Seconds duration{0};
  bool success = false;
};

struct ActiveRun {
  std::string run_id;
  std::string workload;
  std::optional<double> tps;
  std::optional<base::Seconds> latency;  // the load generator's average
};

// What one scrape sees of one target. Immutable once published.
struct TargetMetrics {
  std::string target;
  std::map<std::string, std::string> labels;        // the target's constant labels from the config
  SamplerSource source = SamplerSource::kActivity;  // in use (never auto)
  SamplerSource requested = SamplerSource::kActivity;
  double hz = 0;  // configured rate (of pgwaitprof's ticks; pg_wait_sampling has its own period)
  bool up = false;
  int hidden_backends = 0;
  uint64_t snapshots = 0;
  uint64_t missed_ticks = 0;
  std::map<WaitKey, uint64_t> wait_samples;
  // The traced source (collectors/trace/): per wait key, its blocked, run-queue and on-CPU time,
  // its blocking waits and their durations. Its profiles count microseconds, not samples: they
  // fill this, never wait_samples or snapshots.
  std::map<WaitKey, TracedTime> traced;
  std::map<std::pair<std::string, std::string>, Histogram> wait_durations;
  Histogram snapshot_durations{snapshot_duration_buckets()};
  std::map<std::string, CollectorStatus> collectors;
  // Seconds on a CPU and on the run queue per backend type since start-up (local targets).
  std::map<std::string, KernelTime> kernel_by_backend_type;
  // The sampler's CPU against the kernel's over the last minute (local targets).
  std::optional<KernelCheck> kernel_check;
  std::optional<ActiveRun> run;
};

class ContinuousProfile : public SampleSink {
 public:
  ContinuousProfile(std::string target, SamplerSource source, double hz,
                    std::map<std::string, std::string> labels = {});

  void on_snapshot(const Snapshot& snapshot) override;
  void on_profile_delta(const Profile& delta, SystemClock::time_point read_at) override;
  void on_missed_ticks(uint64_t ticks) override;
  void on_source(SamplerSource source, std::string_view reason) override;
  void on_connection_state(bool up, SteadyClock::time_point at, std::string_view reason) override;
  void on_collector_status(std::string_view collector, base::Seconds duration,
                           bool success) override;
  void on_kernel_times(const KernelTimes& times) override;
  void set_run(std::optional<ActiveRun> run);

  // Makes the current state visible to scrapes (cheap: a copy of small maps).
  void publish();
  std::shared_ptr<const TargetMetrics> published() const { return published_.load(); }
  const TargetMetrics& current() const { return current_; }

 private:
  TargetMetrics current_;
  // Interned key -> its counter in current_.wait_samples, and its wait-length histogram in
  // current_.wait_durations (map nodes never move).
  KeyIndex counters_;
  std::unordered_map<const WaitKey*, Histogram*> duration_histograms_;
  WaitTracker tracker_;
  std::atomic<std::shared_ptr<const TargetMetrics>> published_;
  // The kernel check's window: per reading of the kernel times, the client backends' CPU
  // samples, running samples and the snapshots since the reading before, and the kernel's times.
  struct CheckReading {
    uint64_t cpu_samples = 0;
    uint64_t snapshots = 0;
    RunningSamples running;
    KernelTime clients;
    base::Seconds exited{0};
  };
  std::deque<CheckReading> check_window_;
  CheckReading since_check_;
  SteadyClock::time_point last_publish_{};
};

}  // namespace pgwaitprof::model
