// compare and matrix with CPU profiles (--cpu-profile): the functions whose share of the client
// backends' on-CPU samples moved, beyond the spread or not (between repeats, or a lone run's
// batch means), in the comparison's text, Markdown and JSON; and a sweep's top functions per
// client count in the matrix table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "exporters/render/compare.h"
#include "exporters/render/matrix_table.h"
#include "model/cpu_profile.h"
#include "model/matrix_aggregate.h"
#include "tests/exporters/render/fixtures.h"

namespace pgwaitprof::exporters {
namespace {

// A pgbench run of 60 one-second intervals with a CPU profile of the client backends at 100 Hz
// on 2 CPUs: `parser` of every 100 samples in base_yyparse (noisy), the rest in two others.
model::Run profiled_run(double parser, unsigned seed, int clients = 8) {
  model::Run run = test_fixtures::loadgen_run("", clients, 1000);
  run.interval = base::Seconds(1);
  run.duration = base::Seconds(60);
  std::mt19937 random(seed);
  std::normal_distribution<double> noise(0, 2);
  model::CpuProfileBuilder builder;
  for (int index = 0; index < 60; ++index) {
    model::TimelineSlice slice;
    slice.start = base::Seconds(index);
    slice.duration = base::Seconds(1);
    slice.profile.add({"client backend", "active", "CPU", "CPU"}, 100);
    slice.profile.add_snapshots(100);
    model::LoadgenProgress progress;
    progress.tps = 1000;
    slice.loadgen = progress;
    run.profile.merge(slice.profile);
    run.timeline.push_back(std::move(slice));
    const int in_parser = std::clamp(static_cast<int>(parser + noise(random)), 0, 100);
    model::CpuSampleBatch batch;
    batch.hz = 100;
    batch.cpus = 2;
    auto add = [&](const std::string& leaf, int count) {
      for (int sample = 0; sample < count; ++sample) {
        batch.samples.push_back({"client backend", {}, {"main", "PostgresMain", leaf}});
      }
    };
    add("base_yyparse", in_parser);
    add("hash_search_with_hash_value", (100 - in_parser) / 2);
    add("finish_task_switch_[k]", 100 - in_parser - (100 - in_parser) / 2);
    builder.add(batch, [&](model::SteadyClock::time_point) { return static_cast<size_t>(index); });
  }
  run.cpu_profile = builder.profile(run.duration);
  return run;
}

const model::FunctionMove* find(const model::Comparison& comparison, const std::string& name) {
  const auto found = std::find_if(comparison.functions.begin(), comparison.functions.end(),
                                  [&](const auto& move) { return move.function == name; });
  return found == comparison.functions.end() ? nullptr : &*found;
}

TEST(CompareFunctions, TheParserGoneIsBeyondTheSpreadOfALoneRunsBatchMeans) {
  const auto comparison =
      compare_runs({profiled_run(20, 1)}, {profiled_run(0, 2)}, "simple", "prepared");
  const auto* parser = find(comparison, "base_yyparse");
  ASSERT_NE(parser, nullptr);
  EXPECT_NEAR(parser->share_a, 0.20, 0.02);
  EXPECT_LT(parser->share_b, 0.02);
  ASSERT_TRUE(parser->significant);
  EXPECT_TRUE(*parser->significant);
  EXPECT_EQ(comparison.functions.front().function, "base_yyparse");  // the largest move first
  const auto* kernel = find(comparison, "finish_task_switch [kernel]");
  ASSERT_NE(kernel, nullptr);

  const std::string text = render_comparison_text(comparison);
  EXPECT_NE(text.find("where the CPU went, what moved"), std::string::npos) << text;
  EXPECT_NE(text.find("base_yyparse"), std::string::npos);
  EXPECT_NE(render_comparison_markdown(comparison).find("base\\_yyparse"), std::string::npos);
  const auto json = nlohmann::json::parse(render_comparison_json(comparison));
  EXPECT_EQ(json.at("functions").at(0).at("function"), "base_yyparse");
  EXPECT_EQ(json.at("functions").at(0).at("significant"), true);
}

TEST(CompareFunctions, AnAaComparisonOfRepeatsMovesNothingBeyondTheSpread) {
  std::vector<model::Run> a, b;
  for (unsigned seed = 0; seed < 3; ++seed) {
    a.push_back(profiled_run(20, seed));
    b.push_back(profiled_run(20, seed + 10));
  }
  const auto comparison = compare_runs(a, b);
  ASSERT_FALSE(comparison.functions.empty());
  for (const auto& move : comparison.functions) {
    ASSERT_TRUE(move.significant) << move.function;
    EXPECT_FALSE(*move.significant) << move.function;
  }
}

// 45 functions of nearly equal share: the intervals keep the run's top 30 and their own top 10,
// so a function outside the run's top 30 has a count only where it was among an interval's
// top 10, and batch means would count it 0 elsewhere; such a function's error is unknown, not
// small, and the run's top 30 keep theirs.
TEST(CompareFunctions, AFunctionOftenOutsideTheIntervalsTopIsNotTested) {
  auto flat_run = [](unsigned seed) {
    model::Run run = profiled_run(20, seed);
    std::mt19937 random(seed);
    model::CpuProfileBuilder builder;
    for (size_t index = 0; index < run.timeline.size(); ++index) {
      model::CpuSampleBatch batch;
      batch.hz = 100;
      batch.cpus = 2;
      for (int function = 0; function < 45; ++function) {
        const int count = 5 + static_cast<int>(random() % 3);
        for (int sample = 0; sample < count; ++sample) {
          batch.samples.push_back({"client backend", {}, {"f" + std::to_string(function)}});
        }
      }
      builder.add(batch, [&](model::SteadyClock::time_point) { return index; });
    }
    run.cpu_profile = builder.profile(run.duration);
    return run;
  };
  const auto a = flat_run(1), b = flat_run(2);
  std::set<std::string> tracked;
  for (const auto* run : {&a, &b}) {
    const auto& self = run->cpu_profile->groups.at("client backend").self;
    for (size_t index = 0; index < model::kCpuRunTracked; ++index) tracked.insert(self[index].name);
  }
  const auto comparison = compare_runs({a}, {b});
  ASSERT_FALSE(comparison.functions.empty());
  size_t untracked = 0;
  for (const auto& move : comparison.functions) {
    if (tracked.contains(move.function)) continue;
    ++untracked;
    EXPECT_FALSE(move.significant) << move.function;
    EXPECT_FALSE(std::isfinite(move.stderr_a)) << move.function;
  }
  EXPECT_GT(untracked, 0u);
}

TEST(CompareFunctions, RunsWithoutProfilesHaveNoFunctionsAndNoKey) {
  auto a = profiled_run(20, 1);
  auto b = profiled_run(0, 2);
  b.cpu_profile.reset();
  const auto comparison = compare_runs({a}, {b});
  EXPECT_TRUE(comparison.functions.empty());
  EXPECT_FALSE(nlohmann::json::parse(render_comparison_json(comparison)).contains("functions"));
  EXPECT_EQ(render_comparison_text(comparison).find("where the CPU went"), std::string::npos);
}

TEST(MatrixFunctions, ASweepShowsTheTopFunctionsPerClientCount) {
  std::vector<model::Run> runs;
  for (const int clients : {1, 8, 32}) {
    auto run = profiled_run(clients == 32 ? 40 : 10, static_cast<unsigned>(clients), clients);
    run.variant = "master";
    run.repeat = 1;
    runs.push_back(std::move(run));
  }
  const auto table = model::build_matrix_table(runs);
  const auto* cell = table.find("master", 32);
  ASSERT_NE(cell, nullptr);
  ASSERT_FALSE(cell->functions.empty());
  EXPECT_EQ(cell->functions.front().name, "base_yyparse");
  EXPECT_NEAR(cell->functions.front().share, 0.40, 0.02);
  const std::string text = render_matrix_text(table);
  EXPECT_NE(text.find("top CPU functions"), std::string::npos) << text;
}

}  // namespace
}  // namespace pgwaitprof::exporters
