// Stall detection and the run recorder's filing of samples and progress into intervals.
#include "model/run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "model/run_analysis.h"
#include "model/run_estimates.h"
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

LoadgenProgress progress(double elapsed_s, double tps, double latency_avg_ms = 1.0,
                         double latency_stddev_ms = 0.5) {
  LoadgenProgress result;
  result.elapsed = base::Seconds(elapsed_s);
  result.tps = tps;
  result.latency_avg = base::Milliseconds(latency_avg_ms);
  result.latency_stddev = base::Milliseconds(latency_stddev_ms);
  return result;
}

TimelineSlice slice(double start_s, double tps, const std::vector<BackendSample>& backends,
                    int snapshots = 10) {
  TimelineSlice result;
  result.start = base::Seconds(start_s);
  result.duration = base::Seconds(1);
  result.loadgen = progress(start_s + 1, tps);
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
            "4-6 s: 0 tps, 2/2 backends on Lock | relation (steady 1007 tps) [ch]");
}

// Issue 47: a lock held over 6 s of a 9 s run gave 0 tps in most intervals, the median was 0
// and no stall was found.
TEST(DetectStalls, AStallOverMostOfTheRunIsFound) {
  const std::vector<BackendSample> running{client(1, "", ""), client(2, "LWLock", "WALWrite")};
  const std::vector<BackendSample> blocked{client(1, "Lock", "relation"),
                                           client(2, "Lock", "relation")};
  std::vector<TimelineSlice> timeline;
  for (int second = 0; second < 9; ++second) {
    const bool stalled = second >= 2 && second < 8;
    timeline.push_back(slice(second, stalled ? 0 : 800 + second, stalled ? blocked : running));
  }
  const auto stalls = detect_stalls(timeline);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_DOUBLE_EQ(stalls[0].start.count(), 2);
  EXPECT_DOUBLE_EQ(stalls[0].duration.count(), 6);
  EXPECT_DOUBLE_EQ(stalls[0].median_tps, 0);
  ASSERT_FALSE(stalls[0].waits.empty());
  EXPECT_EQ(stalls[0].waits[0].wait, "Lock | relation");
  // Three intervals ran, six did not: the upper quartile is a running one's.
  EXPECT_DOUBLE_EQ(stalls[0].steady_tps, 800);
  EXPECT_EQ(stalls[0].summary(), "2-8 s: 0 tps, 2/2 backends on Lock | relation (steady 800 tps)");
  // A trickle through the lock (a few transactions a second) is a stall all the same.
  for (int second = 2; second < 8; ++second) timeline[second].loadgen->tps = 3;
  ASSERT_EQ(detect_stalls(timeline).size(), 1u);
  EXPECT_DOUBLE_EQ(detect_stalls(timeline)[0].duration.count(), 6);
}

TEST(DetectStalls, NoTransactionWhileClientsAreBusyIsAStallWithoutASteadyLevel) {
  const std::vector<BackendSample> blocked{client(1, "Lock", "transactionid"),
                                           client(2, "Lock", "transactionid")};
  std::vector<TimelineSlice> timeline;
  for (int second = 0; second < 5; ++second) timeline.push_back(slice(second, 0, blocked));
  const auto stalls = detect_stalls(timeline);
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_DOUBLE_EQ(stalls[0].duration.count(), 5);
  EXPECT_EQ(stalls[0].summary(), "0-5 s: 0 tps, 2/2 backends on Lock | transactionid");
  // No transaction and no busy client backend (a load between its transactions, an idle
  // command): nothing stalled.
  std::vector<TimelineSlice> idle;
  for (int second = 0; second < 5; ++second) idle.push_back(slice(second, 0, {}));
  EXPECT_TRUE(detect_stalls(idle).empty());
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
  timeline[2].loadgen->latency_avg = base::Milliseconds(std::numeric_limits<double>::quiet_NaN());
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
  recorder.add_progress(progress(2.0, 777, 1.5, 0.2));
  // --progress-timestamp prints Unix time: the end of the third interval.
  const double epoch_s = std::chrono::duration<double>(start_wall.time_since_epoch()).count();
  recorder.add_progress(progress(epoch_s + 3.0, 888, 1.5, 0.2));
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
  EXPECT_NEAR(run.sampler.snapshot_p99.count(), 0.3, 0.3 * 0.05);  // 5 % buckets
  EXPECT_EQ(run.query_ids.at(42), 30u);
  // The profile is the sum of the timeline.
  Profile summed;
  for (const auto& interval : run.timeline) summed.merge(interval.profile);
  EXPECT_EQ(summed.counts(), run.profile.counts());
}

