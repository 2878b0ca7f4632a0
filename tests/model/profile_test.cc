// Profile arithmetic, classification and wait duration estimation.
#include "model/profile.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/wait_tracker.h"

namespace pgwaitprof::model {
namespace {

BackendSample backend(int pid, std::string state, std::string type, std::string event,
                      std::string backend_type = "client backend") {
  BackendSample sample;
  sample.pid = pid;
  sample.backend_type = std::move(backend_type);
  sample.state = std::move(state);
  sample.wait_event_type = std::move(type);
  sample.wait_event = std::move(event);
  sample.backend_start = std::chrono::microseconds(1000 + pid);
  return sample;
}

TEST(Classify, ActiveWithoutWaitIsCpu) {
  auto key = classify(backend(1, "active", "", ""));
  ASSERT_TRUE(key);
  EXPECT_EQ(key->wait_event_type, "CPU");
  EXPECT_EQ(key->wait_event, "CPU");
  EXPECT_EQ(key->state, "active");
  EXPECT_FALSE(is_idle(*key));
}

TEST(Classify, IdleClientReadStaysClientReadAndIdle) {
  auto key = classify(backend(1, "idle", "Client", "ClientRead"));
  ASSERT_TRUE(key);
  EXPECT_EQ(display_name(*key), "Client | ClientRead");
  EXPECT_TRUE(is_idle(*key));
}

TEST(Classify, IdleInTransactionIsLoadNotIdle) {
  auto key = classify(backend(1, "idle in transaction (aborted)", "Client", "ClientRead"));
  ASSERT_TRUE(key);
  EXPECT_EQ(key->state, "idle in transaction");
  EXPECT_FALSE(is_idle(*key));
}

TEST(Classify, BackgroundMainLoopIsIdleButItsIoIsNot) {
  auto sleeping = classify(backend(2, "", "Activity", "CheckpointerMain", "checkpointer"));
  auto writing = classify(backend(2, "", "IO", "DataFileSync", "checkpointer"));
  ASSERT_TRUE(sleeping && writing);
  EXPECT_EQ(sleeping->state, "background");
  EXPECT_TRUE(is_idle(*sleeping));
  EXPECT_FALSE(is_idle(*writing));
}

TEST(Classify, BackgroundSleepsAreIdle) {
  auto delay = classify(backend(2, "", "Timeout", "CheckpointWriteDelay", "checkpointer"));
  auto collector = classify(backend(3, "", "Extension", "Extension", "pg_wait_sampling collector"));
  auto vacuum_delay = classify(backend(4, "active", "Timeout", "VacuumDelay", "autovacuum worker"));
  ASSERT_TRUE(delay && collector && vacuum_delay);
  EXPECT_TRUE(is_idle(*delay));
  EXPECT_TRUE(is_idle(*collector));
  // A session that sleeps is still load: its sleep is part of what it does.
  EXPECT_FALSE(is_idle(*vacuum_delay));
}

TEST(Classify, HiddenBackendsAreNotCounted) {
  auto sample = backend(3, "", "", "");
  sample.hidden = true;
  EXPECT_FALSE(classify(sample));
}

TEST(Profile, SharesAasAndErrors) {
  Profile profile;
  for (int snapshot = 0; snapshot < 100; ++snapshot) {
    Snapshot taken;
    taken.backends.push_back(
        backend(1, "active", snapshot < 25 ? "LWLock" : "", snapshot < 25 ? "WALWrite" : ""));
    taken.backends.push_back(backend(2, "idle", "Client", "ClientRead"));
    profile.add_snapshot(taken);
  }
  EXPECT_EQ(profile.snapshots(), 100u);
  EXPECT_EQ(profile.total(false), 100u);
  EXPECT_EQ(profile.total(true), 200u);
  auto stats = profile.stats(false);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(display_name(stats[0].key), "LWLock | WALWrite");  // ascending by count
  EXPECT_DOUBLE_EQ(stats[0].share, 0.25);
  EXPECT_DOUBLE_EQ(stats[0].aas, 0.25);
  // A profile alone has no errors: they need the timeline (run_estimates.h), never the
  // binomial formula over snapshots.
  EXPECT_TRUE(std::isnan(stats[0].share_stderr));
  EXPECT_FALSE(stats[0].errors_reliable);
  EXPECT_EQ(stats[1].key.wait_event_type, "CPU");
  EXPECT_DOUBLE_EQ(stats[1].aas, 0.75);
  EXPECT_EQ(profile.by_wait_class().at("LWLock"), 25u);
  EXPECT_EQ(profile.by_wait_class().count("Client"), 0u);  // idle is not load
  EXPECT_EQ(profile.stats(true).size(), 3u);
}

TEST(InternKey, OneObjectPerDistinctKeyAndTheSameKeyAsClassify) {
  const auto first = backend(1, "idle in transaction (aborted)", "Client", "ClientRead");
  const auto second = backend(2, "idle in transaction", "Client", "ClientRead");
  const WaitKey* key = intern_key(first);
  ASSERT_NE(key, nullptr);
  // Same state class and event: the same object, equal to what classify() builds.
  EXPECT_EQ(intern_key(second), key);
  EXPECT_EQ(*key, *classify(first));
  EXPECT_NE(intern_key(backend(1, "active", "Client", "ClientRead")), key);
  // The kernel's state is part of a key without a wait event.
  auto sleeping = backend(3, "active", "", "");
  sleeping.kernel_state = 'S';
  EXPECT_EQ(intern_key(sleeping)->wait_event, kKernelSleeping);
  EXPECT_EQ(intern_key(backend(3, "active", "", ""))->wait_event_type, kCpu);
  auto hidden = first;
  hidden.hidden = true;
  EXPECT_EQ(intern_key(hidden), nullptr);
}

TEST(InternKey, SinksUseTheFiledKeyAndFallBackToInterning) {
  Snapshot snapshot;
  snapshot.backends = {backend(1, "active", "IO", "WALSync"), backend(2, "active", "", "")};
  EXPECT_EQ(key_of(snapshot.backends[0])->wait_event, "WALSync");
  assign_keys(snapshot);
  EXPECT_EQ(snapshot.backends[0].key, intern_key(snapshot.backends[0]));
  EXPECT_EQ(snapshot.backends[1].key->wait_event_type, kCpu);
}

TEST(Profile, ACopyCountsApartFromItsOriginal) {
  Snapshot snapshot;
  snapshot.backends = {backend(1, "active", "IO", "WALSync")};
  Profile original;
  original.add_snapshot(snapshot);  // builds the original's index of counters
  Profile copy = original;
  copy.add_snapshot(snapshot);
  Profile assigned;
  assigned = copy;
  assigned.add_snapshot(snapshot);
  const WaitKey key = *classify(snapshot.backends[0]);
  EXPECT_EQ(original.counts().at(key), 1u);
  EXPECT_EQ(copy.counts().at(key), 2u);
  EXPECT_EQ(assigned.counts().at(key), 3u);
  Profile moved = std::move(assigned);
  moved.add_snapshot(snapshot);
  EXPECT_EQ(moved.counts().at(key), 4u);
  EXPECT_EQ(moved.snapshots(), 4u);
}

TEST(Histogram, BucketsAreUpperInclusive) {
  Histogram histogram({base::Seconds(0.1), base::Seconds(1)});
  histogram.observe(base::Seconds(0.1));
  histogram.observe(base::Seconds(0.5));
  histogram.observe(base::Seconds(7));
  EXPECT_EQ(histogram.bucket_counts, (std::vector<uint64_t>{1, 1, 1}));
  EXPECT_EQ(histogram.count, 3u);
  EXPECT_DOUBLE_EQ(histogram.sum.count(), 7.6);
}

// Feeds one tracker snapshots taken at offsets from a fixed start.
struct TrackedSnapshots {
  WaitTracker tracker;
  SteadyClock::time_point start = SteadyClock::time_point{} + std::chrono::hours(1);
  std::vector<CompletedWait> operator()(std::chrono::milliseconds offset,
                                        std::vector<BackendSample> backends) {
    Snapshot snapshot;
    snapshot.taken_at_steady = start + offset;
    snapshot.backends = std::move(backends);
    return tracker.observe(snapshot);
  }
};

TEST(WaitTracker, ContiguousWaitIsMiddleOfItsBounds) {
  using namespace std::chrono_literals;
  TrackedSnapshots at;
  auto& tracker = at.tracker;
  EXPECT_TRUE(at(0ms, {backend(7, "active", "", "")}).empty());
  EXPECT_TRUE(at(10ms, {backend(7, "active", "Lock", "tuple")}).empty());
  EXPECT_TRUE(at(20ms, {backend(7, "active", "Lock", "tuple")}).empty());
  EXPECT_TRUE(at(30ms, {backend(7, "active", "Lock", "tuple")}).empty());
  auto done = at(40ms, {backend(7, "active", "IO", "WALSync")});
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].key->wait_event, "tuple");
  // Seen at 10..30 ms: at least 20 ms, at most 40 ms (0..40): estimate 30 ms.
  EXPECT_NEAR(done[0].estimated_length.count(), 0.030, 1e-9);
  EXPECT_EQ(tracker.open_waits(), 1u);
  // The backend goes away: its open wait ends with it.
  auto gone = at(50ms, {});
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].key->wait_event, "WALSync");
  EXPECT_EQ(tracker.open_waits(), 0u);
}

