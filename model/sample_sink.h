// The model's intake: what collectors deliver to whoever aggregates their samples (the daemon's
// continuous profile of a target, and the recorder of a run while one is active). Every method
// but on_snapshot and on_profile_delta has a default that ignores it, so a sink implements only
// what it keeps.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/time.h"
#include "model/cpu_profile.h"
#include "model/profile.h"
#include "model/sample.h"
#include "model/sampler_source.h"

namespace pgwaitprof::model {

// Time per statement (query id) and wait key since the previous read, from a source that knows
// it without snapshots (the traced source: microseconds, as its profile's counts).
using StatementDelta = std::map<int64_t, std::map<WaitKey, uint64_t>>;

class SampleSink {
 public:
  virtual ~SampleSink() = default;
  // One snapshot of pg_stat_activity (source activity).
  virtual void on_snapshot(const Snapshot& snapshot) = 0;
  // Counts that pg_wait_sampling's own sampler gathered since the previous read; the delta's
  // snapshots() is the number of its sampling periods in that time.
  virtual void on_profile_delta(const Profile& delta, SystemClock::time_point read_at) = 0;
  // Ticks that took no snapshot: the previous one still ran, or the target was down.
  virtual void on_missed_ticks(uint64_t ticks) { (void)ticks; }
  // The source the sampler uses from now on, and why where the choice was its own (auto): at
  // each connection, and to a sink as it is added.
  virtual void on_source(SamplerSource source, std::string_view reason) {
    (void)source, (void)reason;
  }
  // The sampler's connection went down (with the reason) or came back, at `at`.
  virtual void on_connection_state(bool up, SteadyClock::time_point at, std::string_view reason) {
    (void)up, (void)at, (void)reason;
  }
  // The run's own connection (its collectors': server throughput, background activity) went
  // down or came back, at `at` (run collectors).
  virtual void on_run_connection_state(bool up, SteadyClock::time_point at,
                                       std::string_view reason) {
    (void)up, (void)at, (void)reason;
  }
  // How long one collection took and whether it worked (per-collector gauges).
  virtual void on_collector_status(std::string_view collector, base::Seconds duration,
                                   bool success) {
    (void)collector, (void)duration, (void)success;
  }
  // Background activity seen at `at` (run collectors).
  virtual void on_background(SteadyClock::time_point at, const Background& background) {
    (void)at, (void)background;
  }
  // The host's CPU over the interval ending at `interval_end` (run collectors).
  virtual void on_host_cpu(SteadyClock::time_point interval_end, const HostCpu& cpu) {
    (void)interval_end, (void)cpu;
  }
  // On-CPU and run-queue time of the target's processes (server on this host only).
  virtual void on_kernel_times(const KernelTimes& times) { (void)times; }
  // The server's transactions between two readings (run collectors).
  virtual void on_server_throughput(const ServerThroughput& reading) { (void)reading; }
  // Who blocks the backends that wait on locks, looked up while Lock waits exist.
  virtual void on_lock_waits(const LockLookup& lookup) { (void)lookup; }
  // The text of statements by query id, fetched once per new query id (literals replaced).
  virtual void on_statement_texts(const std::map<int64_t, std::string>& texts) { (void)texts; }
  // Time per query id and wait key (the traced source), beside its profile delta.
  virtual void on_statement_delta(const StatementDelta& delta) { (void)delta; }
  // The traced source's own counts since it was loaded.
  virtual void on_trace_counts(const TraceCounts& counts) { (void)counts; }
  // On-CPU samples of the server's processes since the previous batch (--cpu-profile).
  virtual void on_cpu_samples(const CpuSampleBatch& batch) { (void)batch; }
};

}  // namespace pgwaitprof::model
