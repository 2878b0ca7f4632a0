// `runs` and `trend` in every format with hostile labels, workloads, hosts, server versions,
// wait names and settings (issue 23, item 6: `runs --format md` and `trend --format md` printed
// them raw): no control character reaches the terminal, no HTML or link the Markdown, no row
// breaks a table or a CSV.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "exporters/render/history_render.h"
#include "exporters/render/text_format.h"
#include "store/trend.h"
#include "tests/exporters/render/escaping_fixture.h"

namespace pgwaitprof::store {
namespace {

using exporters::escaping_test::formula_hazard;
using exporters::escaping_test::kFormulas;
using exporters::escaping_test::kHostile;
using exporters::escaping_test::markdown_hazard;
using exporters::escaping_test::terminal_hazard;

std::vector<RunSummary> hostile_runs() {
  std::vector<RunSummary> runs;
  for (int day = 1; day <= 6; ++day) {
    RunSummary run;
    run.id = "run-" + std::to_string(day);
    run.dir = "/data/runs/" + kHostile;
    run.label = day % 2 ? kHostile : "plain";
    run.started_at = "2026-11-0" + std::to_string(day) + "T12:00:00Z";
    run.status = day == 6 ? "failed" : "completed";
    run.error = kHostile;
    run.workload = kHostile;
    run.clients = 8;
    run.tps = 1000 + day;
    run.tps_half_width = 10;
    run.latency_ms = 2;
    run.aas = 3;
    run.top_wait = "LWLock | " + kHostile;
    run.class_aas = {{"CPU", 1}, {kHostile, 2}};
    run.host = kHostile;
    run.server_version = kHostile;
    run.kernel = kHostile;
    run.settings = {{kHostile, kHostile}};
    runs.push_back(run);
  }
  return runs;
}

TEST(HistoryEscaping, RunsInEveryFormat) {
  const auto runs = hostile_runs();
  const std::string text = exporters::render_runs(runs, "text");
  ASSERT_EQ(terminal_hazard(text), "") << text;
  EXPECT_NE(text.find("\\x1b[31mred"), std::string::npos);
  const std::string markdown = exporters::render_runs(runs, "md");
  ASSERT_EQ(markdown_hazard(markdown), "") << markdown;
  EXPECT_NE(markdown.find("&lt;body id=\"pwned\"&gt;"), std::string::npos);
  const std::string csv = exporters::render_runs(runs, "csv");
  ASSERT_EQ(terminal_hazard(csv), "") << csv;
  EXPECT_EQ(exporters::escaping_test::lines_of(csv).size(), runs.size() + 1);
  const std::string json = exporters::render_runs(runs, "json");
  const auto listed = nlohmann::json::parse(json);  // invalid UTF-8 replaced, not thrown
  ASSERT_EQ(listed.size(), runs.size());
  EXPECT_TRUE(exporters::escaping_test::decode_utf8(listed.front().at("label").get<std::string>()));
}

TEST(HistoryEscaping, TrendInEveryFormat) {
  for (const std::string& group_by :
       std::vector<std::string>{"", "label", "host", "setting:" + kHostile}) {
    TrendOptions options;
    options.group_by = group_by;
    const Trend trend = build_trend(hostile_runs(), options);
    const std::string text = exporters::render_trend(trend, "text");
    ASSERT_EQ(terminal_hazard(text), "") << text;
    EXPECT_NE(text.find(exporters::text_format::text_escape(kHostile)), std::string::npos)
        << group_by;
    const std::string markdown = exporters::render_trend(trend, "md");
    ASSERT_EQ(markdown_hazard(markdown), "") << markdown;
    EXPECT_NE(markdown.find("&lt;body id=\"pwned\"&gt;"), std::string::npos);
    EXPECT_NO_THROW(nlohmann::json::parse(exporters::render_trend(trend, "json")));
    const std::string html = exporters::render_trend(trend, "html");
    EXPECT_EQ(html.find("<body id=\"pwned\""), std::string::npos);
  }
}

// Labels, workloads, hosts and wait names that a spreadsheet would run as formulas: every cell
// of `runs --format csv` and `trend --format csv` is text to it (issue 40 item 3).
TEST(HistoryEscaping, CsvCellsAreNeverFormulas) {
  auto runs = hostile_runs();
  for (size_t index = 0; index < runs.size(); ++index) {
    const auto& formula = kFormulas[index % kFormulas.size()];
    runs[index].label = formula;
    runs[index].workload = formula;
    runs[index].host = formula;
    runs[index].top_wait = formula;
    runs[index].class_aas = {{"CPU", 1}, {formula, 2}};
  }
  const std::string csv = exporters::render_runs(runs, "csv");
  EXPECT_EQ(formula_hazard(csv), "") << csv;
  EXPECT_EQ(terminal_hazard(csv), "") << csv;
  EXPECT_NE(csv.find("'=cmd|' /C calc'!A0\\x1b[31m"), std::string::npos) << csv;
  for (const std::string& group_by : std::vector<std::string>{"", "label", "host"}) {
    TrendOptions options;
    options.group_by = group_by;
    const std::string trend = exporters::render_trend(build_trend(runs, options), "csv");
    EXPECT_EQ(formula_hazard(trend), "") << trend;
    EXPECT_EQ(terminal_hazard(trend), "") << trend;
  }
}

}  // namespace
}  // namespace pgwaitprof::store