TEST(WaitTracker, PidReuseIsANewBackend) {
  using namespace std::chrono_literals;
  WaitTracker tracker;
  Snapshot first;
  first.taken_at_steady = SteadyClock::time_point{} + 1s;
  first.backends = {backend(9, "active", "Lock", "tuple")};
  tracker.observe(first);
  Snapshot second = first;
  second.taken_at_steady += 10ms;
  second.backends[0].backend_start += 1s;  // same pid, new backend
  EXPECT_EQ(tracker.observe(second).size(), 1u);
}

TEST(WaitTracker, AWaitMissingFromOneSnapshotIsTwoWaits) {
  using namespace std::chrono_literals;
  TrackedSnapshots at;
  auto& tracker = at.tracker;
  const auto waiting = backend(4, "active", "LWLock", "WALWrite");
  EXPECT_TRUE(at(0ms, {waiting}).empty());
  EXPECT_TRUE(at(10ms, {waiting}).empty());
  // On a CPU in between: the first wait ended (seen 0..10 ms, bounds 0..20 ms: 15 ms).
  const auto ended = at(20ms, {backend(4, "active", "", "")});
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_NEAR(ended[0].estimated_length.count(), 0.015, 1e-9);
  EXPECT_EQ(tracker.open_waits(), 0u);
  EXPECT_TRUE(at(30ms, {waiting}).empty());
  // Seen at 30 ms only, between 20 and 40 ms: 10 ms.
  const auto second = at(40ms, {});
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NEAR(second[0].estimated_length.count(), 0.010, 1e-9);
}