namespace {

// What the server's counters show, read every 100 ms from `from` to `to` (run seconds): each
// reading the transactions handed over in it (`hand_overs`: time and count).
void read_hand_overs(RunRecorder& recorder, SteadyClock::time_point start, double from, double to,
                     const std::vector<std::pair<double, double>>& hand_overs) {
  const auto at = [start](double s) {
    return start + std::chrono::duration_cast<SteadyClock::duration>(base::Seconds(s));
  };
  for (double reading = from; reading < to - 1e-9; reading += 0.1) {
    double count = 0;
    for (const auto& [when, transactions] : hand_overs) {
      if (when > reading && when <= reading + 0.1) count += transactions;
    }
    recorder.on_server_throughput({at(reading), at(reading + 0.1), count, std::nullopt});
  }
}

}  // namespace

// Issue 47 item 13: backends hand their counts to the server when they go idle, at most once a
// second, so a reading's increase holds the second before the hand-overs it saw: read ten times
// a second, it is spread evenly over the second before the middle of its reading (never before
// the run); one over half an interval (readings missed) is marked as spread.
TEST(RunRecorder, ServerThroughputIsTheSecondBeforeTheHandOversSeen) {
  const auto start = SteadyClock::time_point{} + 1h;
  RunRecorder recorder(start, SystemClock::now(), 1s);
  recorder.set_throughput_from_server(true);
  // 100 transactions handed over at 1.05 s and at 2.05 s, 1,000 calls at once.
  recorder.on_server_throughput({start, start + 100ms, 0, 1000.0});
  read_hand_overs(recorder, start, 0.1, 2.1, {{1.05, 100}, {2.05, 100}});
  // Readings missed until 2.9 s: 80 seen in the middle of the long one, 2.5 s.
  recorder.on_server_throughput({start + 2100ms, start + 2900ms, 80, std::nullopt});
  // The last reading, after the load: placed in the second before it began. Own statements
  // taken out can leave a reading below zero (a rate below zero shows as 0).
  recorder.on_server_throughput({start + 2900ms, start + 3s, -10, std::nullopt});
  recorder.add_progress(progress(3.0, 55));
  model::Run run;
  recorder.finish(start + 3s, run);
  ASSERT_EQ(run.timeline.size(), 3u);
  EXPECT_NEAR(*run.timeline[0].server_tps, 95, 1e-6);  // (0.05 s, 1 s] of the first 100
  EXPECT_NEAR(*run.timeline[0].server_calls_per_s, 1000, 1e-6);
  EXPECT_NEAR(*run.timeline[1].server_tps, 5 + 95 + 40 - 1, 1e-6);
  EXPECT_FALSE(run.timeline[1].server_calls_per_s);
  EXPECT_NEAR(*run.timeline[2].server_tps, 5 + 40 - 9, 1e-6);
  EXPECT_FALSE(run.timeline[0].server_tps_spread);
  EXPECT_TRUE(run.timeline[1].server_tps_spread);
  EXPECT_TRUE(run.timeline[2].server_tps_spread);
  // The server's figures are the timeline's tps where the load generator gave none.
  EXPECT_NEAR(run.timeline[0].loadgen->tps, 95, 1e-6);
  EXPECT_TRUE(std::isnan(run.timeline[0].loadgen->latency_avg.count()));
  EXPECT_DOUBLE_EQ(run.timeline[2].loadgen->tps, 55);  // its own report stays
  const auto& totals = recorder.server_totals();
  EXPECT_DOUBLE_EQ(totals.transactions, 270);
  EXPECT_NEAR(totals.covered.count(), 3, 1e-9);
  EXPECT_DOUBLE_EQ(*totals.calls, 1000);
}

TEST(RunRecorder, ServerThroughputBesideTheLoadGeneratorsOwn) {
  const auto start = SteadyClock::time_point{} + 1h;
  RunRecorder recorder(start, SystemClock::now(), 1s);
  recorder.on_server_throughput({start, start + 1s, 480, std::nullopt});
  recorder.add_progress(progress(1.0, 500));
  model::Run run;
  recorder.finish(start + 1s, run);
  ASSERT_EQ(run.timeline.size(), 1u);
  EXPECT_DOUBLE_EQ(run.timeline[0].loadgen->tps, 500);
  EXPECT_DOUBLE_EQ(*run.timeline[0].server_tps, 480);
}

