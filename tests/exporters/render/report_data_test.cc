// The machine-readable outputs of a run against the fixture report.json: profile.csv and
// timeline.csv, folded stacks, report.json (round trip, old versions, the summary), and every
// format on a run that sampled nothing.
#include <gtest/gtest.h>

#include "exporters/render/report_render.h"
#include "tests/exporters/render/report_render_fixture.h"

namespace pgwaitprof::exporters {
namespace {

using namespace render_test;

using RenderCsv = RenderFixture;

TEST_F(RenderCsv, ProfileHasEveryKeyAndCountsSumToTotal) {
  const auto rows = parse_csv(render_profile_csv(run_));
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front(),
            (std::vector<std::string>{"backend_type", "state", "wait_event_type", "wait_event",
                                      "count", "share", "aas", "aas_stderr"}));
  // All wait keys, even with top = 20: profile.csv is data, not a table to read.
  ASSERT_EQ(rows.size() - 1, raw_.full_keys);
  uint64_t sum = 0;
  double share_sum = 0;
  for (size_t index = 1; index < rows.size(); ++index) {
    ASSERT_EQ(rows[index].size(), 8u);
    sum += std::stoull(rows[index][4]);
    share_sum += std::stod(rows[index][5]);
    EXPECT_NE(rows[index][1], "idle");
  }
  EXPECT_EQ(sum, raw_.total);
  EXPECT_NEAR(share_sum, 1.0, 1e-4);
}

TEST_F(RenderCsv, ProfileGroupsAndQuotes) {
  RenderOptions options;
  options.by = GroupBy::kWaitEventType;
  const auto by_type = parse_csv(render_profile_csv(run_, options));
  EXPECT_EQ(by_type.front(),
            (std::vector<std::string>{"wait_event_type", "count", "share", "aas", "aas_stderr"}));
  ASSERT_EQ(by_type.size() - 1, raw_.by_type.size());
  for (size_t index = 1; index < by_type.size(); ++index) {
    EXPECT_EQ(std::stoull(by_type[index][1]), raw_.by_type.at(by_type[index][0]));
  }

  options.by = GroupBy::kQueryId;
  options.top = 1;
  const auto by_query = parse_csv(render_profile_csv(run_, options));
  ASSERT_EQ(by_query.size(), 3u);  // header, other, the largest
  EXPECT_EQ(by_query[1][0], "other");

  model::Run odd = run_;
  odd.profile.add({"client backend", "active", "Extension", "my,ext \"v2\""}, 7);
  const std::string csv = render_profile_csv(odd);
  EXPECT_NE(csv.find("client backend,active,Extension,\"my,ext \"\"v2\"\"\",7,"),
            std::string::npos);
  bool found = false;
  for (const auto& row : parse_csv(csv)) found |= row.size() == 8 && row[3] == "my,ext \"v2\"";
  EXPECT_TRUE(found);
}

TEST_F(RenderCsv, TimelineHasOneRowPerIntervalAndEmptyNanLatency) {
  const auto rows = parse_csv(render_timeline_csv(run_));
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front(), (std::vector<std::string>{"start_s",
                                                    "duration_s",
                                                    "tps",
                                                    "latency_avg_ms",
                                                    "latency_stddev_ms",
                                                    "failed",
                                                    "snapshots",
                                                    "aas_cpu",
                                                    "aas_lwlock",
                                                    "aas_lock",
                                                    "aas_io",
                                                    "aas_ipc",
                                                    "aas_client",
                                                    "aas_other",
                                                    "dominant_wait",
                                                    "cpu_user_pct",
                                                    "cpu_system_pct",
                                                    "cpu_iowait_pct",
                                                    "cpu_idle_pct",
                                                    "loadgen_cores",
                                                    "background",
                                                    "sampler_outage",
                                                    "latency_p99_ms",
                                                    "latency_max_ms",
                                                    "oncpu_aas",
                                                    "runq_aas"}));
  const auto& timeline = report_.at("timeline");
  ASSERT_EQ(rows.size() - 1, timeline.size());
  for (size_t index = 0; index < timeline.size(); ++index) {
    const auto& row = rows[index + 1];
    const auto& slice = timeline[index];
    ASSERT_EQ(row.size(), 26u);
    EXPECT_EQ(row[21], "0");
    EXPECT_EQ(std::stod(row[0]), slice.at("start_s").get<double>());
    EXPECT_EQ(std::stoull(row[6]), slice.at("profile").at("snapshots").get<uint64_t>());
    if (slice.at("loadgen").at("latency_avg_ms").is_null()) {
      EXPECT_EQ(row[3], "") << "NaN latency is an empty field";
      EXPECT_EQ(row[4], "");
      EXPECT_EQ(row[2], "0.0");
    } else {
      EXPECT_NEAR(std::stod(row[3]), slice.at("loadgen").at("latency_avg_ms").get<double>(),
                  0.0005);
    }
    // The AAS columns add up to the interval's non-idle samples per snapshot.
    uint64_t non_idle = 0;
    for (const auto& entry : slice.at("profile").at("entries")) {
      if (!raw_is_idle(entry)) non_idle += entry.at("count").get<uint64_t>();
    }
    double aas_sum = 0;
    for (size_t column = 7; column <= 13; ++column) aas_sum += std::stod(row[column]);
    EXPECT_NEAR(aas_sum,
                static_cast<double>(non_idle) / slice.at("profile").at("snapshots").get<double>(),
                0.004);
  }
  EXPECT_EQ(rows[18][20], "av ch");
}

