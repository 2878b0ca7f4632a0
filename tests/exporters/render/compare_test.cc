// A/B comparison: verdicts from Welch's t-test on log tps across repeats on the fixture matrices
// (tests/fixtures/compare/{master,patched}, see its README), cells with too few repeats, wait
// moves per cell with errors from repeats or batch means, and the renderers.
#include "exporters/render/compare.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <regex>
#include <sstream>

#include "tests/exporters/render/fixtures.h"

namespace pgwaitprof::exporters {
namespace {

using test_fixtures::compare_dir;
using test_fixtures::load_runs;
using test_fixtures::loadgen_run;

const Comparison& fixture_comparison() {
  static const Comparison comparison =
      compare_runs(load_runs(compare_dir() / "master"), load_runs(compare_dir() / "patched"),
                   "master", "patched");
  return comparison;
}

const CompareCell& cell_at(const Comparison& comparison, int clients) {
  const auto found = std::find_if(comparison.cells.begin(), comparison.cells.end(),
                                  [&](const CompareCell& cell) { return cell.clients == clients; });
  if (found == comparison.cells.end()) throw std::runtime_error("no cell");
  return *found;
}

std::vector<model::Run> runs(const std::string& variant, int clients,
                             const std::vector<double>& tps) {
  std::vector<model::Run> result;
  for (size_t index = 0; index < tps.size(); ++index) {
    result.push_back(loadgen_run(variant, clients, tps[index], static_cast<int>(index) + 1));
  }
  return result;
}

model::WaitKey active(const std::string& type, const std::string& event) {
  return {"client backend", "active", type, event};
}

// A run with a timeline of `intervals` 1 s slices of 100 snapshots: WALWrite busy with
// probability `walwrite` for each of 8 sessions per snapshot, CPU the rest.
model::Run timeline_run(int intervals, double walwrite, unsigned seed) {
  model::Run run = loadgen_run("", 8, 1000);
  run.interval = base::Seconds(1);
  std::mt19937 random(seed);
  std::binomial_distribution<int> busy(800, walwrite);
  for (int index = 0; index < intervals; ++index) {
    model::TimelineSlice slice;
    slice.start = base::Seconds(index);
    slice.duration = base::Seconds(1);
    const auto waiting = static_cast<uint64_t>(busy(random));
    slice.profile.add(active("LWLock", "WALWrite"), waiting);
    slice.profile.add(active("CPU", "CPU"), 800 - waiting);
    slice.profile.add_snapshots(100);
    run.profile.merge(slice.profile);
    run.timeline.push_back(std::move(slice));
  }
  return run;
}

TEST(CompareFixtures, CellsMatchedByClientsAcrossVariants) {
  const auto& comparison = fixture_comparison();
  ASSERT_EQ(comparison.cells.size(), 6u);
  std::vector<int> clients;
  for (const auto& cell : comparison.cells) {
    clients.push_back(cell.clients);
    EXPECT_EQ(cell.variant, "master vs patched");
  }
  EXPECT_EQ(clients, (std::vector<int>{1, 8, 16, 32, 64, 128}));
}

TEST(CompareFixtures, ClearImprovementIsFaster) {
  const auto& cell = cell_at(fixture_comparison(), 8);
  ASSERT_EQ(cell.tps.a.size(), 5u);
  ASSERT_EQ(cell.tps.b.size(), 5u);
  EXPECT_DOUBLE_EQ(cell.tps.median_a, 10000);
  EXPECT_DOUBLE_EQ(cell.tps.median_b, 12000);
  ASSERT_TRUE(cell.tps.test && cell.tps.test->p_value);
  EXPECT_NEAR(cell.tps.test->change_percent, 20.0, 0.05);
  EXPECT_LT(*cell.tps.test->ci_low_percent, 20.0);
  EXPECT_GT(*cell.tps.test->ci_high_percent, 20.0);
  EXPECT_GT(*cell.tps.test->ci_low_percent, 18.0);
  EXPECT_LT(*cell.tps.test->p_value, 0.001);
  EXPECT_EQ(cell.tps.verdict, "faster");
  EXPECT_NEAR(cell.latency_a.count(), 0.8, 1e-12);
  EXPECT_NEAR(cell.latency_b.count(), 8000.0 / 12000, 1e-12);
}

TEST(CompareFixtures, ClearRegressionIsSlower) {
  const auto& cell = cell_at(fixture_comparison(), 128);
  EXPECT_NEAR(cell.tps.test->change_percent, -100.0 / 6, 0.05);
  EXPECT_LT(*cell.tps.test->p_value, 0.05);
  EXPECT_EQ(cell.tps.verdict, "slower");
}

TEST(CompareFixtures, ThreeRepeatsAreEnoughForAClearChange) {
  // The rank test could never go below p = 0.1 with 3 + 3 repeats; Welch's test can.
  const auto& cell = cell_at(fixture_comparison(), 16);
  ASSERT_TRUE(cell.tps.test->p_value);
  EXPECT_LT(*cell.tps.test->p_value, 0.001);
  EXPECT_EQ(cell.tps.verdict, "faster");
}

TEST(CompareFixtures, OverlappingNoisyRepeatsAreNoChangeWithWhatCouldBeDetected) {
  const auto& cell = cell_at(fixture_comparison(), 32);
  // master's failed repeat (pgbench printed 500 tps before aborting) is not a sample.
  ASSERT_EQ(cell.tps.a.size(), 5u);
  EXPECT_EQ(std::count(cell.tps.a.begin(), cell.tps.a.end(), 500.0), 0);
  EXPECT_GT(*cell.tps.test->p_value, 0.5);
  EXPECT_EQ(cell.tps.verdict, "no significant change");
  ASSERT_TRUE(cell.tps.test->min_detectable_percent);
  EXPECT_GT(*cell.tps.test->min_detectable_percent, 5.0);  // 22% spread: only big changes show
}

TEST(CompareFixtures, SingleRunsWithoutATimelineGetNoVerdictButTheRepeatsNeeded) {
  // One run a side without per-interval tps has no noise of its own; the other cells' repeats
  // give the noise to plan with, so the report says how many repeats would test the change.
  for (const int clients : {1, 64}) {
    const auto& cell = cell_at(fixture_comparison(), clients);
    EXPECT_EQ(cell.tps.verdict, "no verdict") << clients;
    EXPECT_FALSE(cell.tps.test->p_value);
    EXPECT_FALSE(cell.tps.test->within_run);
    EXPECT_NE(cell.tps.detail.find("no within-run error: master's run has no per-interval tps; "
                                   "patched's run has no per-interval tps; 1 + 1 repeats; "),
              std::string::npos)
        << cell.tps.detail;
    EXPECT_NE(cell.tps.detail.find(" per side would test a "), std::string::npos);
    // Planned with the other cells' noise: what 1 + 1 runs could have detected.
    EXPECT_TRUE(cell.tps.test->min_detectable_percent);
  }
  const auto alone = compare_runs(runs("", 8, {100}), runs("", 8, {120}));
  EXPECT_EQ(alone.cells[0].tps.verdict, "no verdict");
  EXPECT_NE(alone.cells[0].tps.detail.find("give no noise estimate"), std::string::npos);
}

// A run with `intervals` 1 s slices whose pgbench tps is `tps` plus AR(1) noise (phi 0.5,
// sd about `noise`), and one 99th percentile for the run.
model::Run tps_run(int intervals, double tps, double noise, unsigned seed) {
  model::Run run = loadgen_run("", 8, tps);
  run.interval = base::Seconds(1);
  std::mt19937 random(seed);
  std::normal_distribution<double> innovation(0, noise * std::sqrt(1 - 0.25));
  double level = 0;
  for (int index = 0; index < intervals; ++index) {
    level = 0.5 * level + innovation(random);
    model::TimelineSlice slice;
    slice.start = base::Seconds(index);
    slice.duration = base::Seconds(1);
    model::LoadgenProgress progress;
    progress.elapsed = base::Seconds(index + 1);
    progress.tps = tps + level;
    slice.loadgen = progress;
    run.timeline.push_back(std::move(slice));
  }
  run.latency = model::LatencySummary{};
  run.latency->p99 = base::Milliseconds(10);
  return run;
}

TEST(CompareSingleRuns, TpsIsTestedAgainstEachRunsOwnBatchMeans) {
  const auto faster = compare_runs({tps_run(120, 1000, 20, 1)}, {tps_run(120, 1100, 20, 2)});
  const auto& tps = faster.cells.at(0).tps;
  ASSERT_TRUE(tps.test && tps.test->p_value);
  EXPECT_TRUE(tps.test->within_run);
  EXPECT_EQ(tps.verdict, "faster");
  EXPECT_NEAR(tps.test->change_percent, 10, 1);
  EXPECT_LT(*tps.test->ci_low_percent, tps.test->change_percent);
  EXPECT_GT(*tps.test->ci_high_percent, tps.test->change_percent);
  EXPECT_LT(*tps.test->p_value, 0.001);
  ASSERT_TRUE(tps.test->min_detectable_percent);
  EXPECT_LT(*tps.test->min_detectable_percent, 2);  // 120 intervals of ±2% noise
  EXPECT_NE(tps.detail.find("within-run noise only"), std::string::npos) << tps.detail;
  // Each side is the run's steady-state tps with the interval of its batch means.
  EXPECT_TRUE(tps.side_a.within_run);
  ASSERT_TRUE(tps.side_a.low && tps.side_a.high);
  EXPECT_LT(*tps.side_a.low, tps.side_a.value);
  EXPECT_GT(*tps.side_a.high, tps.side_a.value);
  const std::string text = render_comparison_text(faster);
  EXPECT_NE(text.find(" x1 within-run"), std::string::npos) << text;
  EXPECT_NE(text.find("note: within-run: "), std::string::npos) << text;
  EXPECT_NE(text.find("cannot see how much runs of one configuration differ"), std::string::npos);
  EXPECT_NE(render_comparison_markdown(faster).find("within-run: "), std::string::npos);
  const auto json = nlohmann::json::parse(render_comparison_json(faster));
  EXPECT_EQ(json.at("cells").at(0).at("tps").at("within_run"), true);
  EXPECT_EQ(json.at("cells").at(0).at("tps").at("side_a").at("within_run"), true);

  // The same behaviour twice: about 5 % of such pairs are called (the rate itself is tested in
  // statistics_ab_test.cc), so of 20 pairs only a few.
  int tested = 0, called = 0;
  for (unsigned seed = 100; seed < 140; seed += 2) {
    const auto same =
        compare_runs({tps_run(120, 1000, 20, seed)}, {tps_run(120, 1000, 20, seed + 1)});
    const auto& verdict = same.cells.at(0).tps.verdict;
    if (verdict == "no verdict") continue;  // a run whose batch means did not settle
    ++tested;
    EXPECT_TRUE(same.cells.at(0).tps.test->within_run);
    if (verdict != "no significant change") ++called;
  }
  EXPECT_GE(tested, 14);
  EXPECT_LE(called, 3);
}

// A run whose report has a run-to-run spread is tested against it, before its batch means.
TEST(CompareSingleRuns, ARunToRunSpreadIsTheNoiseBetweenRuns) {
  auto a = tps_run(120, 1000, 20, 1);
  a.run_to_run = model::RunToRun{8, 3, {{"tps", 1000, 100, 334}}};
  const auto within_noise = compare_runs({a}, {tps_run(120, 1100, 20, 2)});
  const auto& tps = within_noise.cells.at(0).tps;
  ASSERT_TRUE(tps.test && tps.test->p_value);
  EXPECT_TRUE(tps.test->run_to_run);
  EXPECT_FALSE(tps.test->within_run);
  EXPECT_EQ(tps.verdict, "no significant change");  // within-run noise alone calls it faster
  EXPECT_EQ(tps.detail, "run-to-run noise from A's 8 earlier comparable runs");
  EXPECT_TRUE(tps.side_a.run_to_run);
  const double t = model::student_t_quantile(0.975, 7);
  EXPECT_NEAR(*tps.side_a.low, 1000 - t * 100, 1e-9);
  EXPECT_NEAR(*tps.side_a.high, 1000 + t * 100, 1e-9);
  const std::string text = render_comparison_text(within_noise);
  EXPECT_NE(text.find(" x1 run-to-run"), std::string::npos) << text;
  EXPECT_NE(text.find("note: run-to-run: "), std::string::npos) << text;
  const auto json = nlohmann::json::parse(render_comparison_json(within_noise));
  EXPECT_EQ(json.at("cells").at(0).at("tps").at("run_to_run"), true);
  EXPECT_EQ(json.at("cells").at(0).at("tps").at("side_a").at("run_to_run"), true);

  auto b = tps_run(120, 1500, 20, 3);
  b.run_to_run = model::RunToRun{9, 3, {{"tps", 1500, 150, 480}}};
  const auto faster = compare_runs({a}, {b});
  EXPECT_EQ(faster.cells.at(0).tps.verdict, "faster");
  // The side with more earlier runs gives the noise.
  EXPECT_EQ(faster.cells.at(0).tps.detail, "run-to-run noise from B's 9 earlier comparable runs");
  EXPECT_TRUE(faster.cells.at(0).tps.side_b.run_to_run);
}

TEST(CompareSingleRuns, ARunTooShortForBatchMeansIsNamed) {
  const auto short_b = compare_runs({tps_run(120, 1000, 20, 5)}, {tps_run(8, 1100, 20, 6)});
  const auto& tps = short_b.cells.at(0).tps;
  EXPECT_EQ(tps.verdict, "no verdict");
  EXPECT_FALSE(tps.test->p_value);
  EXPECT_NE(tps.detail.find("no within-run error: B's run is too short for batch means (8 "
                            "batches of 1 s, 20 needed); 1 + 1 repeats give no noise estimate"),
            std::string::npos)
      << tps.detail;
  EXPECT_FALSE(tps.side_b.within_run);
  EXPECT_FALSE(tps.side_b.low);
}

TEST(CompareSingleRuns, P99HasNoWithinRunTestAndSaysWhy) {
  const auto comparison = compare_runs({tps_run(120, 1000, 20, 7)}, {tps_run(120, 1000, 20, 8)});
  const auto& p99 = comparison.cells.at(0).p99_ms;
  EXPECT_EQ(p99.verdict, "no verdict");
  EXPECT_NE(p99.detail.find("single runs: p99 has no within-run error"), std::string::npos)
      << p99.detail;
  EXPECT_NE(render_comparison_text(comparison).find("note: single runs get no p99 test"),
            std::string::npos);
}

TEST(CompareSingleRuns, FixedWorkRunsHaveNoWithinRunTest) {
  model::Run a = tps_run(120, 1000, 20, 9), b = tps_run(120, 1100, 20, 10);
  for (auto* run : {&a, &b}) {
    run->work = model::WorkDone{};
    run->work->elapsed = base::Seconds(run == &a ? 100 : 90);
  }
  const auto comparison = compare_runs({a}, {b});
  ASSERT_EQ(comparison.metric, model::Metric::kDuration);
  EXPECT_EQ(comparison.cells.at(0).tps.verdict, "no verdict");
  EXPECT_NE(comparison.cells.at(0).tps.detail.find("elapsed time has no within-run error"),
            std::string::npos);
}

TEST(CompareFixtures, WaitMovesArePerCell) {
  const auto& waits = fixture_comparison().waits;
  ASSERT_FALSE(waits.empty());
  EXPECT_LE(waits.size(), 15u);
  for (size_t index = 1; index < waits.size(); ++index) {
    EXPECT_GE(std::abs(waits[index - 1].delta), std::abs(waits[index].delta));
  }
  // The largest move: XactSLRU at 128 clients, where master spends 55% of client samples on it.
  EXPECT_EQ(waits.front().wait, "LWLock | XactSLRU");
  EXPECT_EQ(waits.front().clients, 128);
  EXPECT_LT(waits.front().delta, 0);
  // Five repeats a side with identical profiles: no spread, a significant move.
  EXPECT_DOUBLE_EQ(waits.front().stderr_a, 0);
  ASSERT_TRUE(waits.front().significant);
  EXPECT_TRUE(*waits.front().significant);
  for (const auto& move : waits) {
    EXPECT_NE(move.wait, "Activity | CheckpointerMain");  // sleeping: not load
  }
}

// 3 + 3 repeats whose WALWrite AAS differ by 2.45 combined standard errors: beyond 1.96, the
// normal band that called 11 % of the A/A calibration's moves significant, but inside Welch's t
// on 4 degrees of freedom (2.78); twice that difference is beyond both.
TEST(CompareWaits, RepeatsAreTestedWithWelchsT) {
  const auto side = [](const std::string& variant, std::vector<double> walwrite) {
    std::vector<model::Run> result;
    for (size_t index = 0; index < walwrite.size(); ++index) {
      auto run = loadgen_run(variant, 8, 1000, static_cast<int>(index) + 1);
      run.profile.add(active("LWLock", "WALWrite"), static_cast<uint64_t>(walwrite[index] * 100));
      run.profile.add(active("CPU", "CPU"), 200);
      run.profile.add_snapshots(100);
      result.push_back(std::move(run));
    }
    return result;
  };
  const auto move_of = [](const Comparison& comparison) {
    for (const auto& move : comparison.waits) {
      if (move.wait == "LWLock | WALWrite") return move;
    }
    throw std::runtime_error("no WALWrite move");
  };
  const auto near = move_of(compare_runs(side("", {1.0, 1.2, 1.4}), side("", {1.4, 1.6, 1.8})));
  EXPECT_NEAR(near.delta, 0.4, 1e-9);
  EXPECT_NEAR(near.stderr_a, 0.2 / std::sqrt(3.0), 1e-9);
  EXPECT_GT(near.delta / std::hypot(near.stderr_a, near.stderr_b), 1.96);
  ASSERT_TRUE(near.significant);
  EXPECT_FALSE(*near.significant);
  const auto far = move_of(compare_runs(side("", {1.0, 1.2, 1.4}), side("", {1.8, 2.0, 2.2})));
  ASSERT_TRUE(far.significant);
  EXPECT_TRUE(*far.significant);
}

TEST(CompareWaits, SingleRunErrorsComeFromBatchMeans) {
  // One 120 s run a side: the error of each side is the batch-means error over its timeline.
  const auto moved = compare_runs({timeline_run(120, 0.30, 1)}, {timeline_run(120, 0.20, 2)});
  const auto& walwrite =
      *std::find_if(moved.waits.begin(), moved.waits.end(),
                    [](const WaitMove& move) { return move.wait == "LWLock | WALWrite"; });
  EXPECT_NEAR(walwrite.aas_a, 2.4, 0.05);
  EXPECT_NEAR(walwrite.aas_b, 1.6, 0.05);
  EXPECT_TRUE(std::isfinite(walwrite.stderr_a));
  EXPECT_GT(walwrite.stderr_a, 0);
  ASSERT_TRUE(walwrite.significant);
  EXPECT_TRUE(*walwrite.significant);
  // The same behaviour twice: no significant move.
  const auto same = compare_runs({timeline_run(120, 0.30, 3)}, {timeline_run(120, 0.30, 4)});
  for (const auto& move : same.waits) {
    ASSERT_TRUE(move.significant) << move.wait;
    EXPECT_FALSE(*move.significant) << move.wait;
  }
  // Without a timeline there is nothing to estimate a single run's error from.
  model::Run a = loadgen_run("", 16, 1000), b = loadgen_run("", 16, 1000);
  a.profile.add_snapshots(1000);
  a.profile.add(active("LWLock", "WALWrite"), 300);
  b.profile.add_snapshots(1000);
  b.profile.add(active("LWLock", "WALWrite"), 100);
  const auto untested = compare_runs({a}, {b});
  ASSERT_EQ(untested.waits.size(), 1u);
  EXPECT_FALSE(untested.waits[0].significant);
  EXPECT_NE(render_comparison_text(untested).find("not tested"), std::string::npos);
}

TEST(CompareWaits, OldAndNewNamesOfOneEventAreOneLine) {
  model::Run a = loadgen_run("", 16, 1000), b = loadgen_run("", 16, 1000);
  a.profile.add_snapshots(1000);
  a.profile.add(active("LWLockNamed", "WALWriteLock"), 300);  // a 9.6 server
  b.profile.add_snapshots(1000);
  b.profile.add(active("LWLock", "WALWrite"), 100);
  const auto comparison = compare_runs({a}, {b});
  ASSERT_EQ(comparison.waits.size(), 1u);
  EXPECT_EQ(comparison.waits[0].wait, "LWLockNamed | WALWriteLock");
  EXPECT_NEAR(comparison.waits[0].delta, -0.2, 1e-12);
}

TEST(CompareCells, SameVariantsOnBothSidesAreMatchedByVariant) {
  auto a = runs("master", 8, {100, 101, 99});
  auto more = runs("patched", 8, {100, 102, 98});
  a.insert(a.end(), more.begin(), more.end());
  auto b = runs("master", 8, {100, 101, 99});
  more = runs("patched", 8, {130, 131, 129});
  b.insert(b.end(), more.begin(), more.end());
  const auto comparison = compare_runs(a, b);
  ASSERT_EQ(comparison.cells.size(), 2u);
  EXPECT_EQ(comparison.cells[0].variant, "master");
  EXPECT_EQ(comparison.cells[0].tps.verdict, "no significant change");
  EXPECT_EQ(comparison.cells[1].variant, "patched");
  EXPECT_EQ(comparison.cells[1].tps.verdict, "faster");
}

TEST(CompareCells, CellsOnOneSideOnlyAreReported) {
  auto a = runs("", 8, {100});
  a.push_back(loadgen_run("", 32, 300, 1, model::RunStatus::kFailed));
  auto b = runs("", 8, {100});
  b.push_back(loadgen_run("", 16, 200));
  b.push_back(loadgen_run("", 32, 250));
  const auto comparison = compare_runs(a, b, "old", "new");
  ASSERT_EQ(comparison.cells.size(), 3u);
  EXPECT_EQ(comparison.cells[1].clients, 16);
  EXPECT_EQ(comparison.cells[1].tps.verdict, "only in new");
  EXPECT_EQ(comparison.cells[2].clients, 32);
  EXPECT_TRUE(comparison.cells[2].tps.a.empty());
  EXPECT_EQ(comparison.cells[2].tps.verdict, "no completed runs in old");
  EXPECT_FALSE(comparison.cells[2].tps.test);
}

TEST(CompareCells, P99IsTestedWhereRunsHaveIt) {
  auto a = runs("", 8, {100, 101, 99});
  auto b = runs("", 8, {100, 101, 99});
  const double p99_a[] = {10, 10.2, 9.8}, p99_b[] = {15, 15.3, 14.7};
  for (size_t index = 0; index < 3; ++index) {
    a[index].latency = model::LatencySummary{};
    a[index].latency->p99 = base::Milliseconds(p99_a[index]);
    b[index].latency = model::LatencySummary{};
    b[index].latency->p99 = base::Milliseconds(p99_b[index]);
  }
  const auto comparison = compare_runs(a, b);
  EXPECT_EQ(comparison.cells[0].tps.verdict, "no significant change");
  EXPECT_EQ(comparison.cells[0].p99_ms.verdict, "worse");
  EXPECT_NE(render_comparison_text(comparison).find("p99 latency"), std::string::npos);
}

TEST(CompareRender, TextShowsIntervalsVerdictsAndCellShifts) {
  const std::string text = render_comparison_text(fixture_comparison());
  EXPECT_NE(text.find("A = master, B = patched (variant master vs patched)"), std::string::npos);
  // Each side: the geometric mean of the repeats with its 95 % interval.
  const auto& improved = cell_at(fixture_comparison(), 8).tps;
  ASSERT_TRUE(improved.side_a.low && improved.side_a.high);
  EXPECT_NEAR(improved.side_a.value, 10000, 1);
  EXPECT_GT(*improved.side_a.low, 9950);
  EXPECT_LT(*improved.side_a.high, 10050);
  EXPECT_NE(text.find(fmt::format("10000 [{:.0f}, {:.0f}] x5", *improved.side_a.low,
                                  *improved.side_a.high)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("geometric mean [95% interval] xN repeats"), std::string::npos);
  EXPECT_NE(text.find("Welch's t-test on log tps"), std::string::npos);
  EXPECT_NE(text.find("faster"), std::string::npos);
  EXPECT_NE(text.find("no verdict (no within-run error: "), std::string::npos) << text;
  // No single run here has a timeline: no within-run note.
  EXPECT_EQ(text.find("note: within-run"), std::string::npos);
  EXPECT_NE(text.find("wait profile by class"), std::string::npos);
  EXPECT_NE(text.find(" -> "), std::string::npos);
  EXPECT_NE(text.find("wait events that moved"), std::string::npos);
  // The throughput table's rows.
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line) &&
         !(line.starts_with("clients") && line.find("A: master") != std::string::npos)) {
  }
  ASSERT_NE(line.find("detectable"), std::string::npos) << text;
  // Every cell row ends in the smallest detectable change, printed whatever the verdict, and
  // the verdict.
  const std::regex ending(
      "±[0-9]+\\.[0-9]%  (faster|slower|no significant change|no verdict)( \\(.*\\))?$");
  for (int row = 0; row < 6; ++row) {
    ASSERT_TRUE(std::getline(lines, line));
    EXPECT_TRUE(std::regex_search(line, ending)) << line;
  }
}

TEST(CompareRender, MarkdownEscapesWaitNames) {
  const std::string markdown = render_comparison_markdown(fixture_comparison());
  EXPECT_NE(markdown.find("| LWLock \\| XactSLRU |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| --: |"), std::string::npos);
  EXPECT_EQ(markdown.find("| LWLock | XactSLRU |"), std::string::npos);
}

TEST(CompareRender, JsonCarriesTheFullComparison) {
  const auto json = nlohmann::json::parse(render_comparison_json(fixture_comparison()));
  EXPECT_EQ(json.at("label_a"), "master");
  ASSERT_EQ(json.at("cells").size(), 6u);
  const auto& single = json.at("cells").at(0).at("tps");
  EXPECT_TRUE(single.at("p_value").is_null());
  EXPECT_EQ(single.at("verdict"), "no verdict");
  const auto& improved = json.at("cells").at(1).at("tps");
  EXPECT_EQ(improved.at("verdict"), "faster");
  EXPECT_EQ(improved.at("b").size(), 5u);
  EXPECT_LT(improved.at("p_value").get<double>(), 0.001);
  EXPECT_LT(improved.at("ci_low_pct").get<double>(), improved.at("ci_high_pct").get<double>());
  const auto& waits = json.at("waits");
  ASSERT_FALSE(waits.empty());
  EXPECT_EQ(waits.at(0).at("wait"), "LWLock | XactSLRU");
  EXPECT_EQ(waits.at(0).at("clients"), 128);
  // JSON has no infinity: a wait new on side B has a null relative change.
  for (const auto& wait : waits) {
    if (wait.at("aas_a") == 0.0) {
      EXPECT_TRUE(wait.at("relative_pct").is_null());
    }
  }
}

}  // namespace
}  // namespace pgwaitprof::exporters