// Issue 47 item 13: pgbench's clock starts after it has checked and vacuumed its tables (0.25 s
// after the run's here), its clients connect (0.07 s), then run, and hand their counts over
// together, once a second from their first transaction and at their exit. Read once a second,
// half a second after each of the run's intervals, every reading held a whole second of the load
// but not the second of pgbench's interval it was set against: on a loaded CI machine pgbench's
// first interval had 1,777 tps against the server's 2,227 and its last 1,536 against 903. Read
// ten times a second, each hand-over is placed in the second before it, and each interval's
// figure is pgbench's within a few per cent: the first one too, and the last one, whose
// transactions the clients handed over at their exit, after pgbench's end.
TEST(RunRecorder, ServerRateCountsTheLoadGeneratorsOwnIntervals) {
  const auto start = SteadyClock::time_point{} + 1h;
  RunRecorder recorder(start, SystemClock::now(), 1s);
  // 2,000 transactions a second from 0.32 s to pgbench's end at 6.25 s.
  std::vector<std::pair<double, double>> hand_overs{{0.32, 8}};  // each client's first at once
  for (int second = 1; second <= 5; ++second) hand_overs.push_back({0.32 + second, 2000});
  hand_overs.push_back({6.33, 2000 * (6.25 - 5.32)});
  read_hand_overs(recorder, start, 0, 6.4, hand_overs);
  // Read a moment after they were printed (the median of those moments is the offset), one
  // of them late; the first interval holds the clients' connections.
  for (int report = 1; report <= 6; ++report) {
    const auto read = start + std::chrono::duration_cast<SteadyClock::duration>(
                                  base::Seconds(0.25 + report + (report == 3 ? 0.6 : 0.01)));
    recorder.add_progress(progress(report, report == 1 ? 2000 * (1 - 0.07) : 2000), read);
  }
  model::Run run;
  recorder.finish(start + 6400ms, run);
  ASSERT_GE(run.timeline.size(), 6u);
  for (size_t index = 0; index < 6; ++index) {
    const double own = run.timeline[index].loadgen->tps;
    EXPECT_NEAR(*run.timeline[index].server_tps, own, own * 0.05) << index;
    EXPECT_FALSE(run.timeline[index].server_tps_spread) << index;
  }
  // The whole run's count is every reading's.
  EXPECT_DOUBLE_EQ(recorder.server_totals().transactions, 8 + 5 * 2000 + 2000 * (6.25 - 5.32));
}

// sysbench does not report its last second (--time=8 gave seven reports): the hand-overs its
// clients make at their exit, which the last reading holds, are not its last reported
// interval's (an integration run had 108.7 tps of the server there against sysbench's 71.7).
TEST(RunRecorder, TheLastHandOversAreNotAnUnreportedLastSecondsReportedOne) {
  const auto start = SteadyClock::time_point{} + 1h;
  RunRecorder recorder(start, SystemClock::now(), 1s);
  // 100 transactions a second from 0.2 s to 8.2 s, handed over at 0.25 s + k, the rest (95) at
  // the exit; the last reading is the one that holds the exit.
  std::vector<std::pair<double, double>> hand_overs;
  for (int second = 1; second <= 7; ++second) hand_overs.push_back({0.25 + second, 100});
  hand_overs.push_back({8.25, 95});
  read_hand_overs(recorder, start, 0, 8.3, hand_overs);
  for (int report = 1; report <= 7; ++report) {
    recorder.add_progress(progress(report, 100),
                          start + std::chrono::duration_cast<SteadyClock::duration>(
                                      base::Seconds(0.2 + report + 0.01)));
  }
  model::Run run;
  recorder.finish(start + 8300ms, run);
  ASSERT_GE(run.timeline.size(), 7u);
  for (size_t index = 1; index < 7; ++index) {
    EXPECT_NEAR(*run.timeline[index].server_tps, 100, 5) << index;
  }
}

