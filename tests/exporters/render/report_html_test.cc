// report.html against the fixture report.json: self-contained, uPlot and the chart script
// inlined verbatim, the timeline data with every series, the stacking order, escaping.
#include <gtest/gtest.h>

#include "exporters/render/report_render.h"
#include "tests/exporters/render/report_render_fixture.h"

namespace pgwaitprof::exporters {
namespace {

using namespace render_test;

using RenderHtml = RenderFixture;

// The wait classes of the fixture's non-idle samples in stacking order (as text_format lists
// them: CPU, LWLock, Lock, IO, IPC, Client, Timeout, BufferPin, ...), written out again here.
std::vector<std::string> stacking_order(const RawProfile& raw) {
  static const std::vector<std::string> order = {"CPU",       "LWLock",  "Lock",    "IO",
                                                 "IPC",       "Client",  "Timeout", "BufferPin",
                                                 "Extension", "Activity"};
  std::vector<std::string> classes;
  for (const auto& wait_class : order) {
    if (raw.by_type.contains(wait_class)) classes.push_back(wait_class);
  }
  return classes;
}

TEST_F(RenderHtml, IsSelfContained) {
  const std::string html = render_html(run_);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  for (const char* remote : {"src=", "href=", "url(", "@import", "<link", "<img", "<iframe",
                             "fetch(", "XMLHttpRequest", "import("}) {
    EXPECT_EQ(html.find(remote), std::string::npos) << remote;
  }
  // The only URLs are in the banner comments of uPlot and the d3 modules and the Apache
  // licence, and d3's XML namespace names (identifiers, not addresses): nothing loads them.
  EXPECT_EQ(test_fixtures::unexpected_urls(
                html, {"https://github.com/leeoniya/uPlot", "https://d3js.org/d3-",
                       "http://www.apache.org/licenses/", "http://www.w3.org/"}),
            std::vector<std::string>{});
}

TEST_F(RenderHtml, EmbedsUplotAndTheChartScriptsVerbatim) {
  const std::string html = render_html(run_);
  // Compared with the files of the source tree, not with what the binary embedded: a build
  // that lost or truncated one fails here.
  for (const char* path :
       {"exporters/render/vendor/uplot/uPlot.iife.min.js",
        "exporters/render/vendor/uplot/uPlot.min.css", "exporters/render/vendor/uplot/LICENSE",
        "exporters/render/web/charts.js", "exporters/render/web/charts.css",
        "exporters/render/web/record_errors.js",
        "exporters/render/vendor/d3-flamegraph/d3-flamegraph.umd.min.js",
        "exporters/render/vendor/d3-flamegraph/d3-selection.min.js",
        "exporters/render/vendor/d3-flamegraph/LICENSE.d3-flame-graph"}) {
    const std::string content = test_fixtures::source_file(path);
    ASSERT_GT(content.size(), 100u) << path;
    EXPECT_NE(html.find(content), std::string::npos) << path;
  }
  EXPECT_GT(test_fixtures::source_file("exporters/render/vendor/uplot/uPlot.iife.min.js").size(),
            40000u);
  // The error recorder runs first, then uPlot, then the chart script, then the call.
  const size_t recorder = html.find("root.setAttribute('data-errors', '')");
  const size_t uplot = html.find("var uPlot=function");
  const size_t charts = html.find("var pgwaitprof = (function");
  const size_t call =
      html.find("pgwaitprof.draw('timeline', 'timeline-chart', 'timeline-data', 'timeline-info');");
  ASSERT_NE(recorder, std::string::npos);
  ASSERT_NE(call, std::string::npos);
  EXPECT_LT(recorder, html.find("<body>"));
  EXPECT_LT(recorder, uplot);
  EXPECT_LT(uplot, charts);
  EXPECT_LT(charts, call);
  EXPECT_NE(html.find("<div class=\"uchart\" id=\"timeline-chart\""), std::string::npos);
  EXPECT_NE(html.find("<div class=\"fallback\">"), std::string::npos);
}

TEST_F(RenderHtml, TimelineDataHasEverySeriesOfTheFixture) {
  const std::string html = render_html(run_);
  const json data = json::parse(test_fixtures::script_json(html, "timeline-data"));
  const json& timeline = report_.at("timeline");
  ASSERT_EQ(data.at("x").size(), timeline.size());

  std::vector<std::string> names;
  for (const auto& series : data.at("series")) {
    names.push_back(series.at("name"));
    EXPECT_EQ(series.at("values").size(), timeline.size()) << series.at("name");
  }
  std::vector<std::string> expected = stacking_order(raw_);
  expected.insert(expected.end(), {"tps", "latency avg"});
  EXPECT_EQ(names, expected);

  for (size_t index = 0; index < timeline.size(); ++index) {
    const json& slice = timeline[index];
    const double start = slice.at("start_s");
    const double duration = slice.at("duration_s");
    EXPECT_DOUBLE_EQ(data.at("x")[index].get<double>(), start + duration / 2);
    // Every class's AAS from the slice's raw counts.
    std::map<std::string, double> aas;
    const double snapshots = slice.at("profile").at("snapshots");
    for (const auto& entry : slice.at("profile").at("entries")) {
      if (!raw_is_idle(entry)) {
        aas[entry.at("wait_event_type")] += entry.at("count").get<double>() / snapshots;
      }
    }
    for (const auto& series : data.at("series")) {
      const json& value = series.at("values")[index];
      if (series.at("stacked")) {
        EXPECT_NEAR(value.get<double>(), aas[series.at("name")], 1e-9)
            << series.at("name") << " at " << start;
        EXPECT_EQ(series.at("scale"), "aas");
        EXPECT_EQ(
            series.at("colour"),
            std::string(text_format::wait_class_colour(series.at("name").get<std::string>())));
      }
    }
    // tps and latency as pgbench printed them; "-nan" latency is a gap, not a 0.
    EXPECT_EQ(data.at("series")[names.size() - 2].at("values")[index],
              slice.at("loadgen").at("tps"));
    EXPECT_EQ(data.at("series")[names.size() - 1].at("values")[index],
              slice.at("loadgen").at("latency_avg_ms"));
  }
  EXPECT_TRUE(data.at("series").back().at("values")[17].is_null());

  ASSERT_EQ(data.at("stalls").size(), report_.at("stalls").size());
  const json& stall = report_.at("stalls")[0];
  EXPECT_EQ(data.at("stalls")[0],
            json({stall.at("start_s").get<double>(),
                  stall.at("start_s").get<double>() + stall.at("duration_s").get<double>()}));
  std::vector<std::string> lanes;
  for (const auto& lane : data.at("lanes")) lanes.push_back(lane.at("name"));
  EXPECT_EQ(lanes, (std::vector<std::string>{"av", "ch"}));
  std::vector<std::string> scales;
  for (const auto& axis : data.at("axes")) scales.push_back(axis.at("scale"));
  EXPECT_EQ(scales, (std::vector<std::string>{"aas", "tps", "ms"}));
}

TEST_F(RenderHtml, TimelineDataCannotEndItsScriptElement) {
  model::Run hostile = run_;
  const model::WaitKey key{"client backend", "active", "Extension", "</script><!--x&"};
  for (auto& slice : hostile.timeline) slice.profile.add(key, 100000);
  const std::string html = render_html(hostile);
  const std::string text = test_fixtures::script_json(html, "timeline-data");
  EXPECT_EQ(text.find('<'), std::string::npos);
  const json data = json::parse(text);  // whole: nothing ended the element early
  EXPECT_NE(data.at("notes")[0].get<std::string>().find("Extension | </script><!--x&"),
            std::string::npos);
}

TEST_F(RenderHtml, DrawsOneAreaPerWaitClassStallsAndBackground) {
  const std::string html = render_html(run_);
  size_t polygons = 0;
  for (size_t at = html.find("<polygon"); at != std::string::npos;
       at = html.find("<polygon", at + 1)) {
    ++polygons;
  }
  EXPECT_EQ(polygons, raw_.by_type.size());
  EXPECT_NE(html.find("<rect class=\"stall\""), std::string::npos);
  EXPECT_NE(html.find("class=\"tps\""), std::string::npos);
  EXPECT_NE(html.find(">av</text>"), std::string::npos);
  EXPECT_NE(html.find(">ch</text>"), std::string::npos);
  EXPECT_NE(html.find("<details>"), std::string::npos);
  // Round ticks with units on the axes.
  EXPECT_NE(html.find(">10 s</text>"), std::string::npos);
  EXPECT_NE(html.find(">8k</text>"), std::string::npos);
  EXPECT_NE(html.find(">average active sessions</text>"), std::string::npos);
  // The key figures.
  EXPECT_NE(html.find("7659.7 tps"), std::string::npos);
  EXPECT_NE(html.find("2.089 ms"), std::string::npos);
  EXPECT_NE(html.find("99.7 Hz"), std::string::npos);
}

TEST_F(RenderHtml, EscapesEveryText) {
  model::Run hostile = run_;
  hostile.label = "<script>alert('x')</script>";
  hostile.profile.add({"client backend", "active", "Extension", "<b>&"}, 5000);
  const std::string html = render_html(hostile);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>&"), std::string::npos);
  EXPECT_NE(html.find("Extension | &lt;b&gt;&amp;"), std::string::npos);
  const std::string markdown = render_markdown(hostile);
  EXPECT_EQ(markdown.find("<script>"), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::exporters
