// A server marked by an interrupted matrix whose settings journal is gone (issue 47 item 12): a
// run refuses it in one line that says how to recover (it used to say only that the file could
// not be opened, on every later run), and the way it gives works: the next run starts. The
// marker's other refusals are one line too (they printed a literal "\nHINT" through the
// terminal escaper).
#include <fmt/format.h>

#include "daemon/engine/settings_journal.h"
#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

namespace fs = std::filesystem;

class SettingsJournalHint : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
  void TearDown() override { mark(std::nullopt); }
  // The marker as an interrupted matrix leaves it (nullopt: none), in one psql session: ALTER
  // SYSTEM knows a custom setting once the session has set it.
  static void mark(const std::optional<std::string>& value) {
    const auto change =
        value ? fmt::format("ALTER SYSTEM SET {} = '{}'", engine::kJournalMarker, *value)
              : fmt::format("ALTER SYSTEM RESET {}", engine::kJournalMarker);
    const auto done =
        engine::run_command({base::find_executable("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
                             "-c", fmt::format("SET {} = ''", engine::kJournalMarker), "-c", change,
                             "-c", "SELECT pg_reload_conf()", test_conninfo()});
    ASSERT_EQ(done.exit_code, 0) << done.output;
  }
  static RunResult run(const fs::path& data) {
    return pgwaitprof_run(data, {test_conninfo(), "--source", "activity", "--brief"},
                          {"-c", "1", "-R", kModestRate, "-T", "2"});
  }
};

// The one line pgwaitprof printed that names the failure, and that nothing else was printed
// with a line break or an escaped one inside it.
void expect_one_line(const std::string& output, const std::string& needle) {
  const auto at = output.find(needle);
  ASSERT_NE(at, std::string::npos) << output;
  const auto begin = output.rfind('\n', at);
  const auto end = output.find('\n', at);
  const auto line = output.substr(begin == std::string::npos ? 0 : begin + 1,
                                  end == std::string::npos ? std::string::npos : end - begin - 1);
  EXPECT_EQ(line.find("\\n"), std::string::npos) << line;
  EXPECT_EQ(output.find("HINT"), std::string::npos) << output;
}

TEST_F(SettingsJournalHint, ALostJournalSaysHowToRecoverAndTheWayWorks) {
  const auto data = temp_dir("journal-lost");
  const auto journal = data / "gone" / "settings-journal.json";
  mark(engine::journal_host() + ":" + journal.string());
  const auto refused = run(data);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  expect_one_line(refused.output, "settings journal \"" + journal.string() +
                                      "\" of an interrupted pgwaitprof matrix is missing");
  const std::string reset = fmt::format("ALTER SYSTEM RESET {}", engine::kJournalMarker);
  EXPECT_NE(refused.output.find(reset + " and SELECT pg_reload_conf()"), std::string::npos)
      << refused.output;
  // What the line says to do, done: the next run starts.
  ASSERT_EQ(psql(reset).exit_code, 0);
  ASSERT_EQ(psql("SELECT pg_reload_conf()").exit_code, 0);
  fs::remove_all(data / "runs");
  const auto after = run(data);
  EXPECT_EQ(after.exit_code, 0) << after.output;
}

TEST_F(SettingsJournalHint, AnUnreadableJournalSaysHowToRecover) {
  const auto data = temp_dir("journal-cut");
  const auto journal = data / "settings-journal.json";
  write_text(journal, "{\"host\": \"cut sh");  // what a write cut short leaves
  mark(engine::journal_host() + ":" + journal.string());
  const auto refused = run(data);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  expect_one_line(refused.output, "of an interrupted pgwaitprof matrix cannot be read (");
  EXPECT_NE(refused.output.find("reset what the matrix changed"), std::string::npos)
      << refused.output;
}

TEST_F(SettingsJournalHint, AMarkerOfAnotherKindOrHostIsRefusedInOneLine) {
  const auto data = temp_dir("journal-marker");
  mark("not a journal");
  auto refused = run(data);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  expect_one_line(refused.output, "is not a pgwaitprof journal");
  mark("elsewhere.example:/var/lib/pgwaitprof/settings-journal.json");
  fs::remove_all(data / "runs");
  refused = run(data);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  expect_one_line(refused.output, "unfinished pgwaitprof matrix on host \"elsewhere.example\"");
}

}  // namespace
}  // namespace pgwaitprof::testing
