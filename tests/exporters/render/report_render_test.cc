// Text and Markdown report renderers against fixed report.json fixtures. Expected numbers are
// recomputed here from the fixture's raw counts, not through the model, so a wrong sum or share
// in either shows up.
#include "exporters/render/report_render.h"

#include <gtest/gtest.h>

#include "tests/exporters/render/report_render_fixture.h"

namespace pgwaitprof::exporters {
namespace {

using namespace render_test;

using RenderText = RenderFixture;

TEST_F(RenderText, HackersTableRowsAreExact) {
  const std::string text = render_text(run_);
  for (const char* name : {"Lock | transactionid", "Client | ClientRead", "LWLock | WALWrite",
                           "IO | WALSync", "CPU"}) {
    ASSERT_TRUE(raw_.by_name.count(name)) << name;
    EXPECT_TRUE(
        has_row(text, expected_row(raw_.by_name.at(name), name, raw_.total, raw_.snapshots)))
        << "missing row for " << name << ":\n"
        << expected_row(raw_.by_name.at(name), name, raw_.total, raw_.snapshots) << "\n"
        << text;
  }
  EXPECT_TRUE(has_line(text, expected_total(raw_.total, raw_.snapshots))) << text;
}

// The error column is the batch-means estimate over the run's intervals, or "-" when the run is
// too short for it; never the binomial formula over snapshots.
TEST_F(RenderText, ErrorsComeFromBatchMeans) {
  const std::string text = render_text(run_);
  const auto window = model::steady_window(run_);
  for (const char* name : {"LWLock | WALWrite", "Client | ClientRead", "CPU"}) {
    const auto estimate = model::estimate_keys(run_, window, false, [&](const model::WaitKey& key) {
      return model::display_name(key) == name;
    });
    const std::string expected = error_text(estimate.aas.standard_error,
                                            estimate.share.reliable && estimate.aas.reliable, 2);
    const std::string prefix =
        expected_row(raw_.by_name.at(name), name, raw_.total, raw_.snapshots);
    EXPECT_TRUE(has_line(text, prefix + fmt::format("{:>6}", expected)))
        << name << " expects " << expected << "\n"
        << text;
  }
  EXPECT_NE(text.find("not the binomial formula"), std::string::npos);
}

// A long run of independent intervals gets numbers in the error column.
TEST(RenderErrors, LongRunsGetErrorsShortRunsADash) {
  auto make_run = [](int intervals) {
    model::Run run;
    run.interval = base::Seconds(1);
    std::mt19937 random(7);
    std::binomial_distribution<int> busy(400, 0.25);
    for (int index = 0; index < intervals; ++index) {
      model::TimelineSlice slice;
      slice.start = base::Seconds(index);
      slice.duration = base::Seconds(1);
      slice.profile.add({"client backend", "active", "LWLock", "WALWrite"},
                        static_cast<uint64_t>(busy(random)));
      slice.profile.add({"client backend", "active", "CPU", "CPU"}, 100);
      slice.profile.add_snapshots(100);
      run.profile.merge(slice.profile);
      run.timeline.push_back(std::move(slice));
    }
    return run;
  };
  const auto long_table = model::summarize(make_run(120)).profile;
  for (const auto& row : long_table.rows) {
    EXPECT_TRUE(row.stat.errors_reliable) << row.label;
    // CPU is 100 samples in every interval: its AAS does not vary, WALWrite's does.
    if (row.label == "CPU") {
      EXPECT_EQ(row.stat.aas_stderr, 0);
      EXPECT_GT(row.stat.share_stderr, 0);
    } else {
      EXPECT_GT(row.stat.aas_stderr, 0) << row.label;
    }
  }
  const auto short_table = model::summarize(make_run(8)).profile;
  for (const auto& row : short_table.rows) {
    EXPECT_EQ(error_text(row.stat.aas_stderr, row.stat.errors_reliable, 2), "-") << row.label;
  }
}

TEST_F(RenderText, RowsAscendWithCpuLabelled) {
  const auto rows = table_rows(render_text(run_));
  ASSERT_EQ(rows.size(), raw_.by_name.size());
  for (size_t index = 1; index < rows.size(); ++index) {
    EXPECT_LE(rows[index - 1].count, rows[index].count) << rows[index].label;
  }
  // The largest is last, next to the total, as in the tables posted to pgsql-hackers.
  const auto largest =
      std::max_element(raw_.by_name.begin(), raw_.by_name.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_EQ(rows.back().label, largest->first);
  EXPECT_TRUE(std::any_of(rows.begin(), rows.end(),
                          [](const TableRow& row) { return row.label == "CPU"; }));
  EXPECT_EQ(render_text(run_).find("CPU | CPU"), std::string::npos);
}

TEST_F(RenderText, IdleSessionsListedApartAndLeftOutOfShares) {
  const std::string text = render_text(run_);
  uint64_t idle_client_read = 0;
  for (const auto& entry : report_.at("profile").at("entries")) {
    if (entry.at("state") == "idle" && entry.at("wait_event") == "ClientRead") {
      idle_client_read += entry.at("count").get<uint64_t>();
    }
  }
  ASSERT_GT(idle_client_read, 0u);
  EXPECT_NE(text.find(fmt::format("idle (not in shares): {} samples", raw_.idle_total)),
            std::string::npos);
  const std::regex idle_row(
      fmt::format(R"(\n +{}  Client \| ClientRead \(client backend\) +{:.2f}\n)", idle_client_read,
                  static_cast<double>(idle_client_read) / static_cast<double>(raw_.snapshots)));
  EXPECT_TRUE(std::regex_search(text, idle_row)) << text;
  // The main table counts only ClientRead of sessions inside a transaction.
  const auto rows = table_rows(text);
  const auto client_read = std::find_if(rows.begin(), rows.end(), [](const TableRow& row) {
    return row.label == "Client | ClientRead";
  });
  ASSERT_NE(client_read, rows.end());
  EXPECT_EQ(client_read->count, raw_.by_name.at("Client | ClientRead"));
  EXPECT_FALSE(std::any_of(rows.begin(), rows.end(),
                           [](const TableRow& row) { return row.label.starts_with("Activity"); }));

  RenderOptions options;
  options.include_idle = true;
  options.top = 0;
  const std::string with_idle = render_text(run_, options);
  const uint64_t all = raw_.total + raw_.idle_total;
  EXPECT_EQ(with_idle.find("idle (not in shares)"), std::string::npos);
  for (const char* name : {"Client | ClientRead", "Activity | AutoVacuumMain", "CPU"}) {
    EXPECT_TRUE(
        has_row(with_idle, expected_row(raw_.all_by_name.at(name), name, all, raw_.snapshots)))
        << name << "\n"
        << with_idle;
  }
  EXPECT_TRUE(has_line(with_idle, expected_total(all, raw_.snapshots)));
}

TEST_F(RenderText, TopNSumsTheRestIntoOther) {
  RenderOptions options;
  options.top = 5;
  const std::string text = render_text(run_, options);
  std::vector<std::pair<uint64_t, std::string>> sorted;
  for (const auto& [name, count] : raw_.by_name) sorted.emplace_back(count, name);
  std::sort(sorted.begin(), sorted.end());
  uint64_t other = 0;
  for (size_t index = 0; index + 5 < sorted.size(); ++index) other += sorted[index].first;

  const auto rows = table_rows(text);
  ASSERT_EQ(rows.size(), 6u);
  const std::string other_label = fmt::format("other ({} wait events)", sorted.size() - 5);
  EXPECT_EQ(rows.front().label, other_label);
  EXPECT_TRUE(has_row(text, expected_row(other, other_label, raw_.total, raw_.snapshots))) << text;
  for (size_t index = sorted.size() - 5; index < sorted.size(); ++index) {
    EXPECT_TRUE(has_row(
        text, expected_row(sorted[index].first, sorted[index].second, raw_.total, raw_.snapshots)))
        << sorted[index].second;
  }
  uint64_t sum = 0;
  for (const auto& row : rows) sum += row.count;
  EXPECT_EQ(sum, raw_.total);
  EXPECT_TRUE(has_line(text, expected_total(raw_.total, raw_.snapshots)));
}

TEST_F(RenderText, ByWaitEventTypeSumsEachClass) {
  RenderOptions options;
  options.by = GroupBy::kWaitEventType;
  const std::string text = render_text(run_, options);
  ASSERT_GE(raw_.by_type.size(), 6u);
  for (const auto& [type, count] : raw_.by_type) {
    EXPECT_TRUE(has_row(text, expected_row(count, type, raw_.total, raw_.snapshots)))
        << type << "\n"
        << text;
  }
  EXPECT_EQ(table_rows(text).size(), raw_.by_type.size());
  EXPECT_NE(text.find("wait events by wait class"), std::string::npos);
}

TEST_F(RenderText, ByQueryIdKeepsTopNAndOther) {
  std::vector<std::pair<uint64_t, int64_t>> ids;
  uint64_t total = 0;
  for (const auto& entry : report_.at("query_ids")) {
    ids.emplace_back(entry.at("count").get<uint64_t>(), entry.at("query_id").get<int64_t>());
    total += ids.back().first;
  }
  ASSERT_EQ(ids.size(), 3u);
  std::sort(ids.begin(), ids.end());

  RenderOptions options;
  options.by = GroupBy::kQueryId;
  options.top = 2;
  const std::string text = render_text(run_, options);
  EXPECT_TRUE(
      has_row(text, expected_row(ids[0].first, "other (1 query id)", total, raw_.snapshots)))
      << text;
  for (size_t index = 1; index < 3; ++index) {
    EXPECT_TRUE(has_row(text, expected_row(ids[index].first, fmt::format("{}", ids[index].second),
                                           total, raw_.snapshots)))
        << text;
  }
  EXPECT_TRUE(has_line(text, expected_total(total, raw_.snapshots)));
  EXPECT_EQ(table_rows(text).size(), 3u);
}

TEST_F(RenderText, HeaderLoadgenTimelineStallsAndEnvironment) {
  const std::string text = render_text(run_);
  EXPECT_TRUE(
      text.starts_with("pgwaitprof run 20240611T142233Z-tpcb-c16 \"master c16 fsync on\"\n"));
  EXPECT_TRUE(has_line(text, "status    completed"));
  EXPECT_TRUE(has_line(text,
                       "command   pgbench -n -M prepared -c 16 -j 8 -T 30 -P 1 -b "
                       "tpcb-like bench"));
  EXPECT_NE(text.find("99.7 Hz achieved"), std::string::npos);
  EXPECT_NE(text.find("9 missed ticks"), std::string::npos);
  EXPECT_EQ(text.find("\n*** "), std::string::npos) << "a completed run has no banner";
  EXPECT_TRUE(has_line(text, "  tps = 7659.733333 (without initial connection time)"));
  EXPECT_TRUE(has_line(text, "  latency stddev = 41.218 ms"));

  // One timeline line per interval, stalled ones marked, NaN latency as "-".
  const auto lines = split_lines(text);
  const std::regex interval(R"(^ +(\d+) +(\d+\.\d|-) +.*$)");
  int intervals = 0;
  bool after_header = false;
  for (const auto& line : lines) {
    if (line.starts_with("     t s ")) {
      after_header = true;
      continue;
    }
    if (after_header && line.empty()) break;
    if (after_header) {
      std::smatch match;
      ASSERT_TRUE(std::regex_match(line, match, interval)) << line;
      ++intervals;
      if (match[1] == "17") {
        EXPECT_NE(line.find("       0.0        -        -     0"), std::string::npos) << line;
        EXPECT_NE(line.find("LWLock | WALWrite"), std::string::npos) << line;
        EXPECT_NE(line.find("av ch  <- stall"), std::string::npos) << line;
      }
    }
  }
  EXPECT_EQ(intervals, static_cast<int>(report_.at("timeline").size()));

  ASSERT_FALSE(run_.stalls.empty());
  EXPECT_TRUE(has_line(text, "  " + run_.stalls.front().summary()));
  EXPECT_NE(run_.stalls.front().summary().find("17-19 s: 0 tps"), std::string::npos);
  EXPECT_TRUE(has_line(text, "  - " + run_.warnings.front()));
  EXPECT_TRUE(has_line(text, "    shared_buffers = 1048576 8kB = 8GB (configuration file)"));
  EXPECT_TRUE(has_line(text, "    checkpoint_timeout = 900 s = 15min (configuration file)"));
  EXPECT_TRUE(has_line(text, "    DateStyle = ISO, MDY (configuration file)"));
  EXPECT_TRUE(has_line(text, "  checksums  on"));
  EXPECT_TRUE(has_line(text, "  cpu        64 x AMD EPYC 7543P 32-Core Processor"));
}

TEST(RenderFailed, TextShowsFailureAndStderrFirst) {
  const model::Run run = load_run("report_failed.json");
  const std::string text = render_text(run);
  EXPECT_TRUE(has_line(text, "*** FAILED: " + run.error + " ***")) << text;
  const size_t stderr_at = text.find("  pgbench: detail: (you might need to run \"pgbench -i\")");
  ASSERT_NE(stderr_at, std::string::npos);
  EXPECT_LT(stderr_at, text.find("wait events:")) << "stderr belongs above the profile";
  EXPECT_TRUE(has_line(text, "load generator summary: none (exit code 1)"));
  EXPECT_TRUE(has_line(text, "exit code  1"));

  model::Run interrupted = run;
  interrupted.status = model::RunStatus::kInterrupted;
  interrupted.error = "interrupted by SIGINT after 12 s";
  EXPECT_TRUE(
      has_line(render_text(interrupted), "*** INTERRUPTED: interrupted by SIGINT after 12 s ***"));
}

TEST(RenderFailed, MarkdownAndHtmlShowFailureAndStderr) {
  const model::Run run = load_run("report_failed.json");
  const std::string markdown = render_markdown(run);
  EXPECT_NE(markdown.find("> **FAILED: load generator \"pgbench\" exited with code 1"),
            std::string::npos);
  EXPECT_NE(markdown.find("```text\npgbench: error: could not count number of branches"),
            std::string::npos);
  const std::string html = render_html(run);
  EXPECT_NE(html.find("<div class=\"banner failed\">FAILED: load generator &quot;pgbench&quot;"),
            std::string::npos);
  EXPECT_NE(html.find("relation &quot;pgbench_branches&quot; does not exist\npgbench: detail"),
            std::string::npos);
}

using RenderMarkdown = RenderFixture;

TEST_F(RenderMarkdown, TableRowsEscapePipes) {
  const std::string markdown = render_markdown(run_);
  const uint64_t count = raw_.by_name.at("Lock | transactionid");
  const double p = static_cast<double>(count) / static_cast<double>(raw_.total);
  const std::string row =
      fmt::format("| {} | Lock \\| transactionid | {:.1f}% | {:.2f} | ", count, 100 * p,
                  static_cast<double>(count) / static_cast<double>(raw_.snapshots));
  const auto lines = split_lines(markdown);
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(),
                          [&](const std::string& line) { return line.starts_with(row); }))
      << row << "\n"
      << markdown;
  EXPECT_TRUE(has_line(markdown, "| count | wait event | share | AAS | ± err |"));
  EXPECT_TRUE(has_line(markdown, "|---:|:---|---:|---:|---:|"));
  EXPECT_NE(markdown.find("## Timeline"), std::string::npos);
  EXPECT_NE(markdown.find("| `shared_buffers` | `1048576` | 8kB | 8GB | configuration file |"),
            std::string::npos);
  // Every table row has as many cells as its header.
  for (const auto& line : split_lines(markdown)) {
    if (!line.starts_with("| 17 |")) continue;
    EXPECT_NE(line.find("| LWLock \\| WALWrite |"), std::string::npos) << line;
    EXPECT_NE(line.find("**stall**"), std::string::npos) << line;
  }
}

TEST(RenderLegend, MarkdownAndHtmlSayWhatTheEventsMean) {
  const model::Run run = model::run_from_json(load_json("report_v1.json"));
  const std::string markdown = render_markdown(run);
  EXPECT_NE(markdown.find("What the events above mean"), std::string::npos);
  EXPECT_NE(
      markdown.find("- **LWLock \\| WALWrite**: A process waits for the lock that serializes"),
      std::string::npos)
      << markdown;
  const std::string html = render_html(run);
  EXPECT_NE(html.find("<td class=\"meaning\">A process waits for the lock that serializes"),
            std::string::npos);
  // A server's own description (PostgreSQL 17's pg_wait_events) wins over ours.
  model::Run described = run;
  described.environment.wait_event_descriptions["LWLock | WALWrite"] = "Server text.";
  EXPECT_NE(render_markdown(described).find("- **LWLock \\| WALWrite**: Server text."),
            std::string::npos);
}

// A run whose server shared the host: 1000 snapshots over 4 s with 3 client backends active
// without a wait event on average and 1 in LWLock; the kernel measured, each second, client
// backends `client_on_cpu_s` on a CPU and `client_runqueue_s` on the run queue, background
// processes 0.2 s on a CPU.
model::Run kernel_run(double client_on_cpu_s, double client_runqueue_s = 2.0) {
  model::Run run;
  run.profile.add({"client backend", "active", model::kCpu, ""}, 3000);
  run.profile.add({"client backend", "active", "LWLock", "WALWrite"}, 1000);
  run.profile.add_snapshots(1000);
  run.interval = base::Seconds(1);
  run.duration = base::Seconds(4);
  for (int second = 0; second < 4; ++second) {
    model::TimelineSlice slice;
    slice.start = base::Seconds(second);
    slice.duration = base::Seconds(1);
    slice.kernel[model::kClientBackends] = {base::Seconds(client_on_cpu_s),
                                            base::Seconds(client_runqueue_s), base::Seconds(1.0)};
    slice.kernel[model::kBackgroundProcesses] = {base::Seconds(0.2), base::Seconds(0.0),
                                                 base::Seconds(1.0)};
    run.timeline.push_back(slice);
  }
  return run;
}

// The kernel's own figures stand beside the sampled CPU row: 1.5 + 0.2 s on a CPU and 2.0 s
// queued a second are 1.7 and 2.0 AAS, whatever the sampler counted (3.0 AAS here).
TEST(RenderKernelSplit, TheCpuRowShowsTheKernelsFiguresBesideItInEveryFormat) {
  const model::Run run = kernel_run(1.5);
  const auto table = model::summarize(run).profile;
  const auto cpu = std::find_if(table.rows.begin(), table.rows.end(),
                                [](const auto& row) { return row.label == "CPU"; });
  ASSERT_NE(cpu, table.rows.end());
  const auto& split = cpu->cpu_split;
  ASSERT_TRUE(split);
  EXPECT_NEAR(split->on_cpu_aas, 1.7, 1e-9);
  EXPECT_NEAR(split->runqueue_aas, 2.0, 1e-9);
  // In the table's share units: the CPU row's 3.0 AAS is 75 %.
  EXPECT_NEAR(split->on_cpu_share, 0.75 * 1.7 / 3.0, 1e-9);
  EXPECT_NEAR(split->runqueue_share, 0.75 * 2.0 / 3.0, 1e-9);
  // Only the CPU row has them.
  for (const auto& row : table.rows) {
    if (row.label != "CPU") {
      EXPECT_FALSE(row.cpu_split) << row.label;
    }
  }

  const std::string text = render_text(run);
  const auto cpu_line = text.find("CPU ");
  const auto on_line = text.find("kernel: on a CPU");
  const auto queue_line = text.find("kernel: waiting for a CPU");
  ASSERT_NE(on_line, std::string::npos) << text;
  ASSERT_NE(queue_line, std::string::npos) << text;
  EXPECT_LT(cpu_line, on_line);
  EXPECT_LT(on_line, queue_line);
  EXPECT_NE(text.find("42.5%     1.70", on_line), std::string::npos) << text;
  EXPECT_NE(text.find("50.0%     2.00", queue_line), std::string::npos) << text;
  EXPECT_NE(
      render_markdown(run).find("|  | &nbsp;&nbsp;kernel: waiting for a CPU | 50.0% | 2.00 |  |"),
      std::string::npos)
      << render_markdown(run);
  EXPECT_NE(render_html(run).find("<td class=\"sub\">kernel: on a CPU</td><td "
                                  "class=\"n\">42.5%</td><td class=\"n\">1.70</td>"),
            std::string::npos);
  const json waits = json::parse(render_json(run)).at("summary").at("waits");
  const auto entry = std::find_if(waits.begin(), waits.end(),
                                  [](const json& wait) { return wait.at("wait") == "CPU"; });
  ASSERT_NE(entry, waits.end());
  EXPECT_NEAR(entry->at("kernel_split").at("runqueue_aas").get<double>(), 2.0, 1e-9);
}

TEST(RenderKernelSplit, NoRunQueueShowsNoneAndNoKernelTimesNoFigures) {
  const model::Run idle_cores = kernel_run(1.5, 0.0);
  const auto table = model::summarize(idle_cores).profile;
  const auto cpu = std::find_if(table.rows.begin(), table.rows.end(),
                                [](const auto& row) { return row.label == "CPU"; });
  ASSERT_NE(cpu, table.rows.end());
  const auto& split = cpu->cpu_split;
  ASSERT_TRUE(split);
  EXPECT_NEAR(split->on_cpu_aas, 1.7, 1e-9);
  EXPECT_DOUBLE_EQ(split->runqueue_aas, 0);
  EXPECT_DOUBLE_EQ(split->runqueue_share, 0);
  model::Run remote = kernel_run(1.5);
  for (auto& slice : remote.timeline) slice.kernel.clear();
  EXPECT_EQ(render_text(remote).find("kernel: on a CPU"), std::string::npos);
  EXPECT_EQ(render_html(remote).find("waiting for a CPU"), std::string::npos);
}

TEST_F(RenderText, RunToRunSectionInEveryFormat) {
  EXPECT_EQ(render_text(run_).find("run to run"), std::string::npos);  // no history: no section
  auto run = run_;
  run.run_to_run = model::RunToRun{
      8, 3, {{"tps", 4012.5, 301.2, 801.4}, {"IO | WALSync", 0.3012, 0.0153, 0.0407}}};
  const std::string text = render_text(run);
  EXPECT_NE(text.find("run to run: from 8 earlier comparable runs"), std::string::npos) << text;
  EXPECT_NE(text.find("t(7) x sqrt(2)"), std::string::npos) << text;
  EXPECT_TRUE(
      has_line(text, "  steady-state tps         4012.5  ± 801.4 (20.0 %)            301.2"))
      << text;
  EXPECT_TRUE(
      has_line(text, "  share of IO | WALSync     30.1%      ± 4.1 points       1.5 points"))
      << text;
  const std::string markdown = render_markdown(run);
  EXPECT_NE(markdown.find("## Run to run: from 8 earlier comparable runs"), std::string::npos);
  EXPECT_NE(markdown.find("| share of IO \\| WALSync | 30.1% | ± 4.1 points | 1.5 points |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(render_html(run).find("<td class=\"n\">± 801.4 (20.0 %)</td>"), std::string::npos);

  run.run_to_run = model::RunToRun{1, 3, {}};
  const std::string none = render_text(run);
  EXPECT_NE(none.find("run to run: not estimated"), std::string::npos) << none;
  EXPECT_NE(none.find("1 earlier comparable run in this data directory"), std::string::npos);
  EXPECT_NE(render_markdown(run).find("3 needed: the errors above are within-run"),
            std::string::npos);
  const std::string html = render_html(run);
  EXPECT_NE(html.find("Run to run: not estimated"), std::string::npos);
}

// The server's tps beside the load generator's (issue 26): a column in text, Markdown and the
// timeline CSV, a line in the HTML chart, and the report's "tps from"; none of it when the tps
// is the server's already, or for reports written before it existed.
TEST_F(RenderText, ServerTpsBesideTheLoadGeneratorsOwnAndWhereTpsCameFrom) {
  const auto before = render_text(run_);
  EXPECT_EQ(before.find("srv tps"), std::string::npos);
  EXPECT_EQ(before.find("tps from"), std::string::npos);
  run_.throughput_source = "sysbench";
  for (auto& slice : run_.timeline) {
    slice.server_tps = 1234.5;
    if (slice.loadgen) slice.loadgen->qps = 20000;
  }
  const auto text = render_text(run_);
  EXPECT_NE(text.find("srv tps"), std::string::npos) << text;
  EXPECT_NE(text.find("   1234.5 "), std::string::npos) << text;
  EXPECT_NE(text.find("tps from  sysbench's reports"), std::string::npos) << text;
  EXPECT_NE(render_markdown(run_).find("| srv tps | qps |"), std::string::npos);
  const auto csv = render_timeline_csv(run_);
  EXPECT_NE(csv.find(",server_tps,qps,latency_percentile_ms\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1234.5,20000.0,\n"), std::string::npos) << csv;
  const auto html = render_html(run_);
  EXPECT_NE(html.find("server tps"), std::string::npos);
  // The HTML page's timeline table has the same columns as the text report's.
  EXPECT_NE(html.find("<th class=\"n\">srv tps</th><th class=\"n\">qps</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"n\">1234.5</td><td class=\"n\">20000.0</td>"),
            std::string::npos);

  run_.throughput_source = "server";
  for (auto& slice : run_.timeline) {
    if (slice.loadgen) slice.loadgen->qps.reset();
  }
  const auto server = render_text(run_);
  EXPECT_EQ(server.find("srv tps"), std::string::npos) << server;
  EXPECT_NE(server.find("tps from  the server: pg_stat_database"), std::string::npos) << server;
  const auto server_html = render_html(run_);
  EXPECT_EQ(server_html.find("server tps"), std::string::npos);
  EXPECT_EQ(server_html.find("srv tps"), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::exporters
