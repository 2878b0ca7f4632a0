// Commands that need no server: explain, and report, runs and trend on a saved run.
#include "exporters/render/report_render.h"
#include "model/run.h"
#include "tests/exporters/render/escaping_fixture.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

using exporters::escaping_test::kHostile;
using exporters::escaping_test::markdown_hazard;
using exporters::escaping_test::terminal_hazard;

// Every command's --help says what a value may be in the reader's words: "auto|true|false",
// "1-3600", "KEY=VALUE", never CLI11's own ("ENUM:value in {auto->0,...}", "INT:INT in [...]").
TEST(HelpText, NoCommandShowsCliInternals) {
  for (const char* command : {"", "daemon", "run", "record", "report", "matrix", "compare", "runs",
                              "trend", "results", "explain"}) {
    std::vector<std::string> argv{pgwaitprof_binary()};
    if (*command) argv.emplace_back(command);
    argv.emplace_back("--help");
    const auto help = engine::run_command(argv);
    EXPECT_EQ(help.exit_code, 0) << command << ": " << help.output;
    for (const char* internal : {"ENUM", "->", "TEXT:", "INT:", "FLOAT:", " in [", " OR {"}) {
      EXPECT_EQ(help.output.find(internal), std::string::npos)
          << command << " --help shows " << internal << ":\n"
          << help.output;
    }
  }
  const auto run = engine::run_command({pgwaitprof_binary(), "run", "--help"});
  EXPECT_NE(run.output.find("--local auto|true|false"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("--scale 1-100000"), std::string::npos) << run.output;
}

TEST(ExplainCommand, OldAndNewNamesAndUnknownOnes) {
  auto old_name = engine::run_command({pgwaitprof_binary(), "explain", "WALWriteLock"});
  EXPECT_EQ(old_name.exit_code, 0) << old_name.output;
  EXPECT_TRUE(old_name.output.starts_with("LWLock | WALWrite\n")) << old_name.output;
  EXPECT_NE(old_name.output.find("old name"), std::string::npos);
  EXPECT_NE(old_name.output.find("Usual causes and what helps:"), std::string::npos);

  auto both = engine::run_command({pgwaitprof_binary(), "explain", "walwrite"});
  EXPECT_EQ(both.exit_code, 0);
  EXPECT_NE(both.output.find("LWLock | WALWrite"), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("IO | WalWrite"), std::string::npos) << both.output;

  auto unknown = engine::run_command({pgwaitprof_binary(), "explain", "NoSuchWait"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("pgwaitprof: unknown wait event \"NoSuchWait\""), std::string::npos)
      << unknown.output;
}

// `--since 2026-13-45`, `2026-02-31` and `T25:99` were taken as bounds and compared as text:
// runs and trend refuse a day or a time of day that does not exist, in one line, exit 2.
TEST(HistoryFilters, DatesAndTimesThatDoNotExistAreRefused) {
  const auto data = temp_dir("cli-dates");
  for (const char* command : {"runs", "trend"}) {
    for (const char* option : {"--since", "--until"}) {
      for (const auto& [value, why] : std::vector<std::pair<std::string, std::string>>{
               {"2026-13-45", "no such date"},
               {"2026-02-31", "no such date"},
               {"2026-11-30T25:99", "no such time of day"}}) {
        const auto refused = engine::run_command(
            {pgwaitprof_binary(), command, "--data-dir", data.string(), option, value});
        EXPECT_EQ(refused.exit_code, 2) << command << " " << option << " " << value;
        EXPECT_EQ(refused.output, fmt::format("pgwaitprof: invalid value for {}: \"{}\" ({})\n",
                                              option, value, why));
      }
      const auto bare_time = engine::run_command(
          {pgwaitprof_binary(), command, "--data-dir", data.string(), option, "T25:99"});
      EXPECT_EQ(bare_time.exit_code, 2);
      EXPECT_EQ(bare_time.output,
                fmt::format("pgwaitprof: invalid value for {}: \"T25:99\"\n", option));
    }
  }
  const auto fine = engine::run_command(
      {pgwaitprof_binary(), "runs", "--data-dir", data.string(), "--since", "2024-02-29"});
  EXPECT_EQ(fine.exit_code, 0) << fine.output;
}

// Issue 23, items 6 and 7 through the binary: a saved run whose label, statement, lock
// blocker, warning and load generator output hold an escape sequence, HTML and Markdown
// syntax, printed by report, runs and trend in their terminal and Markdown formats.
TEST(SavedRunCommands, HostileStringsReachNeitherTheTerminalNorTheMarkdownRaw) {
  auto run = model::run_from_json(nlohmann::json::parse(
      read_text(std::filesystem::path(PGWAITPROF_FIXTURES) / "report_v1.json")));
  run.label = kHostile;
  run.workload = kHostile;
  model::StatementProfile statement;
  statement.query_id = 7;
  statement.text = kHostile;
  statement.samples = 100;
  statement.waits = {{"CPU", 100}};
  run.statements.push_back(statement);
  model::LockBlocker blocker;
  blocker.lock_type = "relation";
  blocker.blocker_application = kHostile;
  blocker.blocker_statement = kHostile;
  blocker.observations = 3;
  run.lock_blockers.push_back(blocker);
  run.warnings.push_back(kHostile);
  run.loadgen_stderr = kHostile;
  const auto data = temp_dir("hostile");
  const auto dir = data / "runs" / run.id;
  std::filesystem::create_directories(dir);
  write_text(dir / "report.json", exporters::render_json(run));

  const auto pgwaitprof = [&](std::vector<std::string> args) {
    args.insert(args.begin(), pgwaitprof_binary());
    auto result = engine::run_command(args);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return result.output;
  };
  for (const char* format : {"text", "csv", "timeline-csv", "folded"}) {
    const auto output = pgwaitprof({"report", dir.string(), "--format", format});
    EXPECT_EQ(terminal_hazard(output), "") << format << "\n" << output;
  }
  const auto markdown = pgwaitprof({"report", dir.string(), "--format", "md"});
  EXPECT_EQ(markdown_hazard(markdown), "") << markdown;
  EXPECT_NE(markdown.find("&lt;body id=\"pwned\"&gt;"), std::string::npos) << markdown;
  for (const char* command : {"runs", "trend"}) {
    const auto text = pgwaitprof({command, "--data-dir", data.string()});
    EXPECT_EQ(terminal_hazard(text), "") << text;
    EXPECT_NE(text.find("\\x1b[31mred"), std::string::npos) << text;
    const auto listed = pgwaitprof({command, "--data-dir", data.string(), "--format", "md"});
    EXPECT_EQ(markdown_hazard(listed), "") << listed;
    EXPECT_NE(listed.find("&lt;body id=\"pwned\"&gt;"), std::string::npos) << listed;
  }
}

}  // namespace
}  // namespace pgwaitprof::testing
