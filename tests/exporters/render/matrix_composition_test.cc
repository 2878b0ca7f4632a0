// The matrix table's wait profile per cell: shares and AAS per wait class with their errors
// (one run's sampling error, or the repeats'), and its rendering per variant.
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

// The shares of one run of `clients` in `variant` per wait class, summed from its counts here
// rather than by the composition code.
std::map<std::string, std::vector<double>> fixture_class_shares(const std::string& variant,
                                                                int clients) {
  std::map<std::string, std::vector<double>> shares;
  for (const auto& run : fixture_runs()) {
    if (run.variant != variant || run.clients != clients ||
        run.status != model::RunStatus::kCompleted)
      continue;
    std::map<std::string, double> counts;
    double total = 0;
    for (const auto& [key, count] : run.profile.counts()) {
      if (model::is_idle(key)) continue;
      counts[key.wait_event_type] += static_cast<double>(count);
      total += static_cast<double>(count);
    }
    for (const auto& [wait_class, count] : counts) shares[wait_class].push_back(count / total);
  }
  return shares;
}

TEST(MatrixComposition, RepeatsGiveTheMeanAndItsStandardError) {
  using test_fixtures::profile_run;
  const std::vector<model::Run> runs = {
      profile_run("a", 8, 1, {{"CPU", "CPU", 500}, {"LWLock", "WALWrite", 500}}),
      profile_run("a", 8, 2, {{"CPU", "CPU", 600}, {"LWLock", "WALWrite", 400}}),
      profile_run("a", 8, 3, {{"CPU", "CPU", 700}, {"LWLock", "WALWrite", 300}}),
      // A failed run counts in neither tps nor the profile.
      profile_run("a", 8, 4, {{"Lock", "tuple", 1000}}, 1000, model::RunStatus::kFailed),
  };
  const auto table = build_matrix_table(runs);
  const MatrixCell* cell = table.find("a", 8);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->profile_runs, 3);
  EXPECT_EQ(cell->error_source, ShareError::kRepeats);
  EXPECT_DOUBLE_EQ(cell->aas_total, 1.0);
  ASSERT_EQ(cell->classes.size(), 2u);
  EXPECT_EQ(cell->find_class("Lock"), nullptr);
  const WaitShare* cpu = cell->find_class("CPU");
  ASSERT_NE(cpu, nullptr);
  // Shares 0.5, 0.6, 0.7: mean 0.6, sample deviation 0.1, standard error 0.1 / sqrt(3).
  EXPECT_NEAR(cpu->share, 0.6, 1e-12);
  EXPECT_NEAR(cpu->share_error, 0.1 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(cpu->aas, 0.6, 1e-12);  // 1000 snapshots: AAS 0.5, 0.6, 0.7
  EXPECT_NEAR(cpu->aas_error, 0.1 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(cell->find_class("LWLock")->share, 0.4, 1e-12);
  ASSERT_EQ(cell->events.size(), 2u);
  EXPECT_EQ(cell->events[0].name, "CPU");  // largest share first
  EXPECT_EQ(cell->events[1].name, "LWLock | WALWrite");
  EXPECT_EQ(cell->events[1].wait_class, "LWLock");
}

TEST(MatrixComposition, OneRunGivesItsSamplingError) {
  const auto table = build_matrix_table({test_fixtures::profile_run(
      "a", 16, 1, {{"CPU", "CPU", 300}, {"IO", "DataFileRead", 100}}, 200)});
  const MatrixCell& cell = table.cells.at(0);
  EXPECT_EQ(cell.profile_runs, 1);
  EXPECT_EQ(cell.error_source, ShareError::kSampling);
  EXPECT_DOUBLE_EQ(cell.aas_total, 2.0);
  const WaitShare* cpu = cell.find_class("CPU");
  ASSERT_NE(cpu, nullptr);
  EXPECT_DOUBLE_EQ(cpu->share, 0.75);
  EXPECT_DOUBLE_EQ(cpu->aas, 1.5);
  // A run without a timeline has no intervals to estimate its error from: none, not binomial.
  EXPECT_TRUE(std::isnan(cpu->share_error));
  EXPECT_TRUE(std::isnan(cpu->aas_error));

  // With 120 intervals of independent counts the error is the batch-means one.
  model::Run run = test_fixtures::profile_run("a", 16, 1, {}, 0);
  run.profile = model::Profile{};
  std::mt19937 random(5);
  std::binomial_distribution<int> busy(400, 0.75);
  for (int index = 0; index < 120; ++index) {
    model::TimelineSlice slice;
    slice.start = base::Seconds(index);
    slice.duration = base::Seconds(1);
    const auto on_cpu = static_cast<uint64_t>(busy(random));
    slice.profile.add({"client backend", "active", "CPU", "CPU"}, on_cpu);
    slice.profile.add({"client backend", "active", "IO", "DataFileRead"}, 400 - on_cpu);
    slice.profile.add_snapshots(200);
    run.profile.merge(slice.profile);
    run.timeline.push_back(std::move(slice));
  }
  const auto timed = build_matrix_table({run});
  const WaitShare* timed_cpu = timed.cells.at(0).find_class("CPU");
  ASSERT_NE(timed_cpu, nullptr);
  const auto estimate =
      model::estimate_keys(run, model::steady_window(run), false,
                           [](const model::WaitKey& key) { return key.wait_event_type == "CPU"; });
  ASSERT_TRUE(estimate.share.reliable);
  EXPECT_DOUBLE_EQ(timed_cpu->share_error, estimate.share.standard_error);
  EXPECT_GT(timed_cpu->share_error, 0);
}

TEST(MatrixComposition, ClassesInStackingOrderThenByName) {
  const auto table = build_matrix_table({test_fixtures::profile_run("a", 4, 1,
                                                                    {{"Client", "ClientRead", 1},
                                                                     {"Zeta", "x", 1},
                                                                     {"IO", "WALSync", 1},
                                                                     {"Alpha", "y", 1},
                                                                     {"CPU", "CPU", 1},
                                                                     {"LWLock", "WALWrite", 1}})});
  std::vector<std::string> names;
  for (const auto& share : table.cells.at(0).classes) names.push_back(share.name);
  EXPECT_EQ(names, (std::vector<std::string>{"CPU", "LWLock", "IO", "Client", "Alpha", "Zeta"}));
}

TEST(MatrixComposition, FixtureCellsErrorsComeFromRepeatsOrOneRun) {
  const auto& table = fixture_table();
  const MatrixCell* single = table.find("master", 1);
  ASSERT_NE(single, nullptr);
  EXPECT_EQ(single->error_source, ShareError::kSampling);
  const MatrixCell* repeated = table.find("master", 128);
  ASSERT_NE(repeated, nullptr);
  EXPECT_EQ(repeated->error_source, ShareError::kRepeats);
  EXPECT_EQ(repeated->profile_runs, 5);
  const auto lwlock = fixture_class_shares("master", 128).at("LWLock");
  ASSERT_EQ(lwlock.size(), 5u);
  EXPECT_NEAR(repeated->find_class("LWLock")->share, lwlock[0], 1e-12);
  // master@32's failed repeat (90% Lock) is not in the mean.
  const MatrixCell* with_failure = table.find("master", 32);
  EXPECT_EQ(with_failure->profile_runs, 5);
  EXPECT_NEAR(with_failure->find_class("Lock")->share, 0.375, 1e-12);
}

TEST(MatrixRender, TextCompositionPerVariantWithErrors) {
  const std::string text = render_matrix_text(fixture_table());
  const auto lines = lines_of(text);
  for (const auto& line : lines) EXPECT_LE(display_width(line), 100u) << line;
  const auto title = std::find(lines.begin(), lines.end(),
                               "wait profile by clients (share of non-idle samples, %)");
  ASSERT_NE(title, lines.end()) << text;
  const auto master = std::find(title, lines.end(), "master");
  ASSERT_NE(master, lines.end());
  const std::string& header = *(master + 1);
  ASSERT_TRUE(header.starts_with("clients")) << header;
  // master's block ends where the scalability section begins (its waits across the knee have
  // rows named like these).
  const auto end = std::find_if(master, lines.end(), [](const std::string& line) {
    return line.starts_with("scalability (");
  });
  ASSERT_NE(end, lines.end());
  auto row = [&](const std::string& label) {
    const auto found = std::find_if(master, end, [&](const std::string& line) {
      return line == label || line.starts_with(label + " ");
    });
    return found == end ? std::string() : *found;
  };
  // master@1 is one run without a timeline: 700 of 900 non-idle samples on CPU, no error.
  const std::string cpu_1 = "77.8";
  const std::string cpu = row("CPU");
  ASSERT_NE(cpu.find(cpu_1), std::string::npos) << cpu;
  // Right-aligned under its client count, in display columns ("±" is one).
  EXPECT_EQ(display_width(cpu.substr(0, cpu.find(cpu_1) + cpu_1.size())), header.find(" 1 ") + 2)
      << header << "\n"
      << cpu;
  const double lwlock_128 = fixture_class_shares("master", 128).at("LWLock").at(0);
  const std::string lwlock = row("LWLock");
  EXPECT_TRUE(lwlock.ends_with(fmt::format("{:.1f} ±0.0", 100 * lwlock_128))) << lwlock;
  EXPECT_TRUE(row("AAS (non-idle)").starts_with("AAS (non-idle)")) << text;
  EXPECT_NE(row("top wait events:"), "");
  EXPECT_NE(row("LWLock | XactSLRU"), "");
  EXPECT_EQ(row("IPC"), "");  // master never waits on IPC; patched does
  // Patched's block follows master's... or precedes it: variants in run order.
  EXPECT_NE(std::find(title, lines.end(), "patched"), lines.end());
}

TEST(MatrixRender, MarkdownCompositionTables) {
  const std::string markdown = render_matrix_markdown(fixture_table());
  EXPECT_NE(markdown.find("### Wait profile: master\n\n| wait | 1 | 8 | 16 | 32 | 64 | 128 |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| CPU | 77.8 | 62.5 ± 0.0 | "), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| LWLock \\| XactSLRU | "), std::string::npos);
  EXPECT_NE(markdown.find("standard error of the mean over repeats"), std::string::npos);
}

TEST(MatrixRender, JsonCellsCarryTheirComposition) {
  const auto json = nlohmann::json::parse(render_matrix_json(fixture_table()));
  const auto& cell = json.at("cells").at(9);  // master@32
  EXPECT_EQ(cell.at("profile_runs"), 5);
  EXPECT_EQ(cell.at("share_error"), "repeats");
  EXPECT_DOUBLE_EQ(cell.at("aas_total").get<double>(), 25.6);
  std::vector<std::string> classes;
  for (const auto& share : cell.at("classes")) classes.push_back(share.at("name"));
  EXPECT_EQ(classes, (std::vector<std::string>{"CPU", "LWLock", "Lock", "Client"}));
  EXPECT_EQ(cell.at("classes").at(2).at("share"), 0.375);
  EXPECT_EQ(cell.at("events").at(0).at("name"), "Lock | transactionid");
  EXPECT_EQ(json.at("cells").at(4).at("share_error"), "sampling");  // patched@64
}

TEST(MatrixRender, HtmlCompositionChartDataAndTables) {
  const auto& table = fixture_table();
  const std::string html = render_matrix_html(table);
  const auto data = nlohmann::json::parse(test_fixtures::script_json(html, "composition-data"));
  EXPECT_EQ(data.at("clients"), nlohmann::json({1, 8, 16, 32, 64, 128}));
  double aas_max = 0;
  for (const auto& cell : table.cells) aas_max = std::max(aas_max, cell.aas_total);
  EXPECT_DOUBLE_EQ(data.at("aas_max").get<double>(), aas_max);
  ASSERT_EQ(data.at("variants").size(), 2u);
  for (size_t index = 0; index < 2; ++index) {
    const auto& variant = data.at("variants")[index];
    EXPECT_EQ(variant.at("name"), table.variants[index]);
    std::vector<std::string> names;
    for (const auto& series : variant.at("series")) {
      names.push_back(series.at("name"));
      EXPECT_EQ(series.at("colour"), std::string(wait_class_colour(names.back())));
      ASSERT_EQ(series.at("aas").size(), 6u);
      for (size_t column = 0; column < 6; ++column) {
        const MatrixCell* cell = table.find(table.variants[index], table.clients[column]);
        const WaitShare* share = cell->find_class(names.back());
        EXPECT_DOUBLE_EQ(series.at("aas")[column].get<double>(), share ? share->aas : 0.0);
        EXPECT_DOUBLE_EQ(series.at("share")[column].get<double>(), share ? share->share : 0.0);
      }
    }
    const std::vector<std::string> expected =
        index == 0 ? std::vector<std::string>{"CPU", "LWLock", "Lock", "IO", "IPC", "Client"}
                   : std::vector<std::string>{"CPU", "LWLock", "Lock", "IO", "Client"};
    EXPECT_EQ(names, expected) << variant.at("name");
    EXPECT_NE(html.find(fmt::format("<div class=\"uchart\" id=\"composition-chart-{}\"", index)),
              std::string::npos);
  }
  EXPECT_NE(html.find("pgwaitprof.draw('compositions', 'composition-data', "
                      "'composition-chart-', 'composition-view');"),
            std::string::npos);
  EXPECT_NE(html.find("<button type=\"button\" data-view=\"share\">"), std::string::npos);
  EXPECT_NE(html.find("<td>77.8</td>"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"heading\"><th colspan=\"7\">top wait events</th></tr>"),
            std::string::npos);

  // Runs that sampled nothing: no composition section and no chart to draw.
  const std::string bare = render_matrix_html(build_matrix_table({loadgen_run("a", 8, 100)}));
  EXPECT_EQ(bare.find("composition-data"), std::string::npos);
  EXPECT_EQ(bare.find("pgwaitprof.draw("), std::string::npos);
  EXPECT_NE(bare.find("<caption>tps (median, min-max below)</caption>"), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::exporters