using RenderFolded = RenderFixture;

TEST_F(RenderFolded, LinesParseAsStackCountAndSumToNonIdleTotal) {
  const std::string folded = render_folded(run_);
  const auto lines = split_lines(folded);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(std::is_sorted(lines.begin(), lines.end()));
  // flamegraph.pl's own pattern: everything up to the last space is the stack.
  const std::regex pattern(R"(^(.+) (\d+)$)");
  uint64_t sum = 0;
  for (const auto& line : lines) {
    std::smatch match;
    ASSERT_TRUE(std::regex_match(line, match, pattern)) << line;
    const std::string stack = match[1];
    const auto frames = std::count(stack.begin(), stack.end(), ';') + 1;
    EXPECT_TRUE(frames == 2 || frames == 3) << line;
    EXPECT_EQ(stack.find(";Activity;"), std::string::npos) << "idle in: " << line;
    sum += std::stoull(match[2]);
  }
  EXPECT_EQ(sum, raw_.total);
  // CPU is one frame under its process type, summed over states.
  uint64_t client_cpu = 0;
  for (const auto& entry : report_.at("profile").at("entries")) {
    if (entry.at("backend_type") == "client backend" && entry.at("wait_event_type") == "CPU") {
      client_cpu += entry.at("count").get<uint64_t>();
    }
  }
  EXPECT_NE(folded.find(fmt::format("\nclient backend;CPU {}\n", client_cpu)), std::string::npos);

  RenderOptions options;
  options.include_idle = true;
  uint64_t all = 0;
  for (const auto& line : split_lines(render_folded(run_, options))) {
    all += std::stoull(line.substr(line.rfind(' ') + 1));
  }
  EXPECT_EQ(all, raw_.total + raw_.idle_total);

  model::Run odd = run_;
  odd.profile.add({"client backend", "active", "Extension", "a;b"}, 3);
  EXPECT_NE(render_folded(odd).find("client backend;Extension;a_b 3\n"), std::string::npos);
}

TEST(RenderEmpty, EveryFormatCopesWithARunThatSampledNothing) {
  model::Run run;
  run.id = "empty";
  run.status = model::RunStatus::kInterrupted;
  run.error = "interrupted by SIGTERM before the first snapshot";
  const std::string text = render_text(run);
  EXPECT_TRUE(
      has_line(text, "*** INTERRUPTED: interrupted by SIGTERM before the first snapshot ***"));
  EXPECT_NE(text.find("wait events: 0 samples in 0 snapshots"), std::string::npos);
  EXPECT_EQ(parse_csv(render_profile_csv(run)).size(), 1u);
  EXPECT_EQ(parse_csv(render_timeline_csv(run)).size(), 1u);
  EXPECT_EQ(render_folded(run), "");
  const std::string html = render_html(run);
  EXPECT_NE(html.find("<div class=\"banner interrupted\">INTERRUPTED: "), std::string::npos);
  EXPECT_NE(html.find("No samples."), std::string::npos);
  EXPECT_NE(render_markdown(run).find("> **INTERRUPTED: "), std::string::npos);
}