// sysbench prints its elapsed time in whole seconds: its report for 3 s, 0.6 s late, reads
// "[ 4s ]", and the next, on time, "[ 4s ]" too. Both are kept, each in the interval it
// reports; before, the second replaced the first and the interval before had none (a null
// that the integration test's careless indexing then threw on).
TEST(RunRecorder, ALateReportRoundedUpMovesBackIntoItsOwnInterval) {
  const auto start = SteadyClock::time_point{} + 1h;
  RunRecorder recorder(start, SystemClock::now(), 1s);
  recorder.add_progress(progress(1, 100), start + 1s);
  recorder.add_progress(progress(2, 200), start + 2s);
  recorder.add_progress(progress(4, 300), start + 3600ms);
  recorder.add_progress(progress(4, 400), start + 4s);
  recorder.add_progress(progress(5, 500), start + 5s);
  model::Run run;
  recorder.finish(start + 5s, run);
  ASSERT_EQ(run.timeline.size(), 5u);
  for (size_t index = 0; index < 5; ++index) {
    ASSERT_TRUE(run.timeline[index].loadgen) << index;
    EXPECT_DOUBLE_EQ(run.timeline[index].loadgen->tps, 100.0 * static_cast<double>(index + 1));
  }
}

// Issue 47: a server restart mid-run with the memory source: the ticks of the outage were
// blamed on a snapshot query, which that source never runs.
TEST(MissedTicksWarning, LeavesOutagesOutAndNamesTheSourcesOwnCause) {
  model::Run run;
  run.sampler.source = SamplerSource::kMemory;
  run.sampler.hz = 100;
  run.sampler.snapshots = 800;
  run.sampler.missed_ticks = 200;
  Outage outage;
  outage.start = base::Seconds(3);
  outage.duration = base::Seconds(2);
  outage.missed_ticks = 200;
  run.outages = {outage};
  EXPECT_FALSE(missed_ticks_warning(run));
  // Ticks missed while connected are the sampler's own: said for the source in use.
  run.sampler.missed_ticks = 300;
  auto warning = missed_ticks_warning(run);
  ASSERT_TRUE(warning);
  EXPECT_TRUE(
      warning->starts_with("the sampler missed 100 of 900 ticks: reading the server's "
                           "memory fell behind the 100 Hz period"))
      << *warning;
  EXPECT_EQ(warning->find("query"), std::string::npos) << *warning;
  run.sampler.source = SamplerSource::kActivity;
  warning = missed_ticks_warning(run);
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("the snapshot query took longer than the 100 Hz period"),
            std::string::npos)
      << *warning;
  // The outage has its own warning, which says whose connection it was.
  Outage lost_run = outage;
  lost_run.connection = kRunConnection;
  lost_run.missed_ticks = 0;
  run.outages.push_back(lost_run);
  const auto warnings = bottleneck_warnings(run, 1);
  const auto said = [&](std::string_view text) {
    return std::any_of(warnings.begin(), warnings.end(),
                       [&](const std::string& line) { return line.starts_with(text); });
  };
  EXPECT_TRUE(said("the sampler lost the target: 3.0-5.0 s: sampler disconnected"));
  EXPECT_TRUE(said("the run lost the target: 3.0-5.0 s: the run's own connection was down"));
}

// Issue 47: the server's count over a run whose connection was down part of the time was
// headlined as the whole run's.
TEST(TpsFigures, TheServersCountSaysWhatTimeItCovers) {
  model::Run run;
  run.duration = base::Seconds(10);
  run.throughput_source = "server";
  LoadgenSummary summary;
  summary.tps = 37.5;
  summary.duration = base::Seconds(2);
  run.loadgen = summary;
  const SteadyWindow window;
  EXPECT_EQ(tps_figures(run, window).whole_run_scope, "2.0 s of the 10.0 s run");
  run.loadgen->duration = base::Seconds(9.9);
  EXPECT_EQ(tps_figures(run, window).whole_run_scope, "whole run");
  // Readings start and stop a moment inside the run; a lost connection is said however short.
  Outage lost;
  lost.connection = kRunConnection;
  lost.start = base::Seconds(4);
  lost.duration = base::Seconds(0.4);
  run.outages = {lost};
  run.loadgen->duration = base::Seconds(9.5);
  EXPECT_EQ(tps_figures(run, window).whole_run_scope, "9.5 s of the 10.0 s run");
  run.outages.clear();
  run.throughput_source = "pgbench";  // pgbench's own figure is over its whole run
  run.loadgen->duration = base::Seconds(2);
  EXPECT_EQ(tps_figures(run, window).whole_run_scope, "whole run");
}

