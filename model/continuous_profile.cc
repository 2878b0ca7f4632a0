// Continuous profile bookkeeping.
#include "model/continuous_profile.h"

namespace pgwaitprof::model {
namespace {
// Scrapes see data at most this old; publishing on every 1 kHz snapshot would be wasted copies.
constexpr auto kPublishEvery = std::chrono::milliseconds(100);
// The kernel check on /metrics covers the last minute of kernel readings (one a second).
constexpr base::Seconds kCheckWindow{60};
}  // namespace

ContinuousProfile::ContinuousProfile(std::string target, SamplerSource source, double hz,
                                     std::map<std::string, std::string> labels) {
  current_.target = std::move(target);
  current_.requested = source;
  current_.source = source == SamplerSource::kAuto ? SamplerSource::kActivity : source;
  current_.hz = hz;
  current_.labels = std::move(labels);
  publish();
}

void ContinuousProfile::on_snapshot(const Snapshot& snapshot) {
  ++current_.snapshots;
  current_.hidden_backends = snapshot.hidden_backends;
  for (const auto& backend : snapshot.backends) {
    const WaitKey* key = key_of(backend);
    if (key == nullptr) continue;
    count_key(current_.wait_samples, counters_, key);
    if (key->wait_event_type == kCpu && key->backend_type == "client backend") {
      ++since_check_.cpu_samples;
    }
  }
  ++since_check_.snapshots;
  since_check_.running.add(snapshot);
  current_.snapshot_durations.observe(snapshot.query_duration);
  for (const auto& wait : tracker_.observe(snapshot)) {
    auto durations = duration_histograms_.find(wait.key);
    if (durations == duration_histograms_.end()) {
      auto [entry, inserted] = current_.wait_durations.try_emplace(
          std::pair{wait.key->wait_event_type, wait.key->wait_event}, wait_duration_buckets());
      durations = duration_histograms_.emplace(wait.key, &entry->second).first;
    }
    durations->second->observe(wait.estimated_length);
  }
  if (snapshot.taken_at_steady - last_publish_ >= kPublishEvery) publish();
}

void ContinuousProfile::on_profile_delta(const Profile& delta, SystemClock::time_point) {
  // A traced profile's counts are microseconds and its snapshots the wall-clock microseconds
  // (profile.h); by the source, as an interval with nothing traced has no traced keys either.
  if (current_.source == SamplerSource::kTrace || delta.exact()) {
    for (const auto& [key, time] : delta.traced()) current_.traced[key].merge(time);
  } else {
    current_.snapshots += delta.snapshots();
    for (const auto& [key, count] : delta.counts()) current_.wait_samples[key] += count;
  }
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
  // A reading without client backends (none connected) counts as their zero time.
  const auto clients = times.by_group.find(kClientBackends);
  since_check_.clients = clients != times.by_group.end() ? clients->second : KernelTime{};
  const auto exited = times.by_group.find(kExitedProcesses);
  since_check_.exited = exited != times.by_group.end()
                            ? exited->second.on_cpu + exited->second.runqueue
                            : base::Seconds(0);
  // A reading covers its own interval (the run's recorder splits it over its timeline instead).
  since_check_.clients.covered = times.to - times.from;
  check_window_.push_back(since_check_);
  since_check_ = {};
  base::Seconds covered{0};
  for (const auto& reading : check_window_) covered += reading.clients.covered;
  while (covered - check_window_.front().clients.covered >= kCheckWindow) {
    covered -= check_window_.front().clients.covered;
    check_window_.pop_front();
  }
  SampledCounts counts;
  for (const auto& reading : check_window_) {
    if (reading.snapshots == 0 || reading.clients.covered <= base::Seconds(0)) continue;
    counts.add(reading.cpu_samples, reading.snapshots, reading.running, reading.clients,
               reading.exited);
  }
  if (!counts.intervals.empty()) current_.kernel_check = make_kernel_check(counts);
}

void ContinuousProfile::on_source(SamplerSource source, std::string_view) {
  if (source == current_.source) return;
  current_.source = source;
  current_.kernel_check.reset();  // a new source is checked anew
  check_window_.clear();
  since_check_ = {};
  publish();
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