// A version-1 report (before outages) still loads; rendering it writes the current version, with
// the new fields at their defaults and everything else as it was.
json as_current_version(json report) {
  report["schema_version"] = model::kReportSchemaVersion;
  report["outages"] = json::array();
  report["latency"] = nullptr;
  report["latency_sampling_rate"] = 1.0;
  report["environment"]["wait_event_descriptions"] = json::object();
  report["environment"]["pgwaitprof_version"] = "";  // 13: unknown before
  report["statements"] = json::array();
  report["statements_note"] = "";
  report["lock_blockers"] = json::array();
  report["lock_lookups"] = 0;
  report["kernel"] = json::object();
  report["tags"] = json::object();
  report["sampler"]["requested_source"] = report["sampler"]["source"];
  report["sampler"]["source_reason"] = "";
  report["sampler"]["trace"] = nullptr;  // 11: the traced source's counts
  for (auto& stall : report["stalls"]) {
    stall["max_latency_ms"] = nullptr;
    stall["steady_tps"] = 0.0;  // 9: before it, stalls said the median they fell from
    stall["blocker"] = "";
  }
  for (auto& slice : report["timeline"]) {
    slice["sampler_outage"] = false;
    slice["latency"] = nullptr;
    slice["kernel"] = json::object();
    slice["lock_blocker"] = "";
  }
  return report;
}

TEST(RenderJson, RoundTripsThroughTheModel) {
  const json fixture = load_json("report_v1.json");
  ASSERT_EQ(fixture.at("schema_version"), 1);
  const model::Run run = model::run_from_json(fixture);
  const std::string rendered = render_json(run);
  EXPECT_NE(rendered.find("\n  \"schema_version\": 15,"), std::string::npos) << "dump(2)";
  json parsed = json::parse(rendered);
  // The derived summary: the report's figures with their errors (checked in RenderJsonSummary).
  ASSERT_TRUE(parsed.contains("summary"));
  parsed.erase("summary");
  EXPECT_EQ(parsed, as_current_version(fixture));
  EXPECT_EQ(model::to_json(model::run_from_json(parsed)), parsed);
  // NaN latency is stored as null, not dropped.
  EXPECT_TRUE(parsed.at("timeline").at(17).at("loadgen").at("latency_avg_ms").is_null());

  const json failed = load_json("report_failed.json");
  json failed_rendered = json::parse(render_json(model::run_from_json(failed)));
  failed_rendered.erase("summary");
  EXPECT_EQ(failed_rendered, as_current_version(failed));
}

TEST(RenderJsonSummary, StatesTheFiguresWithTheirErrors) {
  const model::Run run = model::run_from_json(load_json("report_v1.json"));
  const json summary = json::parse(render_json(run)).at("summary");
  const auto tps = model::tps_estimate(run, model::steady_window(run));
  ASSERT_TRUE(tps);
  EXPECT_DOUBLE_EQ(summary.at("tps").at("mean").get<double>(), tps->mean);
  EXPECT_EQ(summary.at("tps").at("reliable").get<bool>(), tps->reliable);
  EXPECT_NE(summary.at("error_method").get<std::string>().find("batch means"), std::string::npos);
  const auto table = model::summarize(run).profile;
  ASSERT_EQ(summary.at("waits").size(), table.rows.size());
  EXPECT_EQ(summary.at("waits").back().at("wait"), table.rows.back().label);
  EXPECT_EQ(summary.at("waits").back().at("count"), table.rows.back().stat.count);
}

}  // namespace
}  // namespace pgwaitprof::exporters
