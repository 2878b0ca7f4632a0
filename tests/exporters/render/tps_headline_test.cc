// The report's tps line: pgbench's own whole-run figure first, the steady state beside it with
// its window, and the warm-up in one clause; a run shorter than three times its warm-up keeps
// it and says so.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "exporters/render/report_common.h"
#include "model/run_estimates.h"
#include "tests/exporters/render/fixtures.h"

namespace pgwaitprof::exporters::report_detail {
namespace {

// `intervals` 1 s intervals: the first `warm_up` at a tenth of the rate, then about 1000 tps;
// pgbench's summary is the whole run's mean, as pgbench computes it.
model::Run ramped_run(int intervals, int warm_up) {
  model::Run run = test_fixtures::loadgen_run("", 4, 0);
  run.interval = base::Seconds(1);
  std::mt19937 random(11);
  std::normal_distribution<double> noise(0, 20);
  double sum = 0;
  for (int index = 0; index < intervals; ++index) {
    model::TimelineSlice slice;
    slice.start = base::Seconds(index);
    slice.duration = base::Seconds(1);
    model::LoadgenProgress progress;
    progress.tps = (index < warm_up ? 100 : 1000) + noise(random);
    sum += progress.tps;
    slice.loadgen = progress;
    run.timeline.push_back(std::move(slice));
  }
  run.loadgen->tps = sum / intervals;
  return run;
}

TEST(TpsHeadline, LeadsWithPgbenchsFigureAndPutsTheSteadyStateBesideIt) {
  const auto run = ramped_run(40, 5);
  const auto window = model::steady_window(run);
  ASSERT_GE(window.excluded, base::Seconds(5));  // MSER-5 cuts in batches of 5 intervals
  const double cut = window.excluded.count();
  const std::string text = tps_headline_text(model::tps_figures(run, window), window);
  EXPECT_EQ(
      text.rfind(fmt::format("{:.1f} (pgbench, whole run); steady state ", run.loadgen->tps), 0),
      0u)
      << text;
  EXPECT_NE(text.find(fmt::format(" over {:g}-40 s (95 % CI, batch means", cut)), std::string::npos)
      << text;
  EXPECT_NE(text.find(fmt::format("; first {:g} s trimmed as warm-up (MSER-5)", cut)),
            std::string::npos)
      << text;
}

TEST(TpsHeadline, ARunShorterThanThreeTimesItsWarmUpKeepsIt) {
  const auto run = ramped_run(14, 5);
  const auto window = model::steady_window(run);
  EXPECT_EQ(window.excluded, base::Seconds(0));
  EXPECT_EQ(window.first_interval, 0u);
  EXPECT_EQ(window.kept, base::Seconds(5));
  const std::string text = tps_headline_text(model::tps_figures(run, window), window);
  EXPECT_EQ(text.rfind(fmt::format("{:.1f} (pgbench, whole run)", run.loadgen->tps), 0), 0u)
      << text;
  EXPECT_EQ(text.find("steady state"), std::string::npos) << text;
  EXPECT_NE(text.find("warm-up of 5 s kept: the run is shorter than 3 times it"), std::string::npos)
      << text;
}

TEST(TpsHeadline, WithoutASummaryTheIntervalsMeanLeads) {
  auto run = ramped_run(8, 0);
  run.loadgen.reset();
  const auto window = model::steady_window(run);
  const std::string text = tps_headline_text(model::tps_figures(run, window), window);
  EXPECT_EQ(text.rfind("interval mean ", 0), 0u) << text;
  EXPECT_EQ(text.find("whole run"), std::string::npos) << text;
}

}  // namespace
}  // namespace pgwaitprof::exporters::report_detail
