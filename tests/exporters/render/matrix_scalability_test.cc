// The scalability section of a matrix in every format, and in compare, on a sweep drawn from
// known laws: two variants (one named with the hostile string, with a hostile wait event that
// grows across the knee), seven client counts, three repeats. The text stays within 100
// columns and holds no control character, the Markdown no HTML, the page no script of the
// user's; the numbers are the model's (model/scalability.h).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "exporters/render/compare.h"
#include "exporters/render/matrix_table.h"
#include "exporters/render/text_format.h"
#include "model/scalability.h"
#include "tests/exporters/render/escaping_fixture.h"
#include "tests/exporters/render/fixtures.h"

namespace pgwaitprof::exporters {
namespace {

using escaping_test::kHostile;
using escaping_test::markdown_hazard;
using escaping_test::terminal_hazard;
using test_fixtures::profile_run;

const model::UslParameters kPlain{.lambda = 1000, .sigma = 0.02, .kappa = 0.002};        // N* 22
const model::UslParameters kHostileLaw{.lambda = 1000, .sigma = 0.05, .kappa = 0.0002};  // N* 69

// Repeats 1 % apart; the Lock wait (a hostile event name on the hostile variant) grows from 32
// clients on, where both variants' efficiency falls below 50 %.
std::vector<model::Run> sweep_runs() {
  std::vector<model::Run> runs;
  for (const int clients : {1, 2, 4, 8, 16, 32, 64}) {
    for (int repeat = 1; repeat <= 3; ++repeat) {
      const uint64_t lock = clients >= 32 ? 400 : 50;
      for (const auto& [variant, law] :
           {std::pair{std::string("plain"), kPlain}, std::pair{kHostile, kHostileLaw}}) {
        auto run = profile_run(
            variant, clients, repeat,
            {{"Lock", variant == "plain" ? "transactionid" : kHostile, lock}, {"CPU", "CPU", 500}});
        run.loadgen->tps = model::usl_throughput(law, clients) * (1 + 0.01 * (repeat - 2));
        runs.push_back(std::move(run));
      }
    }
  }
  return runs;
}

const MatrixTable& sweep_table() {
  static const MatrixTable table = build_matrix_table(sweep_runs(), "usl");
  return table;
}

TEST(MatrixScalability, TextSectionWithinWidthAndEscaped) {
  const std::string text = render_matrix_text(sweep_table());
  EXPECT_EQ(terminal_hazard(text), "");
  // Within 100 columns where no name is longer than that (the hostile one is 200).
  std::vector<model::Run> plain;
  for (auto& run : sweep_runs()) {
    if (run.variant == "plain") plain.push_back(run);
  }
  std::istringstream stream(render_matrix_text(build_matrix_table(plain)));
  for (std::string line; std::getline(stream, line);) {
    EXPECT_LE(text_format::display_width(line), 100u) << line;
  }
  const auto section = text.find("\nscalability (Universal Scalability Law");
  ASSERT_NE(section, std::string::npos) << text;
  const std::string part = text.substr(section);
  EXPECT_NE(part.find("bootstrap over repeats (400 resamples)"), std::string::npos) << part;
  EXPECT_NE(part.find("\nplain\n"), std::string::npos) << part;
  EXPECT_NE(part.find("knee at 32 clients: Lock | transactionid 9 % → 44 %"), std::string::npos)
      << part;
  EXPECT_NE(part.find(text_format::text_escape("Lock | " + kHostile)), std::string::npos);
  EXPECT_NE(part.find("throughput peaks at 22 clients"), std::string::npos) << part;
}

TEST(MatrixScalability, MarkdownSection) {
  const std::string markdown = render_matrix_markdown(sweep_table());
  EXPECT_EQ(markdown_hazard(markdown), "") << markdown;
  EXPECT_NE(markdown.find("### Scalability"), std::string::npos);
  EXPECT_NE(markdown.find("#### Scalability: plain"), std::string::npos);
  EXPECT_NE(markdown.find("- knee (efficiency below 50 %): 32 clients"), std::string::npos)
      << markdown;
}

TEST(MatrixScalability, JsonCarriesTheFitKneeAndGrowth) {
  const auto json = nlohmann::json::parse(render_matrix_json(sweep_table()));
  const auto& scalability = json.at("scalability");
  ASSERT_EQ(scalability.size(), 2u);
  const auto& plain = scalability.at(0);
  EXPECT_EQ(plain.at("variant"), "plain");
  EXPECT_TRUE(plain.at("fitted").get<bool>());
  EXPECT_NEAR(plain.at("sigma").at("value").get<double>(), kPlain.sigma, 0.1 * kPlain.sigma);
  EXPECT_NEAR(plain.at("kappa").at("value").get<double>(), kPlain.kappa, 0.1 * kPlain.kappa);
  EXPECT_TRUE(plain.at("peak_clients").at("constrained").get<bool>());
  EXPECT_NEAR(plain.at("peak_clients").at("value").get<double>(), 22.1, 1.0);
  EXPECT_EQ(plain.at("knee").at("clients"), 32);
  EXPECT_EQ(plain.at("events").at(0).at("name"), "Lock | transactionid");
  // The hostile variant and event name are kept (JSON escapes them; bytes that are not UTF-8
  // become U+FFFD).
  const auto& hostile = scalability.at(1);
  EXPECT_TRUE(hostile.at("variant").get<std::string>().starts_with("<body id=\"pwned\">"));
  EXPECT_TRUE(hostile.at("events").at(0).at("name").get<std::string>().starts_with(
      "Lock | <body id=\"pwned\">"));
  EXPECT_GT(hostile.at("events").at(0).at("share_change").get<double>(), 0.2);
}

TEST(MatrixScalability, PageDrawsTheCurveAndThePeak) {
  const std::string html = render_matrix_html(sweep_table());
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("<h2 id=\"scalability\">"), std::string::npos);
  EXPECT_NE(html.find("class=\"series fit\""), std::string::npos);
  EXPECT_NE(html.find("class=\"peak\""), std::string::npos);
  EXPECT_NE(html.find(">N* 22</text>"), std::string::npos);
  // Every run is a dot: 2 variants x 7 counts x 3 repeats.
  size_t dots = 0;
  for (size_t at = html.find("class=\"run\""); at != std::string::npos;
       at = html.find("class=\"run\"", at + 1)) {
    ++dots;
  }
  EXPECT_EQ(dots, 42u);
}

TEST(MatrixScalability, FewClientCountsSayWhy) {
  std::vector<model::Run> runs;
  for (const int clients : {1, 8, 32}) runs.push_back(profile_run("v", clients, 1, {}));
  const std::string text = render_matrix_text(build_matrix_table(runs));
  EXPECT_NE(text.find("model: no fit: 3 client counts with throughput, 4 needed"),
            std::string::npos)
      << text;
}

TEST(MatrixScalability, CompareSetsKappaApart) {
  std::vector<model::Run> plain, hostile;
  for (auto& run : sweep_runs()) (run.variant == "plain" ? plain : hostile).push_back(run);
  const Comparison comparison = compare_runs(plain, hostile, "plain", kHostile);
  ASSERT_EQ(comparison.scalability.size(), 1u);
  const auto& shift = comparison.scalability.front();
  EXPECT_TRUE(shift.kappa.comparable);
  EXPECT_TRUE(shift.kappa.differ);  // 0.002 against 0.0002
  const std::string text = render_comparison_text(comparison);
  EXPECT_EQ(terminal_hazard(text), "");
  EXPECT_NE(text.find("κ, coherency"), std::string::npos) << text;
  const std::string markdown = render_comparison_markdown(comparison);
  EXPECT_EQ(markdown_hazard(markdown), "");
  const auto json = nlohmann::json::parse(render_comparison_json(comparison));
  EXPECT_EQ(json.at("scalability").at(0).at("kappa_differ"), true);
  EXPECT_NEAR(json.at("scalability").at(0).at("kappa_a").at("value").get<double>(), kPlain.kappa,
              0.1 * kPlain.kappa);
}

}  // namespace
}  // namespace pgwaitprof::exporters
