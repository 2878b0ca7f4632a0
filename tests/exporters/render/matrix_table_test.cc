// The matrix table: cells, medians, ranges, dominant waits and wait profiles of the fixture sweep
// (tests/fixtures/compare/{master,patched} together, see its README), and its renderers.
#include "exporters/render/matrix_table.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>

#include "exporters/render/matrix_table.h"
#include "exporters/render/text_format.h"
#include "model/run_estimates.h"
#include "tests/exporters/render/fixtures.h"
#include "tests/exporters/render/matrix_table_fixture.h"

namespace pgwaitprof::exporters {
namespace {

using namespace test_support;

TEST(MatrixTable, VariantsInRunOrderClientsAscending) {
  const auto& table = fixture_table();
  EXPECT_EQ(table.name, "clog-buffers");
  EXPECT_EQ(table.variants, (std::vector<std::string>{"patched", "master"}));
  EXPECT_EQ(table.clients, (std::vector<int>{1, 8, 16, 32, 64, 128}));
  ASSERT_EQ(table.cells.size(), 12u);
  EXPECT_EQ(table.cells.front().variant, "patched");
  EXPECT_EQ(table.cells.front().clients, 1);
  EXPECT_EQ(table.cells.back().variant, "master");
  EXPECT_EQ(table.cells.back().clients, 128);
  EXPECT_EQ(table.find("master", 12), nullptr);
  EXPECT_EQ(table.find("other", 8), nullptr);
}

TEST(MatrixTable, FirstRepeatDecidesVariantOrder) {
  // Listed repeat 2 of "b" first, but repeat 1 of "a" ran before anything of "b".
  const std::vector<model::Run> runs{loadgen_run("b", 8, 100, 2), loadgen_run("a", 8, 90, 1),
                                     loadgen_run("b", 8, 110, 1), loadgen_run("a", 1, 10, 1)};
  const auto table = build_matrix_table(runs);
  EXPECT_EQ(table.variants, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(table.clients, (std::vector<int>{1, 8}));
  ASSERT_NE(table.find("b", 8), nullptr);
  EXPECT_EQ(table.find("b", 1), nullptr);  // never ran: absent, not empty
  EXPECT_EQ(table.cells.size(), 3u);
}

TEST(MatrixTable, MedianMinMaxLatencyPerCell) {
  const MatrixCell* cell = fixture_table().find("master", 8);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->tps.size(), 5u);
  EXPECT_DOUBLE_EQ(cell->tps_median, 10000);
  EXPECT_DOUBLE_EQ(cell->tps_min, 9950);
  EXPECT_DOUBLE_EQ(cell->tps_max, 10050);
  EXPECT_NEAR(cell->latency_median.count(), 0.8, 1e-12);  // pgbench: 8 clients / 10000 tps
  EXPECT_EQ(cell->failed_runs, 0);

  const MatrixCell* single = fixture_table().find("patched", 64);
  ASSERT_NE(single, nullptr);
  EXPECT_EQ(single->tps, (std::vector<double>{33000}));
  EXPECT_DOUBLE_EQ(single->tps_min, single->tps_max);
}

TEST(MatrixTable, EvenRepeatsTakeTheMeanOfTheMiddleTwo) {
  const auto table = build_matrix_table({loadgen_run("", 4, 100, 1), loadgen_run("", 4, 140, 2),
                                         loadgen_run("", 4, 120, 3), loadgen_run("", 4, 90, 4)});
  ASSERT_EQ(table.cells.size(), 1u);
  EXPECT_DOUBLE_EQ(table.cells[0].tps_median, 110);
  EXPECT_DOUBLE_EQ(table.cells[0].tps_min, 90);
  EXPECT_DOUBLE_EQ(table.cells[0].tps_max, 140);
}

TEST(MatrixTable, FailedRunsExcludedFromTpsButCounted) {
  // master@32's repeat 4 failed after pgbench printed 500 tps and a deadlock-ridden profile.
  const MatrixCell* cell = fixture_table().find("master", 32);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->failed_runs, 1);
  EXPECT_EQ(cell->tps.size(), 5u);
  EXPECT_DOUBLE_EQ(cell->tps_min, 18500);
  EXPECT_DOUBLE_EQ(cell->tps_median, 20000);
  // Its 90% Lock share would make the cell's share 0.5 if it were pooled in.
  EXPECT_EQ(cell->dominant_wait, "Lock | transactionid");
  EXPECT_NEAR(cell->dominant_share, 0.30 / 0.80, 1e-12);

