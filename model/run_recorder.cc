// Filing samples of a run into its profile and timeline.
#include "model/run_recorder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/run_analysis.h"

namespace pgwaitprof::model {
namespace {

constexpr double kBucketGrowth = 1.05;
constexpr double kSmallestBucketS = 1e-6;

size_t duration_bucket(double seconds) {
  if (seconds <= kSmallestBucketS) return 0;
  return static_cast<size_t>(std::log(seconds / kSmallestBucketS) / std::log(kBucketGrowth)) + 1;
}

double bucket_upper_s(size_t bucket) {
  return kSmallestBucketS * std::pow(kBucketGrowth, static_cast<double>(bucket));
}

// Each interval's server figures from its totals; the timeline's tps too where the load
// generator reports none.
void set_server_figures(const std::map<size_t, RunRecorder::ServerTotals>& by_slice,
                        bool throughput_from_server, std::vector<TimelineSlice>& timeline) {
  for (const auto& [index, totals] : by_slice) {
    if (index >= timeline.size() || totals.covered <= base::Seconds(0)) continue;
    auto& slice = timeline[index];
    // Own statements are taken out per reading while the server's counters lag by up to a
    // second (backends flush them at most once a second): a rate below zero is noise.
    const double tps = std::max(0.0, totals.transactions / totals.covered.count());
    slice.server_tps = tps;
    slice.server_tps_spread = totals.spread;
    if (totals.calls) {
      slice.server_calls_per_s = std::max(0.0, *totals.calls / totals.covered.count());
    }
    if (throughput_from_server && !slice.loadgen) {
      LoadgenProgress progress;
      progress.elapsed = slice.start + slice.duration;
      progress.tps = tps;
      progress.latency_avg = base::Milliseconds(std::numeric_limits<double>::quiet_NaN());
      progress.latency_stddev = base::Milliseconds(std::numeric_limits<double>::quiet_NaN());
      slice.loadgen = progress;
    }
  }
}

}  // namespace

RunRecorder::RunRecorder(SteadyClock::time_point start, SystemClock::time_point start_wall,
                         base::Seconds interval)
    : start_(start), start_wall_(start_wall), interval_(interval) {}

base::Seconds RunRecorder::since_start(SteadyClock::time_point at) const { return at - start_; }

size_t RunRecorder::slice_index(SteadyClock::time_point at) const {
  const base::Seconds offset = since_start(at);
  return offset <= base::Seconds(0) ? 0 : static_cast<size_t>(offset / interval_);
}

TimelineSlice& RunRecorder::slice(size_t index) {
  while (timeline_.size() <= index) {
    TimelineSlice next;
    next.start = static_cast<double>(timeline_.size()) * interval_;
    next.duration = interval_;
    timeline_.push_back(std::move(next));
  }
  return timeline_[index];
}

void RunRecorder::on_snapshot(const Snapshot& snapshot) {
  profile_.add_snapshot(snapshot);
  hidden_backends_ = std::max(hidden_backends_, snapshot.hidden_backends);
  auto& interval = slice(slice_index(snapshot.taken_at_steady));
  interval.profile.add_snapshot(snapshot);
  interval.running.add(snapshot);
  for (const auto& backend : snapshot.backends) {
    if (!backend.query_id || *backend.query_id == 0) continue;
    if (const WaitKey* key = key_of(backend); key != nullptr && !is_idle(*key)) {
      ++query_ids_[*backend.query_id];
      ++statement_waits_[*backend.query_id][key];
    }
  }
  const double duration_s = std::chrono::duration<double>(snapshot.query_duration).count();
  const size_t bucket = duration_bucket(duration_s);
  if (snapshot_duration_buckets_.size() <= bucket) snapshot_duration_buckets_.resize(bucket + 1);
  ++snapshot_duration_buckets_[bucket];
}

void RunRecorder::on_profile_delta(const Profile& delta, SystemClock::time_point read_at) {
  profile_.merge(delta);
  const auto offset = read_at - start_wall_;
  slice(slice_index(start_ + std::chrono::duration_cast<SteadyClock::duration>(offset)))
      .profile.merge(delta);
}

void RunRecorder::on_statement_delta(const StatementDelta& delta) {
  for (const auto& [query_id, waits] : delta) {
    if (query_id == 0) continue;
    for (const auto& [key, count] : waits) {
      if (is_idle(key) || count == 0) continue;
      query_ids_[query_id] += count;
      statement_waits_[query_id][intern_key(key)] += count;
    }
  }
}

void RunRecorder::add_progress(const LoadgenProgress& progress,
                               std::optional<SteadyClock::time_point> arrived) {
  double end_s = progress.elapsed.count();
  // --progress-timestamp prints Unix time instead of seconds since the start.
  if (end_s > 1e9) {
    end_s -= std::chrono::duration<double>(start_wall_.time_since_epoch()).count();
  }
  const double middle_s = end_s - interval_.count() / 2;
  const size_t index = middle_s <= 0 ? 0 : static_cast<size_t>(middle_s / interval_.count());
  std::optional<double> read_s;
  if (arrived) read_s = since_start(*arrived).count();
  // sysbench prints its elapsed time rounded to whole seconds (pgbench to tenths): a report
  // late by half an interval or more reads as the next interval's, and the next one, on time,
  // as the same again. The reports before it in a row (a few at most) then move back by one
  // interval, into the one without a report, so that none is lost and none is left empty.
  if (last_progress_index_ && *last_progress_index_ == index) {
    constexpr size_t kLateInARow = 4;
    size_t free = index;
    while (free > 0 && index - free < kLateInARow && timeline_[free].loadgen) --free;
    if (!timeline_[free].loadgen) {
      for (size_t moved = free; moved < index; ++moved) {
        timeline_[moved].loadgen = timeline_[moved + 1].loadgen;
        timeline_[moved + 1].loadgen.reset();
        if (auto read = progress_read_s_.extract(moved + 1)) {
          progress_read_s_[moved] = read.mapped();
        }
      }
    }
  }
  file_progress(index, progress, read_s);
}

void RunRecorder::file_progress(size_t index, const LoadgenProgress& progress,
                                std::optional<double> read_s) {
  slice(index).loadgen = progress;
  last_progress_index_ = index;
  if (read_s) {
    progress_read_s_[index] = *read_s;
  } else {
    progress_read_s_.erase(index);
  }
}

void RunRecorder::on_missed_ticks(uint64_t ticks) {
  missed_ticks_ += ticks;
  if (open_outage_) open_outage_->missed_ticks += ticks;
}

void RunRecorder::on_connection_state(bool up, SteadyClock::time_point at,
                                      std::string_view reason) {
  const base::Seconds offset = std::max(base::Seconds(0), since_start(at));
  if (!up && !open_outage_) {
    open_outage_ = Outage{offset, base::Seconds(0), 0, std::string(reason)};
  } else if (up && open_outage_) {
    open_outage_->duration = offset - open_outage_->start;
    outages_.push_back(*open_outage_);
    open_outage_.reset();
  }
}

void RunRecorder::on_run_connection_state(bool up, SteadyClock::time_point at,
                                          std::string_view reason) {
  const base::Seconds offset = std::max(base::Seconds(0), since_start(at));
  if (!up && !open_run_outage_) {
    open_run_outage_ = Outage{offset, base::Seconds(0), 0, std::string(reason), kRunConnection};
  } else if (up && open_run_outage_) {
    open_run_outage_->duration = offset - open_run_outage_->start;
    outages_.push_back(*open_run_outage_);
    open_run_outage_.reset();
  }
}

void RunRecorder::on_background(SteadyClock::time_point at, const Background& background) {
  slice(slice_index(at)).background.merge(background);
}

void RunRecorder::on_host_cpu(SteadyClock::time_point interval_end, const HostCpu& cpu) {
  // A reading taken at an interval's end describes the interval before it.
  const auto index = slice_index(interval_end - std::chrono::milliseconds(1));
  slice(index).cpu = cpu;
}

void RunRecorder::on_kernel_times(const KernelTimes& times) {
  // A reading covers [from, to), which need not line up with the intervals: each interval gets
  // the reading's share of the time they overlap; time before the run's start is not the run's.
  const base::Seconds from = std::max(base::Seconds(0), since_start(times.from));
  const base::Seconds to = since_start(times.to);
  const base::Seconds length = times.to - times.from;
  if (to <= from || length <= base::Seconds(0)) return;
  const double length_s = length.count();
  for (size_t index = slice_index(times.from); index <= slice_index(times.to); ++index) {
    const base::Seconds slice_start = static_cast<double>(index) * interval_;
    const double overlap_s =
        (std::min(to, slice_start + interval_) - std::max(from, slice_start)).count();
    if (overlap_s <= 0) continue;
    auto& slice_kernel = slice(index).kernel;
    for (const auto& [group, time] : times.by_group) {
      KernelTime reading = time;
      reading.covered = length;
      slice_kernel[group].add(reading.part(overlap_s / length_s));
      kernel_[group].add(reading.part(overlap_s / length_s));
    }
  }
}

void RunRecorder::on_server_throughput(const ServerThroughput& reading) {
  const base::Seconds from = std::max(base::Seconds(0), since_start(reading.from));
  const base::Seconds to = since_start(reading.to);
  if (to <= from || reading.to <= reading.from) return;
  server_totals_.transactions += reading.transactions;
  if (reading.calls) server_totals_.calls = server_totals_.calls.value_or(0) + *reading.calls;
  server_totals_.covered += to - from;
  server_readings_.push_back(reading);
}

std::optional<double> RunRecorder::loadgen_offset_s() const {
  // A line is read a moment after its interval ends (the pipe, our own loop): the median of
  // (read - end) over the lines is the offset, unmoved by a line read late or printed late.
  std::vector<double> offsets;
  for (const auto& [index, read_s] : progress_read_s_) {
    offsets.push_back(read_s - static_cast<double>(index + 1) * interval_.count());
  }
  if (offsets.empty()) return std::nullopt;
  const auto middle = offsets.begin() + static_cast<std::ptrdiff_t>(offsets.size() / 2);
  std::nth_element(offsets.begin(), middle, offsets.end());
  return *middle;
}

// The server's transactions per interval of the timeline, counted over the load generator's
// own interval there (its clock's offset from the run's, loadgen_offset_s()), so that both
// figures of an interval cover the same time: the first one too, whose report covers the time
// pgbench's clients took to connect and the first part of its load. A reading's increase is
// what backends handed over since the reading before (collectors/server_throughput.h): each
// hand-over holds a backend's transactions since its previous one, a second before at most, so
// the increase is spread evenly over the second before the middle of its reading, within the
// load generator's intervals (its clients hand over their last transactions when they exit,
// which the last reading waits for: that is placed before the moment the load ended, which may
// be after its last report, as sysbench does not report its last second; a reading seen before
// its first interval is none of the load's). Each interval's time is the part of it between the
// load's start and its end (or the last reading); a figure with a part of a reading longer than
// half an interval (readings missed) is the mean of more than its interval, and says so.
void RunRecorder::finish_server_throughput() {
  const double interval_s = interval_.count();
  const double offset_s = loadgen_offset_s().value_or(0);
  double load_start_s = 0;
  double load_end_s = std::numeric_limits<double>::infinity();
  if (!progress_read_s_.empty()) {
    const auto first = static_cast<double>(progress_read_s_.begin()->first);
    const auto last = static_cast<double>(progress_read_s_.rbegin()->first);
    load_start_s = offset_s + first * interval_s;
    load_end_s = offset_s + (last + 1) * interval_s;
  }
  constexpr double kHandOverS = 1.0;
  std::map<size_t, ServerTotals> by_slice;
  double read_to_s = 0;
  for (const auto& reading : server_readings_) {
    const double from_s = since_start(reading.from).count();
    const double to_s = since_start(reading.to).count();
    if (to_s <= from_s) continue;
    read_to_s = std::max(read_to_s, to_s);
    // The last reading waits for the load generator's backends to exit, and holds their last
    // hand-overs: seen when the load ended, where the one before it (ten an interval) ended.
    const bool last = &reading == &server_readings_.back() && from_s > load_start_s;
    const double seen_s = last ? from_s : (from_s + to_s) / 2;
    if (seen_s <= load_start_s) continue;
    const double spread_from_s = std::max(load_start_s, seen_s - kHandOverS);
    const double spread_s = seen_s - spread_from_s;
    const bool long_reading = to_s - from_s > 0.5 * interval_s;
    const double first = std::max(0.0, std::floor((spread_from_s - offset_s) / interval_s));
    for (double index = first; offset_s + index * interval_s < seen_s; ++index) {
      const double overlap_s = std::min(seen_s, offset_s + (index + 1) * interval_s) -
                               std::max(spread_from_s, offset_s + index * interval_s);
      if (overlap_s <= 0) continue;
      auto& totals = by_slice[static_cast<size_t>(index)];
      totals.transactions += reading.transactions * overlap_s / spread_s;
      if (reading.calls) {
        totals.calls = totals.calls.value_or(0) + *reading.calls * overlap_s / spread_s;
      }
      if (long_reading && overlap_s > 0.02 * interval_s) totals.spread = true;
    }
  }
  for (auto& [index, totals] : by_slice) {
    const double start_s = offset_s + static_cast<double>(index) * interval_s;
    const double to_s = start_s < load_end_s ? std::min(load_end_s, read_to_s) : read_to_s;
    totals.covered = base::Seconds(
        std::max(0.0, std::min(to_s, start_s + interval_s) - std::max(load_start_s, start_s)));
  }
  set_server_figures(by_slice, throughput_from_server_, timeline_);
}
void RunRecorder::on_lock_waits(const LockLookup& lookup) {
  ++lock_lookups_;
  // Chains: a blocker that is itself blocked by another one in the same lookup. A wait is
  // charged to the head of its chain (who everyone waits for), with the chain's length. A
  // prepared transaction (pid 0) waits on nothing: it always ends its chain.
  std::map<int32_t, const LockWait*> wait_of;  // blocked pid -> a row of its wait
  for (const auto& wait : lookup.waits) wait_of.emplace(wait.pid, &wait);
  for (const auto& blocked : lookup.waits) {
    int depth = 1;
    const LockWait* last_link = &blocked;
    for (; depth < 16; ++depth) {
      const auto next = wait_of.find(last_link->blocker_pid);
      if (last_link->blocker_pid == 0 || next == wait_of.end()) break;
      last_link = next->second;
    }
    // The lock is the blocked backend's; who holds it up is the head's (the last link's
    // blocker fields).
    LockWait wait = *last_link;
    wait.lock_type = blocked.lock_type;
    wait.object = blocked.object;
    // Aggregated by what was locked and what the blocker did; a transaction lock's object (the
    // transaction) differs every time and is kept as an example only.
    const bool per_transaction =
        wait.lock_type == "transactionid" || wait.lock_type == "virtualxid";
    const std::string object = per_transaction ? "" : wait.object;
    const std::string key = wait.lock_type + '\x1f' + object + '\x1f' + wait.blocker_statement +
                            '\x1f' + wait.blocker_state + '\x1f' + wait.blocker_prepared;
    auto [entry, added] = lock_blockers_.try_emplace(key);
    LockBlocker& blocker = entry->second;
    if (added) {
      blocker.lock_type = wait.lock_type;
      blocker.object = object;
      blocker.example_object = per_transaction ? wait.object : "";
      blocker.blocker_statement = wait.blocker_statement;
      blocker.blocker_state = wait.blocker_state;
      blocker.blocker_application = wait.blocker_application;
      blocker.blocker_backend_type = wait.blocker_backend_type;
      blocker.example_blocker_pid = wait.blocker_pid;
      blocker.prepared = wait.blocker_prepared;
      blocker.prepared_by = wait.blocker_owner;
    }
    auto& pids = lock_blocker_pids_[key];
    pids.insert(wait.blocker_pid);
    blocker.blockers = static_cast<int>(pids.size());
    ++blocker.observations;
    blocker.max_xact_age = std::max(blocker.max_xact_age, wait.blocker_xact_age);
    blocker.chain_depth = std::max(blocker.chain_depth, depth);
    ++slice_lock_observations_[slice_index(lookup.at)][key];
  }
}

void RunRecorder::on_statement_texts(const std::map<int64_t, std::string>& texts) {
  for (const auto& [query_id, text] : texts) statement_texts_.emplace(query_id, text);
}

void RunRecorder::finish_statements(Run& run) const {
  for (const auto& [query_id, waits] : statement_waits_) {
    StatementProfile statement;
    statement.query_id = query_id;
    if (const auto text = statement_texts_.find(query_id); text != statement_texts_.end()) {
      statement.text = text->second;
    }
    for (const auto& [key, count] : waits) {
      statement.waits[display_name(*key)] += count;
      statement.samples += count;
    }
    if (const auto stats = statement_stats_.find(query_id); stats != statement_stats_.end()) {
      statement.calls = stats->second.first;
      statement.mean_exec = stats->second.second;
    }
    run.statements.push_back(std::move(statement));
  }
  std::stable_sort(run.statements.begin(), run.statements.end(),
                   [](const auto& a, const auto& b) { return a.samples > b.samples; });
}

void RunRecorder::finish_lock_blockers(Run& run) {
  for (const auto& [key, blocker] : lock_blockers_) run.lock_blockers.push_back(blocker);
  std::stable_sort(run.lock_blockers.begin(), run.lock_blockers.end(),
                   [](const auto& a, const auto& b) { return a.observations > b.observations; });
  run.lock_lookups = lock_lookups_;
  for (const auto& [index, observations] : slice_lock_observations_) {
    if (index >= timeline_.size()) continue;
    const auto top =
        std::max_element(observations.begin(), observations.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    timeline_[index].lock_blocker = lock_blockers_.at(top->first).description();
  }
}

void RunRecorder::on_cpu_samples(const CpuSampleBatch& batch) {
  if (!cpu_) cpu_.emplace();
  cpu_->add(batch, [this](SteadyClock::time_point at) { return slice_index(at); });
  for (const auto& note : batch.notes) {
    if (std::find(cpu_notes_.begin(), cpu_notes_.end(), note) == cpu_notes_.end()) {
      cpu_notes_.push_back(note);
    }
  }
}

void RunRecorder::finish_timeline_and_outages(SteadyClock::time_point end) {
  const base::Seconds duration = since_start(end);
  if (!timeline_.empty()) {
    auto& last = timeline_.back();
    last.duration = std::max(base::Seconds(0), std::min(interval_, duration - last.start));
    if (last.duration == base::Seconds(0) && last.profile.snapshots() == 0 && !last.loadgen)
      timeline_.pop_back();
  }
  if (open_outage_) {  // still down when the run ended
    on_connection_state(true, end, "");
  }
  if (open_run_outage_) on_run_connection_state(true, end, "");
  // The sampler's outages first (as before the run's own connection had any), each kind in
  // the order they ended.
  std::stable_partition(outages_.begin(), outages_.end(), [](const Outage& outage) {
    return outage.connection == kSamplerConnection;
  });
  for (const auto& outage : outages_) {
    if (outage.connection != kSamplerConnection) continue;
    for (auto& marked : timeline_) {
      if (marked.start < outage.start + outage.duration &&
          outage.start < marked.start + marked.duration) {
        marked.sampler_outage = true;
      }
    }
  }
}

void RunRecorder::finish_latency(Run& run) {
  if (!latency_) return;
  for (size_t index = 0; index < latency_->intervals.size() && index < timeline_.size(); ++index) {
    const auto& interval = latency_->intervals[index];
    if (interval.count + interval.failed + interval.skipped > 0)
      timeline_[index].latency = interval;
  }
  run.latency = latency_->run;
  run.latency_sampling_rate = latency_->sampling_rate;
}

void RunRecorder::finish_sampler(Run& run, base::Seconds duration) const {
  run.sampler.snapshots = profile_.snapshots();
  run.sampler.missed_ticks = missed_ticks_;
  run.sampler.hidden_backends = hidden_backends_;
  run.sampler.trace = trace_counts_;
  run.sampler.achieved_hz = duration > base::Seconds(0)
                                ? static_cast<double>(profile_.snapshots()) / duration.count()
                                : 0;
  uint64_t total = 0;
  for (auto count : snapshot_duration_buckets_) total += count;
  uint64_t seen = 0;
  for (size_t bucket = 0; bucket < snapshot_duration_buckets_.size(); ++bucket) {
    seen += snapshot_duration_buckets_[bucket];
    if (total > 0 && static_cast<double>(seen) >= 0.99 * static_cast<double>(total)) {
      run.sampler.snapshot_p99 = base::Seconds(bucket_upper_s(bucket));
      break;
    }
  }
}

void RunRecorder::finish(SteadyClock::time_point end, Run& run) {
  const base::Seconds duration = since_start(end);
  finish_timeline_and_outages(end);
  finish_server_throughput();
  run.outages = outages_;
  run.kernel = kernel_;
  finish_lock_blockers(run);
  finish_statements(run);
  finish_latency(run);
  if (cpu_) run.cpu_profile = cpu_->profile(duration);
  run.warnings.insert(run.warnings.end(), cpu_notes_.begin(), cpu_notes_.end());
  run.duration = duration;
  run.interval = interval_;
  run.profile = profile_;
  run.query_ids = query_ids_;
  run.timeline = timeline_;
  run.stalls = detect_stalls(timeline_);
  finish_sampler(run, duration);
}

}  // namespace pgwaitprof::model
