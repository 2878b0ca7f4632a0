// Records one run while it is active: a SampleSink attached to the target's sampler (and to the
// run's own collectors) that files every sample into the run's profile and into the timeline
// interval it fell in, together with load-generator progress, background activity, host CPU
// and the sampler's outages per interval.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "base/time.h"
#include "model/run.h"
#include "model/sample_sink.h"

namespace pgwaitprof::model {

class RunRecorder : public SampleSink {
 public:
  // `start` is time zero of the timeline (the load generator's launch).
  RunRecorder(SteadyClock::time_point start, SystemClock::time_point start_wall,
              base::Seconds interval);

  void on_snapshot(const Snapshot& snapshot) override;
  void on_profile_delta(const Profile& delta, SystemClock::time_point read_at) override;
  void on_missed_ticks(uint64_t ticks) override;
  void on_connection_state(bool up, SteadyClock::time_point at, std::string_view reason) override;
  void on_run_connection_state(bool up, SteadyClock::time_point at,
                               std::string_view reason) override;
  void on_background(SteadyClock::time_point at, const Background& background) override;
  void on_host_cpu(SteadyClock::time_point interval_end, const HostCpu& cpu) override;
  void on_kernel_times(const KernelTimes& times) override;
  void on_lock_waits(const LockLookup& lookup) override;
  void on_statement_texts(const std::map<int64_t, std::string>& texts) override;
  void on_statement_delta(const StatementDelta& delta) override;
  void on_trace_counts(const TraceCounts& counts) override { trace_counts_ = counts; }
  // Kept, and filed at finish() over the load generator's intervals (finish_server_throughput).
  void on_server_throughput(const ServerThroughput& reading) override;
  void on_cpu_samples(const CpuSampleBatch& batch) override;
  // The load generator reports no throughput of its own (a command, a recording window): the
  // server's transactions per second become the timeline's tps, so stalls are found in them.
  void set_throughput_from_server(bool from_server) { throughput_from_server_ = from_server; }
  // The server's transactions over the whole run and the time its readings covered.
  struct ServerTotals {
    double transactions = 0;
    std::optional<double> calls;
    base::Seconds covered{0};
    // Part of a reading that covered more than half an interval (readings missed): the
    // interval's figure is partly that reading's mean.
    bool spread = false;
  };
  const ServerTotals& server_totals() const { return server_totals_; }
  // pg_stat_statements' calls and mean execution time per query id over the run (deltas).
  void set_statement_stats(std::map<int64_t, std::pair<uint64_t, base::Milliseconds>> stats) {
    statement_stats_ = std::move(stats);
  }

  // A progress line; its elapsed time (seconds since the load generator's start, or a Unix
  // time with --progress-timestamp) marks the end of the interval it reports. `arrived`: when
  // the line was read, which places the load generator's clock on the run's (its zero is not
  // the run's start: pgbench checks and vacuums its tables first, sysbench loads its script).
  void add_progress(const LoadgenProgress& progress,
                    std::optional<SteadyClock::time_point> arrived = std::nullopt);
  // Latency percentiles from pgbench's per-transaction log, read after the load generator
  // ended; their intervals are aligned with the timeline (both start at `start_wall`).
  void set_latency(LatencyTimeline latency) { latency_ = std::move(latency); }

  // Fills run.profile, run.query_ids, run.timeline, run.stalls, run.outages and the sampler
  // figures.
  void finish(SteadyClock::time_point end, Run& run);

  size_t slice_index(SteadyClock::time_point at) const;
  const Profile& profile() const { return profile_; }

 private:
  TimelineSlice& slice(size_t index);
  base::Seconds since_start(SteadyClock::time_point at) const;

  SteadyClock::time_point start_;
  SystemClock::time_point start_wall_;
  base::Seconds interval_;
  Profile profile_;
  std::map<int64_t, uint64_t> query_ids_;
  std::vector<TimelineSlice> timeline_;
  std::vector<uint32_t> snapshot_duration_buckets_;  // log buckets of 5 % from 1 us
  uint64_t missed_ticks_ = 0;
  int hidden_backends_ = 0;
  std::vector<Outage> outages_;
  std::optional<Outage> open_outage_;
  std::optional<Outage> open_run_outage_;  // the run's own connection's
  std::optional<LatencyTimeline> latency_;
  // Per query id: non-idle samples per (interned) wait key.
  std::map<int64_t, std::map<const WaitKey*, uint64_t>> statement_waits_;
  std::map<int64_t, std::string> statement_texts_;
  std::optional<TraceCounts> trace_counts_;
  std::map<int64_t, std::pair<uint64_t, base::Milliseconds>> statement_stats_;
  // Blocked backends seen per (lock, blocker) key, over the run and per interval.
  std::map<std::string, LockBlocker> lock_blockers_;
  std::map<std::string, std::set<int32_t>> lock_blocker_pids_;
  std::map<size_t, std::map<std::string, uint64_t>> slice_lock_observations_;
  uint64_t lock_lookups_ = 0;
  std::map<std::string, KernelTime> kernel_;
  // The server's readings, filed at finish() when the load generator's clock is known.
  std::vector<ServerThroughput> server_readings_;
  ServerTotals server_totals_;
  // Per interval that holds a progress line: when the line was read (seconds since start).
  std::map<size_t, double> progress_read_s_;
  std::optional<size_t> last_progress_index_;
  bool throughput_from_server_ = false;
  std::optional<CpuProfileBuilder> cpu_;  // from the first batch of on-CPU samples
  std::vector<std::string> cpu_notes_;    // the CPU profile's notes, each once: run warnings
  // Where the load generator's intervals lie on the run's clock: interval k of the timeline
  // holds its report of [offset + k, offset + k + 1) intervals; nullopt without progress lines
  // read at known times.
  std::optional<double> loadgen_offset_s() const;
  void file_progress(size_t index, const LoadgenProgress& progress, std::optional<double> read_s);
  // The parts of finish(): the last interval's length and the outages still open, marked on
  // the intervals they cover; pgbench's latencies per interval; the sampler's own figures.
  void finish_timeline_and_outages(SteadyClock::time_point end);
  void finish_latency(Run& run);
  void finish_sampler(Run& run, base::Seconds duration) const;
  void finish_server_throughput();
  void finish_statements(Run& run) const;
  void finish_lock_blockers(Run& run);
};

}  // namespace pgwaitprof::model
