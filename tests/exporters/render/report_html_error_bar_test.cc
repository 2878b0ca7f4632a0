// The top-waits chart's error bars: drawn for an estimable error, left out (the tooltip says why)
// where batch means cannot estimate one, since a zero-width bar reads as a tiny error.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "exporters/render/report_html_charts.h"
#include "tests/exporters/render/fixtures.h"

namespace pgwaitprof::exporters::report_detail {
namespace {

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// Two wait events, 8 sessions, `intervals` 1 s slices of 100 snapshots.
model::Run two_wait_run(int intervals) {
  model::Run run = test_fixtures::loadgen_run("", 8, 1000);
  run.interval = base::Seconds(1);
  const model::WaitKey walwrite{"client backend", "active", "LWLock", "WALWrite"};
  const model::WaitKey cpu{"client backend", "active", "CPU", "CPU"};
  std::mt19937 random(7);
  std::binomial_distribution<int> busy(800, 0.3);
  for (int index = 0; index < intervals; ++index) {
    model::TimelineSlice slice;
    slice.start = base::Seconds(index);
    slice.duration = base::Seconds(1);
    const auto waiting = static_cast<uint64_t>(busy(random));
    slice.profile.add(walwrite, waiting);
    slice.profile.add(cpu, 800 - waiting);
    slice.profile.add_snapshots(100);
    run.profile.merge(slice.profile);
    run.timeline.push_back(std::move(slice));
  }
  return run;
}

TEST(TopWaitsErrorBars, EstimableErrorsAreDrawn) {
  const std::string svg = svg_top_waits(model::summarize(two_wait_run(120)).waits, {});
  EXPECT_EQ(occurrences(svg, "class=\"err\""), 2u) << svg;
  EXPECT_EQ(svg.find("±?"), std::string::npos) << svg;
}

TEST(TopWaitsErrorBars, UnestimableErrorsAreNotDrawnAndSaySoInTheirTooltip) {
  // Five intervals are far too few for batch means: no bar, no "±?" beside the value, and the
  // tooltip says why.
  const std::string svg = svg_top_waits(model::summarize(two_wait_run(5)).waits, {});
  EXPECT_EQ(svg.find("class=\"err\""), std::string::npos) << svg;
  EXPECT_EQ(svg.find("±"), std::string::npos) << svg;
  EXPECT_EQ(occurrences(svg, "no error bar: the run is too short"), 2u) << svg;
}

}  // namespace
}  // namespace pgwaitprof::exporters::report_detail
