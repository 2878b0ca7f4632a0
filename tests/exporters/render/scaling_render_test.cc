// `runs --format scaling`: the runs side by side by client count with the load generator's own
// whole-run tps, per-client efficiency, CPU and top waits, and where throughput stops scaling;
// names from the server are escaped.
#include <gtest/gtest.h>

#include "exporters/render/history_render.h"
#include "model/scalability.h"

namespace pgwaitprof::exporters {
namespace {

store::RunSummary run(int clients, double whole_run_tps, std::map<std::string, double> shares) {
  store::RunSummary summary;
  summary.clients = clients;
  summary.label = "quickstart-c" + std::to_string(clients);
  summary.tps = whole_run_tps * 1.1;  // the steady state: not what the table shows
  summary.whole_run_tps = whole_run_tps;
  summary.wait_shares = std::move(shares);
  return summary;
}

model::Knee knee_of(const std::vector<store::RunSummary>& runs) {
  std::vector<model::ScalabilityCell> cells;
  for (const auto& summary : runs) {
    model::ScalabilityCell cell;
    cell.clients = summary.clients;
    cell.tps_median = summary.whole_run_tps;
    cells.push_back(cell);
  }
  std::sort(cells.begin(), cells.end(),
            [](const auto& a, const auto& b) { return a.clients < b.clients; });
  return model::find_knee(cells, model::UslFit{});
}

TEST(ScalingTable, ClientsTpsWaitsAndWhereItStopsScaling) {
  // Newest first, as `runs` gives them.
  const std::vector<store::RunSummary> runs = {
      run(16, 1538.2,
          {{"Client | ClientRead", 0.52}, {"CPU", 0.06}, {"Lock | transactionid", 0.2}}),
      run(4, 783.1, {{"Client | ClientRead", 0.4}, {"CPU", 0.1}, {"IO | WALSync", 0.3}}),
      run(1, 229.8, {{"IO | WALSync", 0.4}, {"CPU", 0.2}, {"Client | ClientRead\x1b[2J", 0.3}})};
  const std::string text = render_scaling(runs, knee_of(runs));
  const auto one = text.find("\n      1   229.8");
  const auto four = text.find("\n      4   783.1");
  const auto sixteen = text.find("\n     16  1538.2");
  ASSERT_NE(one, std::string::npos) << text;
  ASSERT_NE(four, std::string::npos) << text;
  ASSERT_NE(sixteen, std::string::npos) << text;
  EXPECT_LT(one, four);
  EXPECT_LT(four, sixteen);
  EXPECT_NE(text.find("0.85"), std::string::npos) << text;  // 783.1 / (4 x 229.8)
  EXPECT_NE(text.find("0.42"), std::string::npos) << text;  // 1538.2 / (16 x 229.8)
  EXPECT_NE(text.find("IO | WALSync 40%, Client | ClientRead\\x1b[2J 30%, CPU 20%"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("scaling: stops between 4 and 16 clients (tps per client under 50 % of 1 "
                      "client's)"),
            std::string::npos)
      << text;
}

TEST(ScalingTable, WithoutAOneClientRunItSaysSo) {
  const std::vector<store::RunSummary> runs = {run(8, 900, {}), run(4, 500, {})};
  const std::string text = render_scaling(runs, knee_of(runs));
  EXPECT_NE(text.find("scaling: no 1-client run to measure the others against"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace pgwaitprof::exporters
