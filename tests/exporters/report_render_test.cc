// Report renderers against fixed report.json fixtures. Expected numbers are recomputed here from
// the fixture's raw counts, not through the model, so a wrong sum or share in either shows up.
#include "exporters/report_render.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/model/run.h"
#include "exporters/html_assets.h"
#include "exporters/report_common.h"
#include "exporters/report_sections.h"
#include "exporters/text_format.h"
#include "tests/exporters/fixtures.h"

namespace pgwaitprof::exporters {
namespace {

using report_detail::error_text;

using nlohmann::json;

json load_json(const std::string& name) {
  std::ifstream file(std::string(PGWAITPROF_FIXTURES) + "/" + name);
  EXPECT_TRUE(file) << "missing fixture " << name;
  return json::parse(file);
}

model::Run load_run(const std::string& name) { return model::run_from_json(load_json(name)); }

// The fixture's own view of idleness and naming, written out again rather than borrowed.
bool raw_is_idle(const json& entry) {
  const auto state = entry.at("state").get<std::string>();
  return state == "idle" ||
         (state == "background" && (entry.at("wait_event_type").get<std::string>() == "Activity" ||
                                    entry.at("wait_event_type").get<std::string>() == "Extension" ||
                                    entry.at("wait_event_type").get<std::string>() == "Timeout"));
}

std::string raw_name(const json& entry) {
  const auto type = entry.at("wait_event_type").get<std::string>();
  return type == "CPU" ? "CPU" : type + " | " + entry.at("wait_event").get<std::string>();
}

struct RawProfile {
  std::map<std::string, uint64_t> by_name;      // non-idle, merged over backend types and states
  std::map<std::string, uint64_t> by_type;      // non-idle
  std::map<std::string, uint64_t> all_by_name;  // idle included
  uint64_t total = 0;                           // non-idle
  uint64_t idle_total = 0;
  uint64_t full_keys = 0;  // non-idle (backend_type, state, type, event) entries
  uint64_t snapshots = 0;
};

RawProfile raw_profile(const json& report) {
  RawProfile raw;
  raw.snapshots = report.at("profile").at("snapshots").get<uint64_t>();
  for (const auto& entry : report.at("profile").at("entries")) {
    const auto count = entry.at("count").get<uint64_t>();
    raw.all_by_name[raw_name(entry)] += count;
    if (raw_is_idle(entry)) {
      raw.idle_total += count;
      continue;
    }
    raw.by_name[raw_name(entry)] += count;
    raw.by_type[entry.at("wait_event_type").get<std::string>()] += count;
    raw.total += count;
    ++raw.full_keys;
  }
  return raw;
}

// One row of the hackers' table without its error column: count, name, share, AAS. The error
// (batch means over the timeline) is checked apart, in ErrorsComeFromBatchMeans.
std::string expected_row(uint64_t count, const std::string& name, uint64_t total,
                         uint64_t snapshots) {
  const double p = static_cast<double>(count) / static_cast<double>(total);
  const double aas = static_cast<double>(count) / static_cast<double>(snapshots);
  return fmt::format("  {:>9}  {:<32}  {:>6}  {:>7.2f}  ", count, name,
                     fmt::format("{:.1f}%", 100 * p), aas);
}

std::string expected_total(uint64_t total, uint64_t snapshots) {
  return fmt::format("  {:>9}  {:<32}  {:>6}  {:>7.2f}", total, "total", "100.0%",
                     static_cast<double>(total) / static_cast<double>(snapshots));
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::string& text, const std::string& line) {
  const auto lines = split_lines(text);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// A profile row: `prefix` (expected_row) then its error column, a number or "-".
bool has_row(const std::string& text, const std::string& prefix) {
  static const std::regex error_column(R"( *(\d+\.\d+|-))");
  for (const auto& line : split_lines(text)) {
    if (line.starts_with(prefix) && std::regex_match(line.substr(prefix.size()), error_column)) {
      return true;
    }
  }
  return false;
}

// The rows of the first profile table: from the line after its header to the dashed rule.
struct TableRow {
  uint64_t count;
  std::string label;
};
std::vector<TableRow> table_rows(const std::string& text) {
  const auto lines = split_lines(text);
  std::vector<TableRow> rows;
  bool inside = false;
  static const std::regex row_pattern(R"(^ +(\d+)  (.+?) +\d+\.\d%.*$)");
  for (const auto& line : lines) {
    if (!inside) {
      inside = line.starts_with("      count  ") && line.find("share") != std::string::npos;
      continue;
    }
    if (line.starts_with("  ---------")) break;
    std::smatch match;
    EXPECT_TRUE(std::regex_match(line, match, row_pattern)) << line;
    if (!match.empty()) rows.push_back({std::stoull(match[1].str()), match[2].str()});
  }
  return rows;
}

// RFC 4180, enough for these files: quoted fields with doubled quotes and embedded commas.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  bool field_started = false;
  for (size_t index = 0; index < text.size(); ++index) {
    const char c = text[index];
    if (quoted) {
      if (c == '"' && index + 1 < text.size() && text[index + 1] == '"') {
        field += '"';
        ++index;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      field_started = false;
      rows.emplace_back();
    } else {
      field += c;
      field_started = true;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

class RenderFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    report_ = load_json("report_v1.json");
    run_ = model::run_from_json(report_);
    raw_ = raw_profile(report_);
  }
  json report_;
  model::Run run_;
  RawProfile raw_;
};

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
    run.interval_s = 1;
    std::mt19937 random(7);
    std::binomial_distribution<int> busy(400, 0.25);
    for (int index = 0; index < intervals; ++index) {
      model::TimelineSlice slice;
      slice.start_s = index;
      slice.duration_s = 1;
      slice.profile.add({"client backend", "active", "LWLock", "WALWrite"},
                        static_cast<uint64_t>(busy(random)));
      slice.profile.add({"client backend", "active", "CPU", "CPU"}, 100);
      slice.profile.add_snapshots(100);
      run.profile.merge(slice.profile);
      run.timeline.push_back(std::move(slice));
    }
    return run;
  };
  const auto long_table = report_detail::profile_table(make_run(120), {}, false);
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
  const auto short_table = report_detail::profile_table(make_run(8), {}, false);
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

using RenderHtml = RenderFixture;

// The wait classes of the fixture's non-idle samples in stacking order (as text_format lists
// them: CPU, LWLock, Lock, IO, IPC, Client, Timeout, BufferPin, ...), written out again here.
std::vector<std::string> stacking_order(const RawProfile& raw) {
  static const std::vector<std::string> order = {"CPU",       "LWLock",  "Lock",    "IO",
                                                 "IPC",       "Client",  "Timeout", "BufferPin",
                                                 "Extension", "Activity"};
  std::vector<std::string> classes;
  for (const auto& wait_class : order) {
    if (raw.by_type.contains(wait_class)) classes.push_back(wait_class);
  }
  return classes;
}

TEST_F(RenderHtml, IsSelfContained) {
  const std::string html = render_html(run_);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  for (const char* remote : {"src=", "href=", "url(", "@import", "<link", "<img", "<iframe",
                             "fetch(", "XMLHttpRequest", "import("}) {
    EXPECT_EQ(html.find(remote), std::string::npos) << remote;
  }
  // The only URL is in uPlot's banner comment, which nothing loads.
  EXPECT_EQ(test_fixtures::unexpected_urls(html, {"https://github.com/leeoniya/uPlot"}),
            std::vector<std::string>{});
}

TEST_F(RenderHtml, EmbedsUplotAndTheChartScriptsVerbatim) {
  const std::string html = render_html(run_);
  // Compared with the files of the source tree, not with what the binary embedded: a build
  // that lost or truncated one fails here.
  for (const char* path :
       {"exporters/vendor/uplot/uPlot.iife.min.js", "exporters/vendor/uplot/uPlot.min.css",
        "exporters/vendor/uplot/LICENSE", "exporters/web/charts.js", "exporters/web/charts.css",
        "exporters/web/record_errors.js"}) {
    const std::string content = test_fixtures::source_file(path);
    ASSERT_GT(content.size(), 100u) << path;
    EXPECT_NE(html.find(content), std::string::npos) << path;
  }
  EXPECT_GT(test_fixtures::source_file("exporters/vendor/uplot/uPlot.iife.min.js").size(), 40000u);
  // The error recorder runs first, then uPlot, then the chart script, then the call.
  const size_t recorder = html.find("root.setAttribute('data-errors', '')");
  const size_t uplot = html.find("var uPlot=function");
  const size_t charts = html.find("var pgwaitprof = (function");
  const size_t call =
      html.find("pgwaitprof.draw('timeline', 'timeline-chart', 'timeline-data', 'timeline-info');");
  ASSERT_NE(recorder, std::string::npos);
  ASSERT_NE(call, std::string::npos);
  EXPECT_LT(recorder, html.find("<body>"));
  EXPECT_LT(recorder, uplot);
  EXPECT_LT(uplot, charts);
  EXPECT_LT(charts, call);
  EXPECT_NE(html.find("<div class=\"uchart\" id=\"timeline-chart\""), std::string::npos);
  EXPECT_NE(html.find("<div class=\"fallback\">"), std::string::npos);
}

TEST_F(RenderHtml, TimelineDataHasEverySeriesOfTheFixture) {
  const std::string html = render_html(run_);
  const json data = json::parse(test_fixtures::script_json(html, "timeline-data"));
  const json& timeline = report_.at("timeline");
  ASSERT_EQ(data.at("x").size(), timeline.size());

  std::vector<std::string> names;
  for (const auto& series : data.at("series")) {
    names.push_back(series.at("name"));
    EXPECT_EQ(series.at("values").size(), timeline.size()) << series.at("name");
  }
  std::vector<std::string> expected = stacking_order(raw_);
  expected.insert(expected.end(), {"tps", "latency avg"});
  EXPECT_EQ(names, expected);

  for (size_t index = 0; index < timeline.size(); ++index) {
    const json& slice = timeline[index];
    const double start = slice.at("start_s");
    const double duration = slice.at("duration_s");
    EXPECT_DOUBLE_EQ(data.at("x")[index].get<double>(), start + duration / 2);
    // Every class's AAS from the slice's raw counts.
    std::map<std::string, double> aas;
    const double snapshots = slice.at("profile").at("snapshots");
    for (const auto& entry : slice.at("profile").at("entries")) {
      if (!raw_is_idle(entry)) {
        aas[entry.at("wait_event_type")] += entry.at("count").get<double>() / snapshots;
      }
    }
    for (const auto& series : data.at("series")) {
      const json& value = series.at("values")[index];
      if (series.at("stacked")) {
        EXPECT_NEAR(value.get<double>(), aas[series.at("name")], 1e-9)
            << series.at("name") << " at " << start;
        EXPECT_EQ(series.at("scale"), "aas");
        EXPECT_EQ(
            series.at("colour"),
            std::string(text_format::wait_class_colour(series.at("name").get<std::string>())));
      }
    }
    // tps and latency as pgbench printed them; "-nan" latency is a gap, not a 0.
    EXPECT_EQ(data.at("series")[names.size() - 2].at("values")[index],
              slice.at("loadgen").at("tps"));
    EXPECT_EQ(data.at("series")[names.size() - 1].at("values")[index],
              slice.at("loadgen").at("latency_avg_ms"));
  }
  EXPECT_TRUE(data.at("series").back().at("values")[17].is_null());

  ASSERT_EQ(data.at("stalls").size(), report_.at("stalls").size());
  const json& stall = report_.at("stalls")[0];
  EXPECT_EQ(data.at("stalls")[0],
            json({stall.at("start_s").get<double>(),
                  stall.at("start_s").get<double>() + stall.at("duration_s").get<double>()}));
  std::vector<std::string> lanes;
  for (const auto& lane : data.at("lanes")) lanes.push_back(lane.at("name"));
  EXPECT_EQ(lanes, (std::vector<std::string>{"av", "ch"}));
  std::vector<std::string> scales;
  for (const auto& axis : data.at("axes")) scales.push_back(axis.at("scale"));
  EXPECT_EQ(scales, (std::vector<std::string>{"aas", "tps", "ms"}));
}

TEST_F(RenderHtml, TimelineDataCannotEndItsScriptElement) {
  model::Run hostile = run_;
  const model::WaitKey key{"client backend", "active", "Extension", "</script><!--x&"};
  for (auto& slice : hostile.timeline) slice.profile.add(key, 100000);
  const std::string html = render_html(hostile);
  const std::string text = test_fixtures::script_json(html, "timeline-data");
  EXPECT_EQ(text.find('<'), std::string::npos);
  const json data = json::parse(text);  // whole: nothing ended the element early
  EXPECT_NE(data.at("notes")[0].get<std::string>().find("Extension | </script><!--x&"),
            std::string::npos);
}

TEST_F(RenderHtml, DrawsOneAreaPerWaitClassStallsAndBackground) {
  const std::string html = render_html(run_);
  size_t polygons = 0;
  for (size_t at = html.find("<polygon"); at != std::string::npos;
       at = html.find("<polygon", at + 1)) {
    ++polygons;
  }
  EXPECT_EQ(polygons, raw_.by_type.size());
  EXPECT_NE(html.find("<rect class=\"stall\""), std::string::npos);
  EXPECT_NE(html.find("class=\"tps\""), std::string::npos);
  EXPECT_NE(html.find(">av</text>"), std::string::npos);
  EXPECT_NE(html.find(">ch</text>"), std::string::npos);
  EXPECT_NE(html.find("<details>"), std::string::npos);
  // Round ticks with units on the axes.
  EXPECT_NE(html.find(">10 s</text>"), std::string::npos);
  EXPECT_NE(html.find(">8k</text>"), std::string::npos);
  EXPECT_NE(html.find(">average active sessions</text>"), std::string::npos);
  // The key figures.
  EXPECT_NE(html.find("7659.7 tps"), std::string::npos);
  EXPECT_NE(html.find("2.089 ms"), std::string::npos);
  EXPECT_NE(html.find("99.7 Hz"), std::string::npos);
}

TEST_F(RenderHtml, EscapesEveryText) {
  model::Run hostile = run_;
  hostile.label = "<script>alert('x')</script>";
  hostile.profile.add({"client backend", "active", "Extension", "<b>&"}, 5000);
  const std::string html = render_html(hostile);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>&"), std::string::npos);
  EXPECT_NE(html.find("Extension | &lt;b&gt;&amp;"), std::string::npos);
  const std::string markdown = render_markdown(hostile);
  EXPECT_EQ(markdown.find("<script>"), std::string::npos);
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
  report["statements"] = json::array();
  report["statements_note"] = "";
  report["lock_blockers"] = json::array();
  report["lock_lookups"] = 0;
  report["kernel"] = json::object();
  for (auto& stall : report["stalls"]) {
    stall["max_latency_ms"] = nullptr;
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
  EXPECT_NE(rendered.find("\n  \"schema_version\": 3,"), std::string::npos) << "dump(2)";
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

TEST(RenderJsonSummary, StatesTheFiguresWithTheirErrors) {
  const model::Run run = model::run_from_json(load_json("report_v1.json"));
  const json summary = json::parse(render_json(run)).at("summary");
  const auto tps = model::tps_estimate(run, model::steady_window(run));
  ASSERT_TRUE(tps);
  EXPECT_DOUBLE_EQ(summary.at("tps").at("mean").get<double>(), tps->mean);
  EXPECT_EQ(summary.at("tps").at("reliable").get<bool>(), tps->reliable);
  EXPECT_NE(summary.at("error_method").get<std::string>().find("batch means"), std::string::npos);
  const auto table = report_detail::profile_table(run, {}, false);
  ASSERT_EQ(summary.at("waits").size(), table.rows.size());
  EXPECT_EQ(summary.at("waits").back().at("wait"), table.rows.back().label);
  EXPECT_EQ(summary.at("waits").back().at("count"), table.rows.back().stat.count);
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
  run.interval_s = 1;
  run.duration_s = 4;
  for (int second = 0; second < 4; ++second) {
    model::TimelineSlice slice;
    slice.start_s = second;
    slice.duration_s = 1;
    slice.kernel[model::kClientBackends] = {client_on_cpu_s, client_runqueue_s, 1.0};
    slice.kernel[model::kBackgroundProcesses] = {0.2, 0.0, 1.0};
    run.timeline.push_back(slice);
  }
  return run;
}

TEST(RenderKernelSplit, TheCpuRowSplitsIntoOnCpuAndRunQueueInEveryFormat) {
  const model::Run run = kernel_run(1.5);
  const auto table = report_detail::profile_table(run, {}, false);
  const auto cpu = std::find_if(table.rows.begin(), table.rows.end(),
                                [](const auto& row) { return row.label == "CPU"; });
  ASSERT_NE(cpu, table.rows.end());
  const auto split = report_detail::cpu_split(run, table, *cpu);
  ASSERT_TRUE(split);
  // Runnable time: 1.7 s on a CPU, 2.0 s queued a second; the 3.0 sampled CPU AAS split so.
  EXPECT_NEAR(split->on_cpu_aas, 3.0 * 1.7 / 3.7, 1e-9);
  EXPECT_NEAR(split->runqueue_aas, 3.0 * 2.0 / 3.7, 1e-9);
  EXPECT_NEAR(split->on_cpu_share, 0.75 * 1.7 / 3.7, 1e-9);
  EXPECT_NEAR(split->on_cpu_share + split->runqueue_share, cpu->stat.share, 1e-12);
  // Only the CPU row splits.
  for (const auto& row : table.rows) {
    if (row.label != "CPU") {
      EXPECT_FALSE(report_detail::cpu_split(run, table, row)) << row.label;
    }
  }

  const std::string text = render_text(run);
  const auto cpu_line = text.find("CPU ");
  const auto on_line = text.find("on a CPU (schedstat)");
  const auto queue_line = text.find("waiting for a CPU");
  ASSERT_NE(on_line, std::string::npos) << text;
  ASSERT_NE(queue_line, std::string::npos) << text;
  EXPECT_LT(cpu_line, on_line);
  EXPECT_LT(on_line, queue_line);
  EXPECT_NE(text.find("34.5%     1.38", on_line), std::string::npos) << text;
  EXPECT_NE(text.find("40.5%     1.62", queue_line), std::string::npos) << text;
  EXPECT_NE(render_markdown(run).find("|  | &nbsp;&nbsp;waiting for a CPU | 40.5% | 1.62 |  |"),
            std::string::npos)
      << render_markdown(run);
  EXPECT_NE(render_html(run).find("<td class=\"sub\">on a CPU (schedstat)</td><td "
                                  "class=\"n\">34.5%</td><td class=\"n\">1.38</td>"),
            std::string::npos);
  const json waits = json::parse(render_json(run)).at("summary").at("waits");
  const auto entry = std::find_if(waits.begin(), waits.end(),
                                  [](const json& wait) { return wait.at("wait") == "CPU"; });
  ASSERT_NE(entry, waits.end());
  EXPECT_NEAR(entry->at("kernel_split").at("runqueue_aas").get<double>(), 3.0 * 2.0 / 3.7, 1e-9);
}

TEST(RenderKernelSplit, NoRunQueueLeavesTheRowOnCpuAndNoKernelTimesNoSplit) {
  const model::Run idle_cores = kernel_run(1.5, 0.0);
  const auto table = report_detail::profile_table(idle_cores, {}, false);
  const auto cpu = std::find_if(table.rows.begin(), table.rows.end(),
                                [](const auto& row) { return row.label == "CPU"; });
  ASSERT_NE(cpu, table.rows.end());
  const auto split = report_detail::cpu_split(idle_cores, table, *cpu);
  ASSERT_TRUE(split);
  EXPECT_DOUBLE_EQ(split->on_cpu_aas, cpu->stat.aas);
  EXPECT_DOUBLE_EQ(split->runqueue_aas, 0);
  EXPECT_DOUBLE_EQ(split->runqueue_share, 0);
  model::Run remote = kernel_run(1.5);
  for (auto& slice : remote.timeline) slice.kernel.clear();
  EXPECT_EQ(render_text(remote).find("on a CPU (schedstat)"), std::string::npos);
  EXPECT_EQ(render_html(remote).find("waiting for a CPU"), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::exporters