  const auto table =
      build_matrix_table({loadgen_run("x", 8, 100, 1, model::RunStatus::kFailed),
                          loadgen_run("x", 8, 0, 2, model::RunStatus::kInterrupted)});
  ASSERT_EQ(table.cells.size(), 1u);
  EXPECT_TRUE(table.cells[0].tps.empty());
  EXPECT_EQ(table.cells[0].failed_runs, 2);
  EXPECT_NE(render_matrix_text(table).find("failed"), std::string::npos);
  // No completed run: no profile, so no error source and no shares either.
  EXPECT_EQ(render_matrix_csv(table).substr(render_matrix_csv(table).find('\n') + 1),
            "x,8,0,,,,,,,,,2,0,,\n");
}

TEST(MatrixTable, DominantWaitOfThePooledProfile) {
  const auto& table = fixture_table();
  const MatrixCell* cpu = table.find("master", 1);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->dominant_wait, "CPU");
  EXPECT_EQ(cpu->dominant_class, "CPU");
  EXPECT_NEAR(cpu->dominant_share, 0.70 / 0.90, 1e-12);  // idle sessions are not load

  const MatrixCell* slru = table.find("master", 128);
  ASSERT_NE(slru, nullptr);
  EXPECT_EQ(slru->dominant_wait, "LWLock | XactSLRU");
  EXPECT_EQ(slru->dominant_class, "LWLock");
  EXPECT_NEAR(slru->dominant_share, 0.55 / 0.80, 1e-12);

  const MatrixCell* group = table.find("patched", 64);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->dominant_class, "IPC");
}

TEST(MatrixTable, DominantWaitMergesBackendTypes) {
  // master@16: client backends on CPU 4800 per run, on DataFileRead 4000, plus the
  // autovacuum worker's 1000 DataFileRead: only the merged line beats CPU.
  const MatrixCell* cell = fixture_table().find("master", 16);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->dominant_wait, "IO | DataFileRead");
  EXPECT_EQ(cell->dominant_class, "IO");
  EXPECT_NEAR(cell->dominant_share, 5000.0 / 13800, 1e-12);
  // With the patch client backends read less (2400 + 1000 < 6400 on CPU).
  EXPECT_EQ(fixture_table().find("patched", 16)->dominant_wait, "CPU");
}

TEST(MatrixRender, TextLikeTheHackersTablesWithin100Columns) {
  const std::string text = render_matrix_text(fixture_table());
  const auto lines = lines_of(text);
  for (const auto& line : lines) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_TRUE(text.starts_with("clog-buffers\n\ntps by clients, median of 1-5 repeats")) << text;
  // Header and median rows: variants down, clients across, right-aligned under the header.
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.starts_with("clients");
  });
  ASSERT_NE(header, lines.end());
  const auto master = std::find_if(
      header, lines.end(), [](const std::string& line) { return line.starts_with("master "); });
  ASSERT_NE(master, lines.end());
  EXPECT_EQ(master->find("20000*") + 6, header->find(" 32") + 3) << *header << "\n" << *master;
  EXPECT_EQ(master->find("10000") + 5, header->find(" 8 ") + 2);
  // The range line under master's medians.
  ASSERT_NE(master + 1, lines.end());
  EXPECT_NE((master + 1)->find("9950-10050"), std::string::npos);
  EXPECT_NE((master + 1)->find("18500-23000"), std::string::npos);
  EXPECT_NE(text.find("LWLock | XactSLRU 69%"), std::string::npos);
  EXPECT_NE(text.find("master at 32 clients: 1 of 6 runs failed"), std::string::npos);
}

TEST(MatrixRender, WideTablesContinueInBlocks) {
  std::vector<model::Run> runs;
  for (const int clients : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}) {
    runs.push_back(loadgen_run("a-long-variant-name", clients, 123456.0 + clients, 1));
    runs.push_back(loadgen_run("a-long-variant-name", clients, 234567.0 + clients, 2));
  }
  const std::string text = render_matrix_text(build_matrix_table(runs));
  size_t headers = 0;
  for (const auto& line : lines_of(text)) {
    EXPECT_LE(line.size(), 100u) << line;
    if (line.starts_with("clients")) ++headers;
  }
  EXPECT_GT(headers, 3u);  // the range table needed more than one block
  EXPECT_NE(text.find("124480-235591"), std::string::npos);  // nothing was cut
  // These runs sampled nothing: no wait profile section, not even its title.
  EXPECT_EQ(text.find("wait profile"), std::string::npos);
}

