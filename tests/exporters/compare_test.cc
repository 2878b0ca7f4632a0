// A/B comparison: the Mann-Whitney p-values against known values, verdicts on the fixture
// matrices (tests/fixtures/compare/{master,patched}, see its README), wait moves, renderers.
#include "exporters/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "tests/exporters/fixtures.h"

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

TEST(MannWhitney, ExactSmallSamples) {
  EXPECT_NEAR(mann_whitney_p({1, 2, 3}, {4, 5, 6}), 0.1, 1e-12);
  EXPECT_NEAR(mann_whitney_p({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 2.0 / 252, 1e-12);
  // Partial overlap: U = 1 of 16, P(U <= 1) = 2/70 under the null.
  EXPECT_NEAR(mann_whitney_p({1, 2, 3, 5}, {4, 6, 7, 8}), 4.0 / 70, 1e-12);
  // Interleaved samples: U = 10 of 25; 87 of the 252 rank arrangements have U <= 10.
  EXPECT_NEAR(mann_whitney_p({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10}), 2.0 * 87 / 252, 1e-12);
}

TEST(MannWhitney, IsSymmetricAndOrderFree) {
  EXPECT_DOUBLE_EQ(mann_whitney_p({3, 1, 2, 5}, {8, 6, 4, 7}),
                   mann_whitney_p({4, 6, 7, 8}, {1, 2, 3, 5}));
  EXPECT_DOUBLE_EQ(mann_whitney_p({3, 1, 2}, {6, 4, 5}), 0.1);
}

TEST(MannWhitney, IdenticalSamplesGiveOne) {
  EXPECT_DOUBLE_EQ(mann_whitney_p({5, 5, 5}, {5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_p({1, 2, 3}, {1, 2, 3}), 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_p({}, {1, 2, 3}), 1.0);
}

TEST(MannWhitney, NormalApproximationForLargeSamples) {
  std::vector<double> low(11), high(11);
  std::iota(low.begin(), low.end(), 1);
  std::iota(high.begin(), high.end(), 12);
  // U = 0, mean 60.5, variance 11 * 11 * 23 / 12, continuity-corrected.
  EXPECT_NEAR(mann_whitney_p(low, high), 8.151536127743262e-05, 1e-12);
}

TEST(MannWhitney, TiesUseTheCorrectedVariance) {
  // Ties force the normal approximation; the tie term lowers the variance from 12 to 11.29.
  EXPECT_NEAR(mann_whitney_p({1, 2, 2, 3}, {2, 3, 4, 5}), 0.13665824773814753, 1e-12);
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
  ASSERT_EQ(cell.tps_a.size(), 5u);
  ASSERT_EQ(cell.tps_b.size(), 5u);
  EXPECT_DOUBLE_EQ(cell.median_a, 10000);
  EXPECT_DOUBLE_EQ(cell.median_b, 12000);
  EXPECT_NEAR(cell.change_pct, 20.0, 1e-9);
  EXPECT_NEAR(cell.noise_pct, 1.0, 1e-9);  // master's 9950-10050 around 10000
  ASSERT_TRUE(cell.p_value);
  EXPECT_NEAR(*cell.p_value, 2.0 / 252, 1e-12);
  EXPECT_EQ(cell.verdict, "faster");
  EXPECT_NEAR(cell.latency_a_ms, 0.8, 1e-12);
  EXPECT_NEAR(cell.latency_b_ms, 8000.0 / 12000, 1e-12);
  EXPECT_NEAR(cell.latency_change_pct, -100.0 / 6, 1e-9);
}

TEST(CompareFixtures, ClearRegressionIsSlower) {
  const auto& cell = cell_at(fixture_comparison(), 128);
  EXPECT_NEAR(cell.change_pct, -100.0 / 6, 1e-9);
  ASSERT_TRUE(cell.p_value);
  EXPECT_LT(*cell.p_value, 0.05);
  EXPECT_EQ(cell.verdict, "slower");
}

TEST(CompareFixtures, OverlappingNoisyRepeatsAreNoChange) {
  const auto& cell = cell_at(fixture_comparison(), 32);
  // master's failed repeat (pgbench printed 500 tps before aborting) is not a sample.
  ASSERT_EQ(cell.tps_a.size(), 5u);
  EXPECT_EQ(std::count(cell.tps_a.begin(), cell.tps_a.end(), 500.0), 0);
  EXPECT_NEAR(cell.change_pct, 2.5, 1e-9);
  EXPECT_NEAR(cell.noise_pct, 22.5, 1e-9);  // (23000 - 18500) / 20000
  ASSERT_TRUE(cell.p_value);
  EXPECT_GT(*cell.p_value, 0.5);
  EXPECT_EQ(cell.verdict, "no significant change");
}

TEST(CompareFixtures, ThreeRepeatsFallBackToTheNoiseBand) {
  // 3 + 3 repeats cannot reach p < 0.05 (the smallest exact p is 0.1), so a 20% change far
  // outside a 1.3% band is called by the band.
  const auto& cell = cell_at(fixture_comparison(), 16);
  ASSERT_TRUE(cell.p_value);
  EXPECT_NEAR(*cell.p_value, 0.1, 1e-12);
  EXPECT_NEAR(cell.noise_pct, 200.0 / 15000 * 100, 1e-9);
  EXPECT_EQ(cell.verdict, "faster");
}

TEST(CompareFixtures, SingleRunsNeedMoreThanFivePercent) {
  const auto& small = cell_at(fixture_comparison(), 1);
  EXPECT_FALSE(small.p_value);
  EXPECT_DOUBLE_EQ(small.noise_pct, 0);
  EXPECT_NEAR(small.change_pct, 2.0, 1e-9);
  EXPECT_EQ(small.verdict, "no significant change");
  const auto& large = cell_at(fixture_comparison(), 64);
  EXPECT_NEAR(large.change_pct, 10.0, 1e-9);
  EXPECT_EQ(large.verdict, "faster");
}

TEST(CompareFixtures, WaitMovesPooledOverCompletedRuns) {
  const auto& waits = fixture_comparison().waits;
  ASSERT_FALSE(waits.empty());
  EXPECT_LE(waits.size(), 15u);
  // 424000 XactSLRU samples over 20 completed master runs of 1000 snapshots; 47600 patched.
  EXPECT_EQ(waits.front().wait, "LWLock | XactSLRU");
  EXPECT_NEAR(waits.front().aas_a, 21.2, 1e-9);
  EXPECT_NEAR(waits.front().aas_b, 2.38, 1e-9);
  EXPECT_NEAR(waits.front().delta, -18.82, 1e-9);
  EXPECT_TRUE(waits.front().significant);
  for (size_t index = 1; index < waits.size(); ++index) {
    EXPECT_GE(std::abs(waits[index - 1].delta), std::abs(waits[index].delta));
  }
  auto find = [&](const std::string& name) {
    return std::find_if(waits.begin(), waits.end(),
                        [&](const WaitMove& move) { return move.wait == name; });
  };
  // Sleeping background processes are not load; idle sessions' ClientRead is not either, so
  // only the idle-in-transaction ClientRead counts (60100 samples on master).
  EXPECT_EQ(find("Activity | CheckpointerMain"), waits.end());
  ASSERT_NE(find("Client | ClientRead"), waits.end());
  EXPECT_NEAR(find("Client | ClientRead")->aas_a, 3.005, 1e-9);
  // DataFileRead of client backends and the autovacuum worker is one line: 3 x (4000 + 1000).
  ASSERT_NE(find("IO | DataFileRead"), waits.end());
  EXPECT_NEAR(find("IO | DataFileRead")->aas_a, 0.75, 1e-9);
  // XactGroupUpdate exists only with the patch.
  ASSERT_NE(find("IPC | XactGroupUpdate"), waits.end());
  EXPECT_DOUBLE_EQ(find("IPC | XactGroupUpdate")->aas_a, 0);
  EXPECT_TRUE(std::isinf(find("IPC | XactGroupUpdate")->relative_pct));
}

TEST(CompareWaits, SignificanceFromCombinedStandardError) {
  model::Run a = loadgen_run("", 16, 1000), b = loadgen_run("", 16, 1000);
  a.profile.add_snapshots(1000);
  a.profile.add(active("CPU", "CPU"), 500);
  a.profile.add(active("LWLock", "WALWrite"), 300);
  a.profile.add(active("IO", "DataFileRead"), 10);
  a.profile.add({"client backend", "idle", "Client", "ClientRead"}, 5000);
  b.profile.add_snapshots(1000);
  b.profile.add(active("CPU", "CPU"), 505);
  b.profile.add(active("LWLock", "WALWrite"), 100);
  b.profile.add(active("IO", "DataFileRead"), 12);
  b.profile.add(active("IPC", "ProcArrayGroupUpdate"), 50);
  const auto comparison = compare_runs({a}, {b});
  ASSERT_EQ(comparison.waits.size(), 4u);  // the idle ClientRead is not a wait that moved
  EXPECT_EQ(comparison.waits[0].wait, "LWLock | WALWrite");
  EXPECT_NEAR(comparison.waits[0].delta, -0.2, 1e-12);
  EXPECT_NEAR(comparison.waits[0].relative_pct, -100.0 * 2 / 3, 1e-9);
  EXPECT_TRUE(comparison.waits[0].significant);
  EXPECT_EQ(comparison.waits[1].wait, "IPC | ProcArrayGroupUpdate");
  EXPECT_TRUE(comparison.waits[1].significant);
  // CPU moved by 0.005 sessions against a combined error of about 0.018: noise.
  EXPECT_EQ(comparison.waits[2].wait, "CPU");
  EXPECT_NEAR(comparison.waits[2].stderr_a, std::sqrt(500.0 / 810 * 310 / 810 / 810) * 0.81, 1e-12);
  EXPECT_FALSE(comparison.waits[2].significant);
  EXPECT_EQ(comparison.waits[3].wait, "IO | DataFileRead");
  EXPECT_FALSE(comparison.waits[3].significant);
}

TEST(CompareWaits, KeepsTheFifteenLargestMoves) {
  model::Run a = loadgen_run("", 16, 1000), b = loadgen_run("", 16, 1000);
  a.profile.add_snapshots(100);
  b.profile.add_snapshots(100);
  for (int index = 1; index <= 20; ++index) {
    a.profile.add(active("LWLock", "lock" + std::to_string(index)), 100);
    b.profile.add(active("LWLock", "lock" + std::to_string(index)), 100 + 10 * index);
  }
  const auto comparison = compare_runs({a}, {b});
  ASSERT_EQ(comparison.waits.size(), 15u);
  EXPECT_EQ(comparison.waits.front().wait, "LWLock | lock20");
  EXPECT_EQ(comparison.waits.back().wait, "LWLock | lock6");
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
  EXPECT_EQ(comparison.cells[0].verdict, "no significant change");
  EXPECT_EQ(comparison.cells[1].variant, "patched");
  EXPECT_EQ(comparison.cells[1].verdict, "faster");
}

TEST(CompareCells, FewRepeatsCompareChangeWithNoise) {
  // Two runs a side: no rank test; a 4.5% change inside an 18% spread is not called.
  auto noisy = compare_runs(runs("", 8, {100, 120}), runs("", 8, {112, 118}));
  ASSERT_EQ(noisy.cells.size(), 1u);
  EXPECT_FALSE(noisy.cells[0].p_value);
  EXPECT_NEAR(noisy.cells[0].noise_pct, 20.0 / 110 * 100, 1e-9);
  EXPECT_EQ(noisy.cells[0].verdict, "no significant change");
  auto tight = compare_runs(runs("", 8, {100, 102}), runs("", 8, {110, 112}));
  EXPECT_EQ(tight.cells[0].verdict, "faster");
}

TEST(CompareCells, CellsOnOneSideOnlyAreReported) {
  auto a = runs("", 8, {100});
  a.push_back(loadgen_run("", 32, 300, 1, "failed"));
  auto b = runs("", 8, {100});
  b.push_back(loadgen_run("", 16, 200));
  b.push_back(loadgen_run("", 32, 250));
  const auto comparison = compare_runs(a, b, "old", "new");
  ASSERT_EQ(comparison.cells.size(), 3u);
  EXPECT_EQ(comparison.cells[1].clients, 16);
  EXPECT_EQ(comparison.cells[1].verdict, "only in new");
  EXPECT_EQ(comparison.cells[2].clients, 32);
  EXPECT_TRUE(comparison.cells[2].tps_a.empty());
  EXPECT_EQ(comparison.cells[2].verdict, "no completed runs in old");
  EXPECT_DOUBLE_EQ(comparison.cells[2].change_pct, 0);
}

TEST(CompareRender, TextShowsTheTablesAndSingleRunCaveat) {
  const std::string text = render_comparison_text(fixture_comparison());
  EXPECT_NE(text.find("A = master, B = patched (variant master vs patched)"), std::string::npos);
  EXPECT_NE(text.find("10000 [9950-10050] x5"), std::string::npos) << text;
  EXPECT_NE(text.find("+20.0%   1.0%  0.008  faster"), std::string::npos);
  EXPECT_NE(text.find("+10.0%      -      -  faster"), std::string::npos);  // no noise, no p
  EXPECT_NE(text.find("0.008"), std::string::npos);
  EXPECT_NE(text.find("no significant change (single runs: no noise estimate)"), std::string::npos);
  EXPECT_NE(text.find("faster (single runs: no noise estimate)"), std::string::npos);
  EXPECT_NE(text.find("0.100  faster (by noise band: 3+3 repeats cannot reach p < 0.05)"),
            std::string::npos);
  EXPECT_NE(text.find("wait events that moved"), std::string::npos);
  EXPECT_NE(text.find("21.200 ± "), std::string::npos);
  // The six cell rows under the throughput header start their verdict where "verdict" does.
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line) &&
         !(line.starts_with("clients") && line.find("A: master") != std::string::npos)) {
  }
  const size_t verdict_column = line.find("verdict");
  ASSERT_NE(verdict_column, std::string::npos) << text;
  for (int row = 0; row < 6; ++row) {
    ASSERT_TRUE(std::getline(lines, line));
    const std::string verdict = line.substr(verdict_column);
    EXPECT_TRUE(verdict.starts_with("faster") || verdict.starts_with("slower") ||
                verdict.starts_with("no significant change"))
        << line;
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
  const auto& single = json.at("cells").at(0);
  EXPECT_EQ(single.at("clients"), 1);
  EXPECT_TRUE(single.at("p_value").is_null());
  EXPECT_TRUE(single.at("single_runs").get<bool>());
  const auto& improved = json.at("cells").at(1);
  EXPECT_EQ(improved.at("verdict"), "faster");
  EXPECT_EQ(improved.at("tps_b").size(), 5u);
  EXPECT_NEAR(improved.at("p_value").get<double>(), 2.0 / 252, 1e-12);
  const auto& waits = json.at("waits");
  ASSERT_FALSE(waits.empty());
  EXPECT_EQ(waits.at(0).at("wait"), "LWLock | XactSLRU");
  // A wait new on side B has no finite relative change: null, not "inf" (invalid JSON).
  bool saw_new = false;
  for (const auto& wait : waits) {
    if (wait.at("wait") == "IPC | XactGroupUpdate") {
      saw_new = true;
      EXPECT_TRUE(wait.at("relative_pct").is_null());
    }
  }
  EXPECT_TRUE(saw_new);
}

}  // namespace
}  // namespace pgwaitprof::exporters
