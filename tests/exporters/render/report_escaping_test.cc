// Every renderer of a run, a matrix and a comparison with hostile strings in every field that
// comes from a user or a server: the text and terminal outputs hold no control character, the
// Markdown outputs no HTML, no link and no broken table row, the CSVs one row per line; and the
// strings are still there, escaped, not dropped.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "exporters/render/compare.h"
#include "exporters/render/matrix_table.h"
#include "tests/exporters/render/escaping_fixture.h"
#include "tests/exporters/render/report_render_fixture.h"

namespace pgwaitprof::exporters {
namespace {

using escaping_test::kHostile;
using escaping_test::markdown_hazard;
using escaping_test::terminal_hazard;
using render_test::load_run;
using render_test::parse_csv;
using test_fixtures::profile_run;

// How the escapers show the hostile string's escape sequence: it is there, written out.
constexpr std::string_view kShownInText = "\\x1b[31mred\\x1b[0m";
constexpr std::string_view kShownInMarkdown = "&lt;body id=\"pwned\"&gt;";

// The fixture run with kHostile in every string a user or a server gave it: label, target,
// command, workload and variant; a wait event, a backend type and the server's description of
// the event; a statement's text; a lock blocker's application_name, statement, state and
// object; a stall's blocker; settings; the environment; the load generator's summary and
// stderr; a warning; the checkpoint's error; a run-to-run figure.
model::Run hostile_run() {
  model::Run run = load_run("report_v1.json");
  run.label = kHostile;
  run.target = "host=db1 application_name=" + kHostile;
  run.loadgen_argv = {"pgbench", "-f", kHostile};
  run.workload = kHostile;
  run.variant = kHostile;
  run.profile.add({"client backend", "active", "Extension", kHostile}, 9000);
  run.profile.add({kHostile, "active", "IO", "DataFileRead"}, 50);
  run.profile.add({"client backend", "idle", "Client", kHostile}, 70);
  run.timeline.front().profile.add({"client backend", "active", "Extension", kHostile}, 100000);
  run.environment.wait_event_descriptions["Extension | " + kHostile] = kHostile;

  int64_t query_id = 4242;
  run.query_ids[query_id] = 500;
  model::StatementProfile statement;
  statement.query_id = query_id;
  statement.text = kHostile;
  statement.samples = 500;
  statement.waits = {{"Lock | " + kHostile, 300}, {"CPU", 200}};
  statement.calls = 10;
  statement.mean_exec = base::Milliseconds(1.5);
  run.statements.push_back(statement);

  model::LockBlocker blocker;
  blocker.lock_type = "relation";
  blocker.object = kHostile;
  blocker.blocker_statement = kHostile;
  blocker.blocker_state = "idle in transaction " + kHostile;
  blocker.blocker_application = kHostile;
  blocker.blocker_backend_type = "client backend";
  blocker.example_blocker_pid = 4711;
  blocker.observations = 12;
  run.lock_blockers.push_back(blocker);
  run.lock_lookups = 20;

  model::Stall stall;
  stall.start = base::Seconds(3);
  stall.duration = base::Seconds(1);
  stall.waits = {{"Lock | relation", 4}};
  stall.blocker = blocker.description();
  run.stalls.push_back(stall);

  run.environment.server_version = kHostile;
  run.environment.hostname = kHostile;
  run.environment.kernel = kHostile;
  run.environment.cpu_model = kHostile;
  run.environment.settings.push_back({kHostile, kHostile, kHostile, kHostile});
  run.environment.settings.push_back({"work_mem", "4096", "kB", kHostile});
  if (run.loadgen) {
    run.loadgen->transaction_type = kHostile;
    run.loadgen->query_mode = kHostile;
    run.loadgen->aborted.push_back(kHostile);
  }
  run.loadgen_stderr = kHostile + "\n" + kHostile + "\n";
  run.warnings.push_back(kHostile);
  run.checkpoint_after = model::CheckpointAfter{base::Seconds(40), base::Seconds(2), kHostile, {}};
  run.run_to_run = model::RunToRun{5, 3, {{"tps", 7000, 50, 100}, {kHostile, 0.2, 0.01, 0.02}}};
  return run;
}

// The same run failed: its banner carries the error, its stderr comes first.
model::Run hostile_failed_run() {
  model::Run run = hostile_run();
  run.status = model::RunStatus::kFailed;
  run.error = kHostile;
  run.statements.clear();
  run.statements_note = kHostile;
  return run;
}

std::vector<RenderOptions> every_grouping() {
  std::vector<RenderOptions> options;
  for (const auto by : {GroupBy::kWaitEvent, GroupBy::kBackendType, GroupBy::kState,
                        GroupBy::kWaitEventType, GroupBy::kQueryId}) {
    RenderOptions option;
    option.by = by;
    option.include_idle = by == GroupBy::kState;
    options.push_back(option);
  }
  return options;
}

// Issue 23, item 7: the hostile query text, label and names reach report.txt and stdout
// written out, never as escape sequences a terminal would act on.
TEST(ReportEscaping, TextHasNoControlCharacters) {
  for (const auto& run : {hostile_run(), hostile_failed_run()}) {
    for (const auto& options : every_grouping()) {
      const std::string text = render_text(run, options);
      ASSERT_EQ(terminal_hazard(text), "") << text;
      EXPECT_NE(text.find(kShownInText), std::string::npos);
    }
  }
  // Each place a hostile string shows up, written out on its own line (or table row).
  const std::string text = render_text(hostile_run());
  const std::string shown = text_format::text_escape(kHostile);
  for (const std::string& line : {"pgwaitprof run " + hostile_run().id + " \"" + shown + "\"",
                                  "  - " + shown, "  transaction type: " + shown, "  " + shown}) {
    EXPECT_TRUE(render_test::has_line(text, line)) << line << "\n" << text;
  }
  for (const char* part : {"statement", "blocker", "non-default settings"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part;
  }
}

// Issue 23, item 6: statement text and a blocker's application_name in report.md, and every
// other string, escaped or code-spanned: no HTML, no link, no table row broken.
TEST(ReportEscaping, MarkdownHasNoHtmlNoLinksAndWholeRows) {
  for (const auto& run : {hostile_run(), hostile_failed_run()}) {
    for (const auto& options : every_grouping()) {
      const std::string markdown = render_markdown(run, options);
      ASSERT_EQ(markdown_hazard(markdown), "") << markdown;
    }
  }
  // The statements and lock tables carry the statement and the blocker's application_name,
  // escaped; the load generator's output stays inside its fence, escaped line by line.
  const std::string markdown = render_markdown(hostile_run());
  const auto section = [&](const std::string& title) {
    const size_t start = markdown.find("\n## " + title);
    return start == std::string::npos
               ? ""
               : markdown.substr(start, markdown.find("\n## ", start + 1) - start);
  };
  const std::string shown = text_format::markdown_escape(kHostile);
  EXPECT_NE(section("Statements: which statement waits on what").find("| " + shown + " |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(section("Lock waits: who blocked them").find("| pid 4711 (" + shown + ") |"),
            std::string::npos)
      << markdown;
  const std::string first_line = kHostile.substr(0, kHostile.find('\n'));
  EXPECT_NE(markdown.find("```text\n" + text_format::text_escape(first_line) + "\n"),
            std::string::npos)
      << markdown;
}

TEST(ReportEscaping, CsvAndFoldedAreOneRecordALine) {
  const model::Run run = hostile_run();
  for (const auto& options : every_grouping()) {
    const std::string csv = render_profile_csv(run, options);
    ASSERT_EQ(terminal_hazard(csv), "") << csv;
    const auto rows = parse_csv(csv);
    for (const auto& row : rows) ASSERT_EQ(row.size(), rows.front().size()) << csv;
  }
  const std::string timeline = render_timeline_csv(run);
  ASSERT_EQ(terminal_hazard(timeline), "");
  const auto rows = parse_csv(timeline);
  for (const auto& row : rows) ASSERT_EQ(row.size(), rows.front().size());
  EXPECT_EQ(rows.size(), run.timeline.size() + 1);

  RenderOptions idle;
  idle.include_idle = true;
  const std::string folded = render_folded(run, idle);
  ASSERT_EQ(terminal_hazard(folded), "") << folded;
  uint64_t total = 0;
  for (const auto& line : escaping_test::lines_of(folded)) {
    const auto space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    total += std::stoull(line.substr(space + 1));
  }
  EXPECT_EQ(total, run.profile.total(true));
}

// Wait names, backend types and variants a spreadsheet would run as formulas: no cell of
// profile.csv, timeline.csv or table.csv is one, negative numbers stay numbers (issue 40
// item 3).
TEST(ReportEscaping, CsvCellsAreNeverFormulas) {
  model::Run run = load_run("report_v1.json");
  for (const auto& formula : escaping_test::kFormulas) {
    run.profile.add({formula, "active", "Extension", formula}, 9000);
    run.timeline.front().profile.add({"client backend", "active", "Extension", formula}, 100000);
  }
  for (const auto& options : every_grouping()) {
    const std::string csv = render_profile_csv(run, options);
    EXPECT_EQ(escaping_test::formula_hazard(csv), "") << csv;
  }
  const std::string timeline = render_timeline_csv(run);
  EXPECT_EQ(escaping_test::formula_hazard(timeline), "") << timeline;
  std::vector<model::Run> runs;
  for (const auto& formula : escaping_test::kFormulas) {
    runs.push_back(profile_run(formula, 1, 1, {{"LWLock", formula, 600}}));
  }
  const MatrixTable table = build_matrix_table(runs, "plan", model::Metric::kTps, "");
  const std::string csv = render_matrix_csv(table);
  EXPECT_EQ(escaping_test::formula_hazard(csv), "") << csv;
  EXPECT_NE(csv.find("'=cmd|' /C calc'!A0"), std::string::npos) << csv;
  EXPECT_EQ(text_format::csv_field("-0.25"), "-0.25");
  EXPECT_EQ(text_format::csv_field("+1e-3"), "+1e-3");
  EXPECT_EQ(text_format::csv_field("-"), "'-");
  EXPECT_EQ(text_format::csv_field("=1,2"), "\"'=1,2\"");
}

TEST(ReportEscaping, JsonParsesBackWithNoRawControls) {
  const std::string json = render_json(hostile_run());
  EXPECT_TRUE(std::none_of(json.begin(), json.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 && c != '\n';
  }));
  const auto back = nlohmann::json::parse(json);
  EXPECT_TRUE(escaping_test::decode_utf8(back.at("label").get<std::string>()));
}

// Matrix runs whose variant, label and wait events are hostile, one of them failed (its note
// names the variant), in the text, Markdown (table.md), CSV and JSON tables.
std::vector<model::Run> hostile_matrix_runs() {
  std::vector<model::Run> runs;
  for (const int clients : {1, 8}) {
    for (int repeat = 1; repeat <= 2; ++repeat) {
      runs.push_back(
          profile_run(kHostile, clients, repeat, {{"LWLock", kHostile, 600}, {"CPU", "CPU", 300}}));
      runs.push_back(profile_run("plain", clients, repeat, {{"IO", "DataFileRead", 500}}));
    }
  }
  runs.push_back(profile_run(kHostile, 8, 3, {}, 1000, model::RunStatus::kFailed));
  for (auto& run : runs) run.label = kHostile;
  return runs;
}

TEST(MatrixEscaping, TablesHoldNoControlsAndNoHtml) {
  const auto runs = hostile_matrix_runs();
  for (const char* split_by : {"", "label"}) {
    const MatrixTable table = build_matrix_table(runs, kHostile, model::Metric::kTps, split_by);
    const std::string text = render_matrix_text(table);
    ASSERT_EQ(terminal_hazard(text), "") << text;
    EXPECT_NE(text.find(kShownInText), std::string::npos);
    const std::string markdown = render_matrix_markdown(table);
    ASSERT_EQ(markdown_hazard(markdown), "") << markdown;
    EXPECT_NE(markdown.find(kShownInMarkdown), std::string::npos);
    const std::string csv = render_matrix_csv(table);
    ASSERT_EQ(terminal_hazard(csv), "") << csv;
    const auto rows = parse_csv(csv);
    for (const auto& row : rows) ASSERT_EQ(row.size(), rows.front().size()) << csv;
    const std::string json = render_matrix_json(table);
    EXPECT_EQ(nlohmann::json::parse(json).at("cells").size(), table.cells.size());
  }
}

TEST(MatrixEscaping, TextGridStaysAligned) {
  const MatrixTable table = build_matrix_table(hostile_matrix_runs(), "m");
  // The median rows: the variant names padded to one width, so the client columns line up.
  const auto lines = escaping_test::lines_of(render_matrix_text(table));
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.starts_with("clients");
  });
  ASSERT_NE(header, lines.end());
  const std::string shown = text_format::text_escape(kHostile);
  ASSERT_TRUE(header + 1 != lines.end() && (header + 1)->starts_with(shown)) << *(header + 1);
  EXPECT_EQ(text_format::display_width(*header), text_format::display_width(*(header + 1)));
}

TEST(CompareEscaping, TextAndMarkdownOfHostileSides) {
  auto runs = hostile_matrix_runs();
  std::vector<model::Run> a, b;
  for (auto& run : runs) {
    if (run.status != model::RunStatus::kCompleted) continue;
    (run.repeat == 1 ? a : b).push_back(run);
  }
  const Comparison comparison = compare_runs(a, b, kHostile, kHostile);
  const std::string text = render_comparison_text(comparison);
  ASSERT_EQ(terminal_hazard(text), "") << text;
  EXPECT_NE(text.find(kShownInText), std::string::npos);
  const std::string markdown = render_comparison_markdown(comparison);
  ASSERT_EQ(markdown_hazard(markdown), "") << markdown;
  EXPECT_NE(markdown.find(kShownInMarkdown), std::string::npos);
  const auto json = nlohmann::json::parse(render_comparison_json(comparison));
  EXPECT_FALSE(json.at("cells").empty());
}

}  // namespace
}  // namespace pgwaitprof::exporters
