// The daemon's continuous profile: its kernel check over the last minute of kernel readings
// (pgwaitprof_kernel_check_* on /metrics) and the source in use as the sampler reports it.
#include "model/continuous_profile.h"

#include <gtest/gtest.h>

namespace pgwaitprof::model {
namespace {

// A snapshot of `running` client backends without a wait event (state R) and one idle in
// ClientRead.
Snapshot snapshot_of(int running) {
  Snapshot snapshot;
  snapshot.taken_at_steady = SteadyClock::now();
  for (int index = 0; index <= running; ++index) {
    BackendSample backend;
    backend.pid = 100 + index;
    backend.backend_type = "client backend";
    backend.state = index < running ? "active" : "idle";
    if (index == running) {
      backend.wait_event_type = "Client";
      backend.wait_event = "ClientRead";
    } else {
      backend.kernel_state = 'R';
    }
    snapshot.backends.push_back(backend);
  }
  return snapshot;
}

// One second of readings: 100 snapshots of `running` CPU backends, then the kernel's times.
void second_of(ContinuousProfile& profile, SteadyClock::time_point& at, int running,
               double on_cpu_s, double runqueue_s) {
  for (int tick = 0; tick < 100; ++tick) profile.on_snapshot(snapshot_of(running));
  KernelTimes times;
  times.from = at;
  times.to = at += std::chrono::seconds(1);
  times.by_group[kClientBackends] = {base::Seconds(on_cpu_s), base::Seconds(runqueue_s)};
  times.by_backend_type["client backend"] = {base::Seconds(on_cpu_s), base::Seconds(runqueue_s)};
  profile.on_kernel_times(times);
}

TEST(ContinuousProfileTest, KernelCheckCoversTheLastMinute) {
  ContinuousProfile profile("t", SamplerSource::kAuto, 100);
  EXPECT_EQ(profile.current().requested, SamplerSource::kAuto);
  EXPECT_EQ(profile.current().source, SamplerSource::kActivity);
  profile.on_source(SamplerSource::kMemory, "local server, read as root");
  EXPECT_EQ(profile.current().source, SamplerSource::kMemory);
  EXPECT_FALSE(profile.current().kernel_check);
  auto at = SteadyClock::now();
  // A minute at 2 running backends that the kernel saw on a CPU...
  for (int second = 0; second < 60; ++second) second_of(profile, at, 2, 2.0, 0.0);
  ASSERT_TRUE(profile.current().kernel_check);
  EXPECT_NEAR(profile.current().kernel_check->sampled_cpu_aas, 2.0, 1e-9);
  EXPECT_NEAR(profile.current().kernel_check->on_cpu_aas, 2.0, 1e-9);
  EXPECT_TRUE(profile.current().kernel_check->within());
  // ...then half a minute at 1 sampled against 2 on a CPU: the window holds both halves.
  for (int second = 0; second < 30; ++second) second_of(profile, at, 1, 2.0, 0.0);
  EXPECT_NEAR(profile.current().kernel_check->sampled_cpu_aas, 1.5, 1e-9);
  EXPECT_EQ(profile.current().kernel_check->intervals, 60u);
  // A minute later only the new readings count, and they are far below the kernel's.
  for (int second = 0; second < 30; ++second) second_of(profile, at, 1, 2.0, 0.0);
  EXPECT_NEAR(profile.current().kernel_check->sampled_cpu_aas, 1.0, 1e-9);
  EXPECT_NEAR(profile.current().kernel_check->on_cpu_aas, 2.0, 1e-9);
  EXPECT_TRUE(profile.current().kernel_check->judged());
  EXPECT_FALSE(profile.current().kernel_check->within());
  // Another source is checked anew.
  profile.on_source(SamplerSource::kActivity, "the server is on another host");
  EXPECT_FALSE(profile.current().kernel_check);
  EXPECT_EQ(profile.published()->source, SamplerSource::kActivity);
}

// A traced profile as collectors/trace delivers it: counts of microseconds over the wall-clock
// microseconds, the traced parts beside them.
Profile traced_delta(uint64_t wall_us, double sleep_s, uint64_t sleeps) {
  Profile delta;
  delta.add_snapshots(wall_us);
  const WaitKey key{"client backend", "active", "Timeout", "PgSleep"};
  TracedTime time;
  time.blocked_s = sleep_s * static_cast<double>(sleeps);
  time.ended_blocked_s = time.blocked_s;
  time.runqueue_s = 0.001;
  time.waits = sleeps;
  time.histogram[1 + (27 - kTracedFirstPower) * kTracedPerPower + 1] = sleeps;
  delta.add(key, static_cast<uint64_t>(time.time_s() * 1e6));
  delta.add_traced(key, time);
  return delta;
}

// The traced source's microseconds are not samples: a daemon target of source trace counts
// no snapshots and no samples from them (they were exported as pgwaitprof_snapshots_total and
// pgwaitprof_wait_samples_total, a million "samples" a second of wall-clock time).
TEST(ContinuousProfileTest, TracedMicrosecondsAreNeitherSnapshotsNorSamples) {
  ContinuousProfile profile("t", SamplerSource::kTrace, 0);
  profile.on_profile_delta(traced_delta(1'000'000, 0.2, 3), SystemClock::now());
  // An interval in which nothing was traced still has its wall-clock time.
  Profile nothing;
  nothing.add_snapshots(1'000'000);
  profile.on_profile_delta(nothing, SystemClock::now());
  EXPECT_EQ(profile.current().snapshots, 0u);
  EXPECT_TRUE(profile.current().wait_samples.empty());
  EXPECT_EQ(profile.published()->snapshots, 0u);
}

TEST(ContinuousProfileTest, TracedDeltasAddUpToTimeWaitsAndDurations) {
  ContinuousProfile profile("t", SamplerSource::kTrace, 0);
  profile.on_profile_delta(traced_delta(1'000'000, 0.2, 3), SystemClock::now());
  profile.on_profile_delta(traced_delta(1'000'000, 0.2, 2), SystemClock::now());
  const auto& traced = profile.published()->traced;
  ASSERT_EQ(traced.size(), 1u);
  const auto& time = traced.at({"client backend", "active", "Timeout", "PgSleep"});
  EXPECT_EQ(time.waits, 5u);
  EXPECT_NEAR(time.blocked_s, 1.0, 1e-12);
  EXPECT_NEAR(time.runqueue_s, 0.002, 1e-12);
  EXPECT_EQ(traced_duration_histogram(time).count, 5u);
  // A sampler's profile deltas (pg_wait_sampling) still count samples and periods.
  ContinuousProfile sampled("s", SamplerSource::kPgWaitSampling, 0);
  Profile counts;
  counts.add_snapshots(100);
  counts.add({"client backend", "active", "IO", "DataFileRead"}, 40);
  sampled.on_profile_delta(counts, SystemClock::now());
  EXPECT_EQ(sampled.current().snapshots, 100u);
  EXPECT_EQ(sampled.current().wait_samples.size(), 1u);
  EXPECT_TRUE(sampled.current().traced.empty());
}

}  // namespace
}  // namespace pgwaitprof::model