TEST(ReportJson, RoundTripsAndRejectsOtherSchemaVersions) {
  model::Run run;
  run.id = "r";
  run.timeline.push_back(slice(0, 100, {client(1, "Lock", "tuple")}));
  run.timeline[0].loadgen->latency_avg =
      base::Milliseconds(std::numeric_limits<double>::quiet_NaN());
  run.profile = run.timeline[0].profile;
  const auto json = to_json(run);
  const auto back = run_from_json(json);
  EXPECT_EQ(to_json(back), json);
  EXPECT_TRUE(std::isnan(back.timeline[0].loadgen->latency_avg.count()));
  auto future = json;
  future["schema_version"] = kReportSchemaVersion + 1;
  EXPECT_THROW(run_from_json(future), std::runtime_error);
  auto ancient = json;
  ancient["schema_version"] = 0;
  EXPECT_THROW(run_from_json(ancient), std::runtime_error);
}

TEST(ReportJson, TagsRoundTripAndAreCheckedWhenGiven) {
  model::Run run;
  run.id = "r";
  run.tags = {{"loadgen", "benchbase"}, {"client_host", "bench-2"}};
  const auto json = to_json(run);
  EXPECT_EQ(json.at("tags").at("loadgen"), "benchbase");
  EXPECT_EQ(run_from_json(json).tags, run.tags);
  EXPECT_EQ(tags_text(run.tags), "client_host=bench-2, loadgen=benchbase");
  const auto tag = parse_tag("note=a=b c");  // the value is everything after the first '='
  ASSERT_TRUE(tag);
  EXPECT_EQ(tag->first, "note");
  EXPECT_EQ(tag->second, "a=b c");
  EXPECT_EQ(parse_tag("loadgen").error().message, "expected KEY=VALUE");
  EXPECT_EQ(parse_tag("=x").error().message,
            "the key must be 1 to 64 letters, digits, '_', '.' or '-'");
  EXPECT_EQ(parse_tag("a/b=x").error().message,
            "the key must be 1 to 64 letters, digits, '_', '.' or '-'");
  EXPECT_EQ(parse_tag("k=" + std::string(201, 'x')).error().message,
            "the value is longer than 200 bytes");
}

TEST(ReportJson, ServerThroughputAndSysbenchFiguresRoundTrip) {
  model::Run run;
  run.id = "r";
  run.throughput_source = "sysbench";
  run.timeline.push_back(slice(0, 100, {client(1, "Lock", "tuple")}));
  run.timeline[0].server_tps = 97.5;
  run.timeline[0].server_calls_per_s = 1900;
  run.timeline[0].loadgen->qps = 2000;
  run.timeline[0].loadgen->latency_at_percentile = base::Milliseconds(4.5);
  run.timeline[0].loadgen->latency_percentile = 95;
  LoadgenSummary summary;
  summary.tps = 100;
  summary.qps = 2000;
  summary.latency_at_percentile = base::Milliseconds(5.5);
  summary.latency_percentile = 95;
  run.loadgen = summary;
  const auto back = run_from_json(to_json(run));
  EXPECT_EQ(to_json(back), to_json(run));
  EXPECT_EQ(back.throughput_source, "sysbench");
  EXPECT_DOUBLE_EQ(*back.timeline[0].server_tps, 97.5);
  EXPECT_DOUBLE_EQ(*back.timeline[0].loadgen->qps, 2000);
  EXPECT_DOUBLE_EQ(back.loadgen->latency_at_percentile->count(), 5.5);
  // A summary of the server's counters has no latency: NaN, written as null, read back.
  run.throughput_source = "server";
  run.loadgen->latency_avg = base::Milliseconds(std::numeric_limits<double>::quiet_NaN());
  const auto server = run_from_json(to_json(run));
  EXPECT_TRUE(std::isnan(server.loadgen->latency_avg.count()));
  EXPECT_EQ(throughput_source_text(server).rfind("the server: pg_stat_database", 0), 0u);
  // Reports written before the source was recorded are pgbench's.
  EXPECT_FALSE(to_json(model::Run{}).contains("throughput_source"));
}

}  // namespace
}  // namespace pgwaitprof::model
