// The traced waits of a comparison and the wait durations of a matrix in every format they have:
// compare's text and Markdown table and JSON traced_waits, and the matrix's composition rows,
// text table and table.json durations, from hand-made traced runs with fixed histograms.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exporters/render/compare.h"
#include "exporters/render/matrix_detail.h"
#include "exporters/render/matrix_table.h"
#include "tests/model/traced_run_fixture.h"

namespace pgwaitprof::exporters {
namespace {

using model::kClientRead;
using model::kWalWrite;
using model::traced_run;

// Three repeats a side; B's WALWrite waits last four times as long.
Comparison wal_comparison() {
  std::vector<model::Run> a, b;
  for (int repeat = 1; repeat <= 3; ++repeat) {
    const double jitter = 1e-6 * repeat;
    a.push_back(traced_run("", 8, 1000, repeat,
                           {{kWalWrite, 1000, 100e-6 + jitter}, {kClientRead, 2000, 1e-3}}));
    b.push_back(traced_run("", 8, 1000, repeat,
                           {{kWalWrite, 1000, 400e-6 + jitter}, {kClientRead, 2000, 1e-3}}));
  }
  return compare_runs(a, b, "master", "patched");
}

TEST(TracedCompareRender, TextAndMarkdownNameWhatMovedWithTheSpread) {
  const auto comparison = wal_comparison();
  const auto text = render_comparison_text(comparison);
  const auto table = text.find("traced waits that moved");
  ASSERT_NE(table, std::string::npos) << text;
  const auto row = text.find("LWLock | WALWrite", table);
  ASSERT_NE(row, std::string::npos) << text;
  const auto line = text.substr(row, text.find('\n', row) - row);
  // waits a second, AAS, p99 on each side with the error between repeats, then what moved.
  EXPECT_NE(line.find("1000 ± 0.0"), std::string::npos) << line;
  EXPECT_NE(line.find("102us ± 1us"), std::string::npos) << line;
  EXPECT_NE(line.find("402us ± 1us"), std::string::npos) << line;
  EXPECT_TRUE(line.ends_with("time, p99")) << line;
  const auto read = text.find("Client | ClientRead", table);
  ASSERT_NE(read, std::string::npos) << text;
  EXPECT_TRUE(text.substr(read, text.find('\n', read) - read).ends_with("no")) << text;
  EXPECT_NE(text.find("note: traced: counts and time are exact"), std::string::npos) << text;

  const auto markdown = render_comparison_markdown(comparison);
  EXPECT_NE(markdown.find("### traced waits that moved"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| 8 | LWLock \\| WALWrite |"), std::string::npos) << markdown;
}

TEST(TracedCompareRender, JsonCarriesEachFigureWithItsErrorAndVerdict) {
  const auto json = nlohmann::json::parse(render_comparison_json(wal_comparison()));
  ASSERT_TRUE(json.contains("traced_waits"));
  const auto& first = json["traced_waits"][0];  // what moved comes first
  EXPECT_EQ(first["wait"], "LWLock | WALWrite");
  EXPECT_EQ(first["wait_class"], "LWLock");
  EXPECT_EQ(first["waits_a"], 3000);
  EXPECT_NEAR(first["p99_s"]["b"].get<double>(), 402e-6, 1e-9);
  EXPECT_TRUE(first["p99_s"]["significant"].get<bool>());
  EXPECT_FALSE(first["waits_per_s"]["significant"].get<bool>());
  EXPECT_EQ(first["moved"], nlohmann::json({"time", "p99"}));
}

TEST(TracedCompareRender, SampledRunsHaveNoTracedTableOrKey) {
  model::Run run = model::run_of("", 8, 1000);
  run.profile.add(kWalWrite, 10);
  run.profile.add_snapshots(100);
  const auto comparison = compare_runs({run}, {run});
  EXPECT_EQ(render_comparison_text(comparison).find("traced waits"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(render_comparison_json(comparison)).contains("traced_waits"));
}

// 1 and 4 clients, two repeats each: WALWrite's p99 grows from 100 to 1000 us.
MatrixTable traced_table() {
  std::vector<model::Run> runs;
  for (int repeat = 1; repeat <= 2; ++repeat) {
    runs.push_back(
        traced_run("v", 1, 500, repeat, {{kWalWrite, 400, 100e-6}, {kClientRead, 1000, 1e-3}}));
    runs.push_back(traced_run(
        "v", 4, 900, repeat,
        {{kWalWrite, 700 + 100 * static_cast<uint64_t>(repeat), (900 + 100 * repeat) * 1e-6},
         {kClientRead, 3000, 1e-3}}));
  }
  return build_matrix_table(runs, "traced");
}

TEST(TracedMatrixRender, CompositionShowsTheP99AndTheWaitsASecondPerClients) {
  const auto table = traced_table();
  const auto rows = matrix_detail::composition_rows(table, "v", " ±");
  auto find_after = [&](const std::string& heading, const std::string& label) {
    bool under = false;
    for (const auto& row : rows) {
      if (row.kind == matrix_detail::CompositionRow::Kind::kHeading) under = row.label == heading;
      if (under && row.label == label) return row.cells;
    }
    return std::vector<std::string>{};
  };
  EXPECT_EQ(find_after("p99 of the blocking waits (traced)", "LWLock | WALWrite"),
            (std::vector<std::string>{"100us ±0", "1.05ms ±50us"}));
  EXPECT_EQ(find_after("blocking waits a second (traced)", "LWLock | WALWrite"),
            (std::vector<std::string>{"400 ±0.0", "850 ±50.0"}));
  const auto text = render_matrix_text(table);
  EXPECT_NE(text.find("p99 of the blocking waits (traced):"), std::string::npos) << text;
  EXPECT_NE(text.find("traced cells: a wait is a blocking one"), std::string::npos) << text;
  EXPECT_NE(render_matrix_markdown(table).find("p99 of the blocking waits (traced):"),
            std::string::npos);
}

TEST(TracedMatrixRender, TableJsonCarriesTheDurationsOfTracedCellsOnly) {
  const auto json = nlohmann::json::parse(render_matrix_json(traced_table()));
  EXPECT_EQ(json["schema_version"], 4);
  const auto& durations = json["cells"][1]["durations"];  // 4 clients
  EXPECT_EQ(durations["traced_runs"], 2);
  const auto& wal = durations["events"][1];  // ClientRead has the most time
  EXPECT_EQ(wal["name"], "LWLock | WALWrite");
  EXPECT_NEAR(wal["p99_s"].get<double>(), 1.05e-3, 1e-9);
  EXPECT_NEAR(wal["p99_error_s"].get<double>(), 50e-6, 1e-9);
  EXPECT_NEAR(wal["waits_per_s"].get<double>(), 850, 1e-9);

  model::Run sampled = model::run_of("v", 1, 500);
  sampled.profile.add(kWalWrite, 10);
  sampled.profile.add_snapshots(100);
  const auto plain = nlohmann::json::parse(render_matrix_json(build_matrix_table({sampled})));
  EXPECT_FALSE(plain["cells"][0].contains("durations"));
}

}  // namespace
}  // namespace pgwaitprof::exporters