// The exported bounds of traced durations are powers of two, 1.024 us to 68.7 s, and each is an
// edge of the traced buckets, so no traced bucket straddles one.
TEST(TracedDurationHistogram, BoundsArePowersOfTwoNanosecondsOnTracedEdges) {
  const auto bounds = traced_duration_buckets();
  ASSERT_EQ(bounds.size(), 27u);
  EXPECT_DOUBLE_EQ(bounds.front().count(), 1024e-9);
  EXPECT_DOUBLE_EQ(bounds.back().count(), std::ldexp(1.0, 36) * 1e-9);
  for (size_t bound = 1; bound < bounds.size(); ++bound) {
    EXPECT_DOUBLE_EQ(bounds[bound].count(), 2 * bounds[bound - 1].count()) << bound;
  }
  // (Equal but for the last bit: a nanosecond is not a binary fraction of a second.)
  for (const auto bound : bounds) {
    int edges = 0;
    for (int index = 0; index < kTracedBuckets; ++index) {
      if (std::abs(traced_bucket_upper_s(index) - bound.count()) <= 1e-12 * bound.count()) ++edges;
    }
    EXPECT_EQ(edges, 1) << bound.count();
  }
}

// Every traced bucket is summed, whole, into the exported bucket whose range holds its own: a
// distinct count per traced bucket shows where each one went.
TEST(TracedDurationHistogram, EachTracedBucketLandsWholeInTheBucketHoldingIt) {
  TracedTime traced;
  uint64_t total = 0;
  for (int index = 0; index < kTracedBuckets; ++index) {
    traced.histogram[index] = 1ull << (index % 20);
    total += traced.histogram[index];
  }
  traced.blocked_s = 12.5;
  traced.ended_blocked_s = 12.5;
  traced.waits = total;
  const auto exported = traced_duration_histogram(traced);
  const auto& bounds = exported.upper_bounds;
  ASSERT_EQ(exported.bucket_counts.size(), bounds.size() + 1);
  std::vector<uint64_t> expected(bounds.size() + 1, 0);
  for (int index = 0; index < kTracedBuckets; ++index) {
    // The exported bucket with the first bound at or above the traced bucket's upper edge.
    const double upper = traced_bucket_upper_s(index);
    size_t bucket = 0;
    while (bucket < bounds.size() && bounds[bucket].count() < upper * (1 - 1e-12)) ++bucket;
    // ...and the traced bucket starts at or above the bound before it.
    if (bucket > 0) {
      EXPECT_GE(traced_bucket_lower_s(index), bounds[bucket - 1].count() * (1 - 1e-12)) << index;
    }
    expected[bucket] += traced.histogram[index];
  }
  EXPECT_EQ(exported.bucket_counts, expected);
  EXPECT_EQ(exported.count, total);
  EXPECT_DOUBLE_EQ(exported.sum.count(), 12.5);
}

TEST(TracedDurationHistogram, APgSleepOf200MsIsBelowTheBoundAfter134Ms) {
  // 0.2002 s: bucket [2^27 + 2^25, 2^27 + 2 * 2^25) ns = [167.8, 201.3) ms.
  TracedTime traced;
  traced.histogram[1 + (27 - kTracedFirstPower) * kTracedPerPower + 1] = 10;
  traced.blocked_s = 2.002;
  traced.ended_blocked_s = 2.002;
  const auto exported = traced_duration_histogram(traced);
  size_t bucket = 0;
  while (exported.bucket_counts[bucket] == 0) ++bucket;
  EXPECT_DOUBLE_EQ(exported.upper_bounds[bucket].count(), 0.268435456);
  EXPECT_DOUBLE_EQ(exported.upper_bounds[bucket - 1].count(), 0.134217728);
  EXPECT_EQ(exported.bucket_counts[bucket], 10u);
  EXPECT_EQ(exported.count, 10u);
  // Nothing traced, nothing exported: an empty histogram, every bucket 0.
  const auto empty = traced_duration_histogram(TracedTime{});
  EXPECT_EQ(empty.count, 0u);
  EXPECT_EQ(empty.sum.count(), 0);
}

}  // namespace
}  // namespace pgwaitprof::model
