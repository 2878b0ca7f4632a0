// Filing samples of a run into its profile and timeline.
#include "daemon/model/run_recorder.h"

#include <cmath>

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

}  // namespace

RunRecorder::RunRecorder(SteadyClock::time_point start, SystemClock::time_point start_wall,
                         std::chrono::duration<double> interval)
    : start_(start), start_wall_(start_wall), interval_s_(interval.count()) {}

size_t RunRecorder::slice_index(SteadyClock::time_point at) const {
  const double offset_s = std::chrono::duration<double>(at - start_).count();
  return offset_s <= 0 ? 0 : static_cast<size_t>(offset_s / interval_s_);
}

TimelineSlice& RunRecorder::slice(size_t index) {
  while (timeline_.size() <= index) {
    TimelineSlice next;
    next.start_s = static_cast<double>(timeline_.size()) * interval_s_;
    next.duration_s = interval_s_;
    timeline_.push_back(std::move(next));
  }
  return timeline_[index];
}

void RunRecorder::on_snapshot(const Snapshot& snapshot) {
  profile_.add_snapshot(snapshot);
  slice(slice_index(snapshot.taken_at_steady)).profile.add_snapshot(snapshot);
  for (const auto& backend : snapshot.backends) {
    if (!backend.query_id || *backend.query_id == 0) continue;
    if (auto key = classify(backend); key && !is_idle(*key)) ++query_ids_[*backend.query_id];
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

void RunRecorder::add_progress(const LoadgenProgress& progress) {
  double end_s = progress.elapsed_s;
  // --progress-timestamp prints Unix time instead of seconds since the start.
  if (end_s > 1e9) {
    end_s -= std::chrono::duration<double>(start_wall_.time_since_epoch()).count();
  }
  const double middle_s = end_s - interval_s_ / 2;
  const size_t index = middle_s <= 0 ? 0 : static_cast<size_t>(middle_s / interval_s_);
  slice(index).loadgen = progress;
}

void RunRecorder::add_background(SteadyClock::time_point at, const Background& background) {
  auto& flags = slice(slice_index(at)).background;
  flags.autovacuum |= background.autovacuum;
  flags.checkpoint |= background.checkpoint;
  flags.manual_vacuum |= background.manual_vacuum;
}

void RunRecorder::set_cpu(SteadyClock::time_point interval_end, const HostCpu& cpu) {
  // A reading taken at an interval's end describes the interval before it.
  const auto index = slice_index(interval_end - std::chrono::milliseconds(1));
  slice(index).cpu = cpu;
}

void RunRecorder::finish(SteadyClock::time_point end, Run& run) {
  const double duration_s = std::chrono::duration<double>(end - start_).count();
  if (!timeline_.empty()) {
    auto& last = timeline_.back();
    last.duration_s = std::max(0.0, std::min(interval_s_, duration_s - last.start_s));
    if (last.duration_s == 0 && last.profile.snapshots() == 0 && !last.loadgen) timeline_.pop_back();
  }
  run.duration_s = duration_s;
  run.interval_s = interval_s_;
  run.profile = profile_;
  run.query_ids = query_ids_;
  run.timeline = timeline_;
  run.stalls = detect_stalls(timeline_);
  run.sampler.snapshots = profile_.snapshots();
  run.sampler.missed_ticks = missed_ticks_;
  run.sampler.hidden_backends = hidden_backends_;
  run.sampler.achieved_hz = duration_s > 0 ? static_cast<double>(profile_.snapshots()) / duration_s : 0;
  uint64_t total = 0;
  for (auto count : snapshot_duration_buckets_) total += count;
  uint64_t seen = 0;
  for (size_t bucket = 0; bucket < snapshot_duration_buckets_.size(); ++bucket) {
    seen += snapshot_duration_buckets_[bucket];
    if (total > 0 && static_cast<double>(seen) >= 0.99 * static_cast<double>(total)) {
      run.sampler.snapshot_p99_ms = bucket_upper_s(bucket) * 1000;
      break;
    }
  }
}

}  // namespace pgwaitprof::model