TEST(MatrixRender, MarkdownTables) {
  const std::string markdown = render_matrix_markdown(fixture_table());
  EXPECT_NE(markdown.find("| variant | 1 | 8 | 16 | 32 | 64 | 128 |"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| master | 4000 | 10000 (9950-10050) |"), std::string::npos);
  EXPECT_NE(markdown.find("LWLock \\| XactSLRU 69%"), std::string::npos);
  EXPECT_NE(markdown.find("20000\\* (18500-23000)"), std::string::npos);
}

TEST(MatrixRender, CsvOneRowPerCell) {
  const auto lines = lines_of(render_matrix_csv(fixture_table()));
  ASSERT_EQ(lines.size(), 13u);
  // Two columns per wait class of the sweep, in stacking order.
  EXPECT_EQ(lines[0],
            "variant,clients,repeats,tps_median,tps_min,tps_max,latency_median_ms,p99_median_ms,"
            "dominant_wait,"
            "dominant_class,dominant_share,failed_runs,profile_runs,share_error,aas_total,"
            "share_cpu,share_cpu_se,share_lwlock,share_lwlock_se,share_lock,share_lock_se,"
            "share_io,share_io_se,share_ipc,share_ipc_se,share_client,share_client_se");
  auto row_starting = [&](const std::string& prefix) {
    const auto found = std::find_if(lines.begin(), lines.end(), [&](const std::string& line) {
      return line.starts_with(prefix);
    });
    return found == lines.end() ? std::string() : *found;
  };
  // The fixture's repeats have equal profiles: the spread, hence the error, is 0.
  EXPECT_EQ(row_starting("master,32,"),
            "master,32,5,20000.00,18500.00,23000.00,1.600,,Lock | transactionid,Lock,0.3750,1,5,"
            "repeats,25.6000,0.2500,0.0000,0.2500,0.0000,0.3750,0.0000,0,0,0,0,0.1250,0.0000");
  EXPECT_TRUE(
      row_starting("patched,64,")
          .starts_with(
              "patched,64,1,33000.00,33000.00,33000.00,1.939,,IPC | XactGroupUpdate,IPC,0.4375,0,1,"
              "sampling,"))
      << row_starting("patched,64,");
}

TEST(MatrixRender, CsvQuotesFields) {
  const auto csv = render_matrix_csv(build_matrix_table({loadgen_run("fast, \"new\"", 8, 100, 1)}));
  EXPECT_NE(csv.find("\n\"fast, \"\"new\"\"\",8,1,100.00"), std::string::npos) << csv;
}

TEST(MatrixRender, JsonCells) {
  const auto json = nlohmann::json::parse(render_matrix_json(fixture_table()));
  EXPECT_EQ(json.at("name"), "clog-buffers");
  EXPECT_EQ(json.at("variants"), nlohmann::json({"patched", "master"}));
  EXPECT_EQ(json.at("clients"), nlohmann::json({1, 8, 16, 32, 64, 128}));
  ASSERT_EQ(json.at("cells").size(), 12u);
  const auto& cell = json.at("cells").at(9);  // master@32
  EXPECT_EQ(cell.at("variant"), "master");
  EXPECT_EQ(cell.at("clients"), 32);
  EXPECT_EQ(cell.at("tps").size(), 5u);
  EXPECT_EQ(cell.at("tps_median"), 20000.0);
  EXPECT_EQ(cell.at("failed_runs"), 1);
  EXPECT_EQ(cell.at("dominant_class"), "Lock");
}

TEST(MatrixRender, HtmlIsSelfContainedAndEscaped) {
  auto runs = fixture_runs();
  runs.push_back(loadgen_run("<script>alert(1)</script>", 8, 5000, 1));
  const std::string html = render_matrix_html(build_matrix_table(runs, "a & b"));
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<title>a &amp; b</title>"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  // In the chart data the name is JSON with '<' escaped, so it cannot end the element.
  EXPECT_NE(html.find("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"), std::string::npos);
  // No fetches: the URLs are the SVG namespace, never loaded, and uPlot's banner comment.
  for (const char* remote : {"src=", "href=", "url(", "@import", "<link", "<img", "<iframe",
                             "fetch(", "XMLHttpRequest"}) {
    EXPECT_EQ(html.find(remote), std::string::npos) << remote;
  }
  EXPECT_EQ(test_fixtures::unexpected_urls(
                html, {"http://www.w3.org/2000/svg", "https://github.com/leeoniya/uPlot"}),
            std::vector<std::string>{});
  EXPECT_NE(
      html.find(test_fixtures::source_file("exporters/render/vendor/uplot/uPlot.iife.min.js")),
      std::string::npos);
  // One line per variant with data, whiskers for multi-run cells, heat map coloured by class.
  EXPECT_NE(html.find("class=\"series\""), std::string::npos);
  EXPECT_NE(html.find("class=\"whisker\""), std::string::npos);
  // Heat map cells carry their class; the colour is the class's mixed into white by the share.
  auto heat_cell = [&](const std::string& colour, const std::string& wait_class) {
    return std::regex_search(html,
                             std::regex("<td style=\"background:" + colour +
                                        ";color:#[0-9a-f]{3}\" data-class=\"" + wait_class + "\""));
  };
  // master@128: LWLock at 69%: 255 - (0.2 + 0.8 * 0.6875) * (255 - 0xe3) and so on.
  EXPECT_TRUE(heat_cell("#ea99d1", "LWLock"));
  EXPECT_TRUE(heat_cell("#[0-9a-f]{6}", "Lock"));
  EXPECT_TRUE(heat_cell("#[0-9a-f]{6}", "IPC"));
  EXPECT_TRUE(heat_cell("#[0-9a-f]{6}", "CPU"));
  EXPECT_TRUE(heat_cell("#[0-9a-f]{6}", "IO"));
  EXPECT_FALSE(heat_cell("#[0-9a-f]{6}", "Client"));  // no cell is dominated by Client waits
  EXPECT_NE(html.find("title=\"LWLock | XactSLRU (LWLock)\""), std::string::npos);
}

// A plan of builds: each variant's version() (from its runs) and configure options, the
// majors it mixes, every string a server gave escaped in every format.
TEST(MatrixRender, BuildsAndMixedMajorsInEveryFormat) {
  auto runs = fixture_runs();
  const std::string patched_version = "PostgreSQL 17.10 <em>dev</em> \x1b[31m*x* | y";
  for (auto& run : runs) {
    const bool patched = run.variant == "patched";
    run.environment.server_version = patched ? patched_version : "PostgreSQL 16.14";
    run.environment.server_version_num = patched ? 170010 : 160014;
  }
  auto table = build_matrix_table(runs, "clog-buffers");
  EXPECT_EQ(render_matrix_text(table).find("builds:"), std::string::npos);  // not a plan of builds
  model::set_builds(table, runs, {{"master", "'--with-openssl' 'CFLAGS=-O2 <x>'"}});
  ASSERT_EQ(table.builds.size(), 2u);
  EXPECT_EQ(table.builds[0].variant, "patched");
  EXPECT_EQ(table.builds[0].major, 17);
  EXPECT_EQ(table.builds[0].configure, "");
  EXPECT_EQ(table.builds[1].server_version, "PostgreSQL 16.14");
  EXPECT_EQ(table.mixed_majors, (std::vector<int>{16, 17}));

  const std::string text = render_matrix_text(table);
  EXPECT_NE(text.find("mixed majors: 16, 17\nbuilds:\n  patched = " +
                      text_format::text_escape(patched_version)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  master = PostgreSQL 16.14\n    configure: '--with-openssl'"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  const std::string markdown = render_matrix_markdown(table);
  EXPECT_NE(markdown.find("**Mixed majors: 16, 17**"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("- patched: " + text_format::markdown_escape(patched_version)),
            std::string::npos)
      << markdown;
  EXPECT_EQ(markdown.find("*x*"), std::string::npos) << markdown;
  const std::string html = render_matrix_html(table);
  EXPECT_NE(html.find("Mixed majors: 16, 17"), std::string::npos);
  EXPECT_EQ(html.find("<em>dev</em>"), std::string::npos);
  EXPECT_NE(html.find("&lt;em&gt;dev&lt;/em&gt;"), std::string::npos);
  EXPECT_NE(html.find("configure: &#39;--with-openssl&#39; &#39;CFLAGS=-O2 &lt;x&gt;&#39;"),
            std::string::npos)
      << html;
  const auto json = nlohmann::json::parse(render_matrix_json(table));
  EXPECT_EQ(json["builds"][0]["server_version"], patched_version);
  EXPECT_EQ(json["builds"][1]["configure"], "'--with-openssl' 'CFLAGS=-O2 <x>'");
  EXPECT_EQ(json["mixed_majors"], nlohmann::json::array({16, 17}));

  // One major: no "mixed majors".
  for (auto& run : runs) run.environment.server_version_num = 170010;
  model::set_builds(table, runs, {});
  EXPECT_TRUE(table.mixed_majors.empty());
  EXPECT_EQ(render_matrix_text(table).find("mixed majors"), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::exporters
