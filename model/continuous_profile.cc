// Continuous profile bookkeeping.
#include "model/continuous_profile.h"

namespace pgwaitprof::model {
namespace {
// Scrapes see data at most this old; publishing on every 1 kHz snapshot would be wasted copies.
constexpr auto kPublishEvery = std::chrono::milliseconds(100);
}  // namespace

ContinuousProfile::ContinuousProfile(std::string target, SamplerSource source, double hz,
                                     std::map<std::string, std::string> labels) {
  current_.target = std::move(target);
  current_.source = source;
  current_.hz = hz;
  current_.labels = std::move(labels);
  publish();
}

void ContinuousProfile::on_snapshot(const Snapshot& snapshot) {
  ++current_.snapshots;
  current_.hidden_backends = snapshot.hidden_backends;
  for (const auto& backend : snapshot.backends) {
    if (const WaitKey* key = key_of(backend)) count_key(current_.wait_samples, counters_, key);
  }
  current_.snapshot_durations.observe(
      std::chrono::duration<double>(snapshot.query_duration).count());
  for (const auto& wait : tracker_.observe(snapshot)) {
    auto durations = duration_histograms_.find(wait.key);
    if (durations == duration_histograms_.end()) {
      auto [entry, inserted] = current_.wait_durations.try_emplace(
          std::pair{wait.key->wait_event_type, wait.key->wait_event}, wait_duration_buckets());
      durations = duration_histograms_.emplace(wait.key, &entry->second).first;
    }
    durations->second->observe(wait.estimated_length.count());
  }
  if (snapshot.taken_at_steady - last_publish_ >= kPublishEvery) publish();
}

void ContinuousProfile::on_profile_delta(const Profile& delta, SystemClock::time_point) {
  current_.snapshots += delta.snapshots();
  for (const auto& [key, count] : delta.counts()) current_.wait_samples[key] += count;
  publish();
}

void ContinuousProfile::on_missed_ticks(uint64_t ticks) {
  current_.missed_ticks += ticks;
  // Missed ticks must show even when no snapshot comes to publish them.
  if (SteadyClock::now() - last_publish_ >= kPublishEvery) publish();
}

void ContinuousProfile::on_connection_state(bool up, SteadyClock::time_point, std::string_view) {
  current_.up = up;
  // The next snapshot after a gap is not consecutive with the last one before it.
  if (!up) tracker_.reset();
  publish();
}

void ContinuousProfile::on_collector_status(std::string_view collector, base::Seconds duration,
                                            bool success) {
  current_.collectors[std::string(collector)] = {duration, success};
}
void ContinuousProfile::on_kernel_times(const KernelTimes& times) {
  for (const auto& [backend_type, time] : times.by_backend_type) {
    current_.kernel_by_backend_type[backend_type].add(time);
  }
}

void ContinuousProfile::set_run(std::optional<ActiveRun> run) {
  current_.run = std::move(run);
  publish();
}

void ContinuousProfile::publish() {
  published_.store(std::make_shared<const TargetMetrics>(current_));
  last_publish_ = SteadyClock::now();
}

}  // namespace pgwaitprof::model
