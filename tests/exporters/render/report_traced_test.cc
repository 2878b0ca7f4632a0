// The traced source's figures in every format a person or a spreadsheet reads (issue 48 item 2):
// a run whose profile carries exact time, waits and durations renders the same waits, time and
// percentiles in text, Markdown, profile.csv and HTML, the HTML page draws each top wait's
// duration histogram bucket by bucket, idle time is in seconds, and a hostile wait name stays
// escaped everywhere.
#include "exporters/render/report_traced.h"

#include <gtest/gtest.h>

#include <regex>

#include "exporters/render/report_render.h"
#include "model/traced_time.h"
#include "tests/exporters/render/escaping_fixture.h"
#include "tests/exporters/render/report_render_fixture.h"

namespace pgwaitprof::exporters {
namespace {

using render_test::load_run;
using render_test::parse_csv;

// Bucket of `seconds`, as the BPF programs file it (trace_shared.h), found from the model's
// bounds.
int bucket_of(double seconds) {
  for (int index = 0; index < model::kTracedBuckets; ++index) {
    if (seconds < model::traced_bucket_upper_s(index)) return index;
  }
  return model::kTracedBuckets - 1;
}

// `count` waits of `seconds` each.
model::TracedTime waits_of(uint64_t count, double seconds) {
  model::TracedTime time;
  time.blocked_s = static_cast<double>(count) * seconds;
  time.ended_blocked_s = time.blocked_s;
  time.waits = count;
  time.min_s = seconds;
  time.max_s = seconds;
  time.histogram[bucket_of(seconds)] = count;
  return time;
}

// The fixture run with its sampled profile replaced by a traced one over 10 s: 2.0 s of
// ClientRead in 4,000 waits (500 us each), 0.5 s of WALWrite in 100 waits (5 ms each, and 0.1 s
// on the run queue after them), 3 s of CPU, and 8 s of an idle session's ClientRead.
model::Run traced_run(const std::string& wait_event = "WALWrite") {
  model::Run run = load_run("report_v1.json");
  run.profile = model::Profile{};
  run.profile.add_snapshots(10'000'000);
  const auto add = [&](model::WaitKey key, const model::TracedTime& time) {
    run.profile.add(key, static_cast<uint64_t>(std::llround(time.time_s() * 1e6)));
    run.profile.add_traced(key, time);
  };
  add({"client backend", "active", "Client", "ClientRead"}, waits_of(4000, 500e-6));
  auto wal = waits_of(100, 5e-3);
  wal.runqueue_s = 0.1;
  add({"client backend", "active", "LWLock", wait_event}, wal);
  model::TracedTime cpu;
  cpu.on_cpu_s = 3.0;
  add({"client backend", "active", "CPU", ""}, cpu);
  add({"client backend", "idle", "Client", "ClientRead"}, waits_of(16, 0.5));
  return run;
}

TEST(ReportTraced, TextAndMarkdownShowExactTimeWaitsAndDurations) {
  const model::Run run = traced_run();
  const std::string text = render_text(run);
  // waits, time s, label, share, AAS, mean, p50, p99, max, run queue.
  EXPECT_TRUE(std::regex_search(
      text, std::regex(R"(\n +100 +0\.600 +LWLock \| WALWrite +10\.7% +0\.06 +5\.00ms +5\.\d\dms +)"
                       R"(5\.\d\dms +5\.00ms +0\.100\n)")))
      << text;
  EXPECT_TRUE(std::regex_search(
      text, std::regex(R"(\n +4000 +2\.000 +Client \| ClientRead +35\.7% +0\.20 +500us +)")))
      << text;
  EXPECT_NE(text.find("idle (not in shares): 8.000 s, 0.80 sessions on average"), std::string::npos)
      << text;
  const std::string markdown = render_markdown(run);
  EXPECT_NE(markdown.find("| 100 | 0.600 | LWLock \\| WALWrite | 10.7% | 0.06 | 5.00ms |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| waits | time s |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("8.000 s, 0.80 sessions on average"), std::string::npos) << markdown;
}

TEST(ReportTraced, ProfileCsvCarriesTheTracedColumns) {
  const auto rows = parse_csv(render_profile_csv(traced_run()));
  ASSERT_GE(rows.size(), 4u);
  const auto& header = rows.front();
  const auto column = [&](const std::string& name) {
    const auto found = std::find(header.begin(), header.end(), name);
    EXPECT_NE(found, header.end()) << name;
    return static_cast<size_t>(found - header.begin());
  };
  bool seen = false;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), header.size());
    if (row[column("wait_event")] != "WALWrite") continue;
    seen = true;
    EXPECT_EQ(row[column("waits")], "100");
    EXPECT_NEAR(std::stod(row[column("time_s")]), 0.6, 1e-9);
    EXPECT_NEAR(std::stod(row[column("blocked_s")]), 0.5, 1e-9);
    EXPECT_NEAR(std::stod(row[column("runqueue_s")]), 0.1, 1e-9);
    EXPECT_NEAR(std::stod(row[column("mean_s")]), 5e-3, 1e-9);
    EXPECT_NEAR(std::stod(row[column("max_s")]), 5e-3, 1e-9);
    EXPECT_NEAR(std::stod(row[column("p99_s")]), 5e-3, 5e-3 / 4);
  }
  EXPECT_TRUE(seen);
  // A sampled run keeps its columns.
  const auto sampled = parse_csv(render_profile_csv(load_run("report_v1.json")));
  EXPECT_EQ(std::find(sampled.front().begin(), sampled.front().end(), "waits"),
            sampled.front().end());
}

TEST(ReportTraced, HtmlDrawsEachTopWaitsDurationsBucketByBucket) {
  model::Run run = traced_run();
  // A second bucket for ClientRead: 10 waits of 40 ms.
  const model::WaitKey client{"client backend", "active", "Client", "ClientRead"};
  const auto slow = waits_of(10, 40e-3);
  run.profile.add(client, 400'000);
  run.profile.add_traced(client, slow);
  const std::string html = render_html(run);
  EXPECT_NE(html.find("<h2>Wait durations</h2>"), std::string::npos);
  EXPECT_NE(html.find("<th class=\"n\">waits</th><th class=\"n\">time s</th>"), std::string::npos);
  // One bar per bucket that holds waits, with its count in its tooltip; CPU has no waits.
  EXPECT_NE(html.find("aria-label=\"wait durations of Client | ClientRead\""), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"wait durations of LWLock | WALWrite\""), std::string::npos);
  EXPECT_EQ(html.find("aria-label=\"wait durations of CPU\""), std::string::npos);
  EXPECT_NE(html.find(": 4000 waits</title></rect>"), std::string::npos) << html;
  EXPECT_NE(html.find(": 10 waits</title></rect>"), std::string::npos);
  EXPECT_NE(html.find(": 100 waits</title></rect>"), std::string::npos);
  size_t bars = 0;
  for (size_t at = html.find("waits</title></rect>"); at != std::string::npos;
       at = html.find("waits</title></rect>", at + 1)) {
    ++bars;
  }
  EXPECT_EQ(bars, 3u) << "ClientRead 2 buckets, WALWrite 1, the idle ClientRead none";
  // The sampled fixture draws none.
  EXPECT_EQ(render_html(load_run("report_v1.json")).find("Wait durations"), std::string::npos);
}

// Every failed read, full map and lost charge is reported with the switches a second (schema 11).
TEST(ReportTraced, TheSamplerLineStatesWhatTheTracedSourceSawAndLost) {
  model::Run run = traced_run();
  run.sampler.source = model::SamplerSource::kTrace;
  run.sampler.requested = model::SamplerSource::kTrace;
  run.sampler.hz = 1000;
  run.sampler.snapshots = 10'000'000;
  run.sampler.trace = model::TraceCounts{123'000, 40'000, 20'000, 3, 0, 5, 0, 12, 527.4, {}};
  const std::string text = render_text(run);
  EXPECT_NE(text.find("10.0 s traced, 12300 switches a second (527 ns each in the kernel), 12 "
                      "processes tracked, 3 failed reads of a process's memory (charged to "
                      "nobody), 5 keys charged with query id 0 (keys' map full)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("forks not followed"), std::string::npos) << "nothing to say: not said";
  const auto json = nlohmann::json::parse(render_json(run));
  EXPECT_EQ(json.at("sampler").at("trace").at("failed_reads"), 3);
  EXPECT_EQ(model::run_from_json(json).sampler.trace->keys_full, 5u);
}

TEST(ReportTraced, AHostileWaitNameIsEscapedInEveryFormat) {
  const model::Run run = traced_run(escaping_test::kHostile);
  const std::string text = render_text(run);
  EXPECT_EQ(escaping_test::terminal_hazard(text), "") << text;
  const std::string markdown = render_markdown(run);
  EXPECT_EQ(escaping_test::markdown_hazard(markdown), "") << markdown;
  const std::string csv = render_profile_csv(run);
  EXPECT_EQ(escaping_test::terminal_hazard(csv), "");
  for (const auto& row : parse_csv(csv)) EXPECT_EQ(row.size(), parse_csv(csv).front().size());
  const std::string html = render_html(run);
  EXPECT_EQ(html.find("<body id=\"pwned\">"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"wait durations of LWLock | &lt;body"), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::exporters
