// Stall detection and the run recorder's filing of samples and progress into intervals.
#include "model/run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "model/run_analysis.h"
#include "model/run_recorder.h"

namespace pgwaitprof::model {
namespace {

using namespace std::chrono_literals;

BackendSample client(int pid, std::string type, std::string event) {
  BackendSample sample;
  sample.pid = pid;
  sample.backend_type = "client backend";
  sample.state = "active";
  sample.wait_event_type = std::move(type);
  sample.wait_event = std::move(event);
  return sample;
}

TimelineSlice slice(double start_s, double tps, const std::vector<BackendSample>& backends,
                    int snapshots = 10) {
  TimelineSlice result;
  result.start = base::Seconds(start_s);
  result.duration = base::Seconds(1);
  result.loadgen = LoadgenProgress{start_s + 1, tps, 1.0, 0.5, 0, std::nullopt, 0};
  for (int taken = 0; taken < snapshots; ++taken) {
    Snapshot snapshot;
    snapshot.backends = backends;
    result.profile.add_snapshot(snapshot);
  }
  return result;
}

TEST(DetectStalls, IntervalsBelowAFifthOfTheMedianWithTheirWaits) {
  const std::vector<BackendSample> running{client(1, "", ""), client(2, "LWLock", "WALWrite")};
  const std::vector<BackendSample> blocked{client(1, "Lock", "relation"),
                                           client(2, "Lock", "relation")};
  std::vector<TimelineSlice> timeline;
  for (int second = 0; second < 10; ++second) {
    const bool stalled = second == 4 || second == 5;
    timeline.push_back(slice(second, stalled ? 0 : 1000 + second, stalled ? blocked : running));
  }
  timeline[5].background.checkpoint = true;
  const auto stalls = detect_stalls(timeline);
  ASSERT_EQ(stalls.size(), 1u);  // consecutive stalled intervals are one stall
  EXPECT_DOUBLE_EQ(stalls[0].start.count(), 4);
  EXPECT_DOUBLE_EQ(stalls[0].duration.count(), 2);
  EXPECT_DOUBLE_EQ(stalls[0].tps, 0);
  EXPECT_GT(stalls[0].median_tps, 1000);
  ASSERT_FALSE(stalls[0].waits.empty());
  EXPECT_EQ(stalls[0].waits[0].wait, "Lock | relation");
  EXPECT_DOUBLE_EQ(stalls[0].waits[0].backends, 2);
  EXPECT_DOUBLE_EQ(stalls[0].client_backends, 2);
  EXPECT_EQ(stalls[0].background, "ch");
  EXPECT_EQ(stalls[0].summary(),
            "4-6 s: 0 tps, 2/2 backends on Lock | relation (median 1003 tps) [ch]");
}

TEST(DetectStalls, NoneWithoutADropOrWithoutEnoughIntervals) {
  std::vector<TimelineSlice> steady;
  for (int second = 0; second < 10; ++second)
    steady.push_back(slice(second, 900 + second * 10, {}));
  EXPECT_TRUE(detect_stalls(steady).empty());
  // A slow interval at 25 % of the median is slow, not stalled.
  steady[3].loadgen->tps = 240;
  EXPECT_TRUE(detect_stalls(steady).empty());
  EXPECT_TRUE(detect_stalls({slice(0, 0, {}), slice(1, 1000, {})}).empty());
}

TEST(DetectStalls, NanLatencyIntervalsStillCount) {
  std::vector<TimelineSlice> timeline;
  for (int second = 0; second < 6; ++second)
    timeline.push_back(slice(second, second == 2 ? 0 : 500, {}));
  timeline[2].loadgen->latency_avg_ms = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(detect_stalls(timeline).size(), 1u);
}

TEST(RunRecorder, SamplesAndProgressLandInTheirIntervals) {
  const auto start = SteadyClock::time_point{} + 1h;
  const auto start_wall = SystemClock::time_point{} + std::chrono::hours(24 * 365 * 50);
  RunRecorder recorder(start, start_wall, 1s);
  for (int tick = 0; tick < 30; ++tick) {  // 3 s at 10 Hz
    Snapshot snapshot;
    snapshot.taken_at_steady = start + tick * 100ms + 5ms;
    snapshot.query_duration = 300us;
    snapshot.backends = {client(1, tick < 10 ? "IO" : "", tick < 10 ? "WALSync" : "")};
    snapshot.backends[0].query_id = 42;
    recorder.on_snapshot(snapshot);
  }
  recorder.on_missed_ticks(1);
  // "progress: 2.0 s" reports the second interval, [1 s, 2 s).
  recorder.add_progress(LoadgenProgress{2.0, 777, 1.5, 0.2, 0, std::nullopt, 0});
  // --progress-timestamp prints Unix time: the end of the third interval.
  const double epoch_s = std::chrono::duration<double>(start_wall.time_since_epoch()).count();
  recorder.add_progress(LoadgenProgress{epoch_s + 3.0, 888, 1.5, 0.2, 0, std::nullopt, 0});
  recorder.on_background(start + 2500ms, Background{true, false, false});

  model::Run run;
  recorder.finish(start + 3s, run);
  ASSERT_EQ(run.timeline.size(), 3u);
  EXPECT_EQ(run.timeline[0].profile.snapshots(), 10u);
  EXPECT_EQ(run.timeline[0].profile.by_wait_class().at("IO"), 10u);
  EXPECT_FALSE(run.timeline[0].loadgen);
  EXPECT_DOUBLE_EQ(run.timeline[1].loadgen->tps, 777);
  EXPECT_DOUBLE_EQ(run.timeline[2].loadgen->tps, 888);
  EXPECT_TRUE(run.timeline[2].background.autovacuum);
  EXPECT_EQ(run.profile.snapshots(), 30u);
  EXPECT_EQ(run.sampler.snapshots, 30u);
  EXPECT_EQ(run.sampler.missed_ticks, 1u);
  EXPECT_NEAR(run.sampler.achieved_hz, 10, 1e-9);
  EXPECT_NEAR(run.sampler.snapshot_p99_ms, 0.3, 0.3 * 0.05);  // 5 % buckets
  EXPECT_EQ(run.query_ids.at(42), 30u);
  // The profile is the sum of the timeline.
  Profile summed;
  for (const auto& interval : run.timeline) summed.merge(interval.profile);
  EXPECT_EQ(summed.counts(), run.profile.counts());
}

TEST(ReportJson, RoundTripsAndRejectsOtherSchemaVersions) {
  model::Run run;
  run.id = "r";
  run.timeline.push_back(slice(0, 100, {client(1, "Lock", "tuple")}));
  run.timeline[0].loadgen->latency_avg_ms = std::numeric_limits<double>::quiet_NaN();
  run.profile = run.timeline[0].profile;
  const auto json = to_json(run);
  const auto back = run_from_json(json);
  EXPECT_EQ(to_json(back), json);
  EXPECT_TRUE(std::isnan(back.timeline[0].loadgen->latency_avg_ms));
  auto future = json;
  future["schema_version"] = kReportSchemaVersion + 1;
  EXPECT_THROW(run_from_json(future), std::runtime_error);
  auto ancient = json;
  ancient["schema_version"] = 0;
  EXPECT_THROW(run_from_json(ancient), std::runtime_error);
}

}  // namespace
}  // namespace pgwaitprof::model
