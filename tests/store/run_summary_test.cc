// pgwaitprof's own version in the run history (store/run_summary.h, summary version 6): taken
// from the report (schema 14), kept in the summary's JSON, unknown ("") in a summary of version
// 5 or a report of schema 13, and named among what changed at a change point in every format.
#include "store/run_summary.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "exporters/render/history_render.h"
#include "exporters/render/text_format.h"
#include "store/trend_changes.h"

namespace pgwaitprof::store {
namespace {

using nlohmann::json;

model::Run run_made_by(const std::string& version) {
  model::Run run;
  run.id = "20261205-230000-0001";
  run.started_at = "2026-12-05T23:00:00Z";
  run.environment.hostname = "bench-1";
  run.environment.pgwaitprof_version = version;
  return run;
}

TEST(RunSummaryVersion, IsTakenFromTheReportAndKeptInTheSummary) {
  const auto summary = summarize(run_made_by("0.1.0 (6a6e3daf2c1f)"), "/data/runs/x");
  EXPECT_EQ(summary.pgwaitprof_version, "0.1.0 (6a6e3daf2c1f)");
  const auto stored = to_json(summary);
  EXPECT_EQ(stored.at("pgwaitprof_version"), "0.1.0 (6a6e3daf2c1f)");
  EXPECT_EQ(summary_from_json(stored).pgwaitprof_version, "0.1.0 (6a6e3daf2c1f)");
  EXPECT_EQ(kSummaryVersion, 6);
}

TEST(RunSummaryVersion, ReportsAndSummariesOfOlderVersionsReadWithItUnknown) {
  // A report of schema 13 has no environment.pgwaitprof_version.
  auto report = model::to_json(run_made_by(""));
  report["schema_version"] = 13;
  report["environment"].erase("pgwaitprof_version");
  const auto old_run = model::run_from_json(report);
  EXPECT_EQ(old_run.environment.pgwaitprof_version, "");
  EXPECT_EQ(summarize(old_run, "/data/runs/x").pgwaitprof_version, "");
  // A summary of version 5, as an index or a results database of yesterday holds it.
  auto stored = to_json(summarize(run_made_by("0.1.0 (6a6e3daf2c1f)"), "/data/runs/x"));
  stored.erase("pgwaitprof_version");
  const auto old_summary = summary_from_json(stored);
  EXPECT_EQ(old_summary.pgwaitprof_version, "");
  EXPECT_EQ(old_summary.host, "bench-1");
}

// 12 runs by an unknown pgwaitprof (older summaries), then 12 by 0.1.0, 25 % slower.
std::vector<RunSummary> history_across_an_upgrade() {
  std::vector<RunSummary> runs;
  for (int index = 1; index <= 24; ++index) {
    RunSummary run;
    run.id = fmt::format("run-{:02d}", index);
    run.started_at = fmt::format("2026-12-01T00:{:02d}:00Z", index);
    run.status = "completed";
    run.workload = "tpcb-like";
    run.command = "pgbench -c 2 -T 3";
    run.tps = (index > 12 ? 1500 : 2000) * (1 + 0.01 * std::sin(index * 2.1));
    run.aas = 1.5;
    run.wait_shares = {{"CPU", 0.6}};
    run.pgwaitprof_version = index > 12 ? "0.1.0 (6a6e3daf2c1f)" : "";
    runs.push_back(run);
  }
  return runs;
}

TEST(RunSummaryVersion, AChangePointNamesTheNewPgwaitprofInEveryFormat) {
  const auto changes = find_trend_changes(history_across_an_upgrade());
  ASSERT_TRUE(changes.ok()) << changes.error().message;
  const TrendChange* tps = nullptr;
  for (const auto& change : changes->groups.at(0).changes) {
    if (change.metric == "tps") tps = &change;
  }
  ASSERT_NE(tps, nullptr);
  EXPECT_EQ(tps->run_id, "run-13");
  ASSERT_EQ(tps->changed.size(), 1u);
  EXPECT_EQ(tps->changed[0].name, "pgwaitprof_version");
  EXPECT_EQ(tps->changed[0].before, "unknown");
  EXPECT_EQ(tps->changed[0].after, "0.1.0 (6a6e3daf2c1f)");
  // As each format escapes it (Markdown's "\_", HTML's "&gt;").
  const std::string line = "pgwaitprof_version unknown -> 0.1.0 (6a6e3daf2c1f)";
  const std::map<std::string, std::string> shown = {
      {"text", line},
      {"csv", line},
      {"md", exporters::text_format::markdown_escape(line)},
      {"html", exporters::text_format::html_escape(line)}};
  for (const auto& [format, text] : shown) {
    EXPECT_NE(exporters::render_trend_changes(*changes, format).find(text), std::string::npos)
        << format << ": " << text;
  }
  const auto parsed = json::parse(exporters::render_trend_changes(*changes, "json"));
  bool named = false;
  for (const auto& point : parsed["groups"][0]["change_points"]) {
    for (const auto& changed : point["changed"]) {
      named = named || (changed["name"] == "pgwaitprof_version" && changed["before"] == "unknown" &&
                        changed["after"] == "0.1.0 (6a6e3daf2c1f)");
    }
  }
  EXPECT_TRUE(named) << parsed.dump();
}

}  // namespace
}  // namespace pgwaitprof::store
