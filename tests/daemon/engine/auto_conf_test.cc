// What another session changed in postgresql.auto.conf while a matrix ran (issue 47 item 2):
// found, kept, and the rest put back as the journal has it. The statements that do it are
// checked with the server's own rule for ALTER SYSTEM (a SET appends, a RESET removes).
#include "daemon/engine/auto_conf.h"

#include <gtest/gtest.h>

namespace pgwaitprof::engine {
namespace {

using Entries = std::vector<AutoConfEntry>;
using Applied = std::map<std::string, std::optional<std::string>>;

const AutoConfEntry kMarker{kJournalMarker, "host:/m/settings-journal.json"};

TEST(OtherSessionsChanges, NoneWhenOnlyTheMatrixChangedTheFile) {
  const Entries original{{"work_mem", "77MB"}, {"commit_delay", "5"}};
  const Entries current{{"work_mem", "77MB"}, kMarker, {"commit_delay", "10"}, {"jit", "off"}};
  const auto kept =
      other_sessions_changes(original, current, Applied{{"commit_delay", "10"}, {"jit", "off"}});
  EXPECT_TRUE(kept.names.empty());
  EXPECT_EQ(kept.target, original);
}

TEST(OtherSessionsChanges, ASettingAnotherSessionSetIsKeptAndTheMatrixsUndone) {
  // The case: ALTER SYSTEM SET maintenance_work_mem = '123MB' from psql mid-matrix.
  const Entries original{{"work_mem", "77MB"}};
  const Entries current{
      kMarker, {"work_mem", "8MB"}, {"maintenance_work_mem", "123MB"}, {"commit_delay", "10"}};
  const Applied applied{{"work_mem", "8MB"}, {"commit_delay", "10"}};
  const auto kept = other_sessions_changes(original, current, applied);
  EXPECT_EQ(kept.names, std::vector<std::string>{"maintenance_work_mem"});
  const Entries expected{{"work_mem", "77MB"}, {"maintenance_work_mem", "123MB"}};
  EXPECT_EQ(kept.target, expected);
  // The statements leave the file as that, the marker gone.
  auto statements = replay_statements(current, kept.target);
  EXPECT_EQ(statements.back(), std::string("ALTER SYSTEM RESET ") + kJournalMarker);
}

TEST(OtherSessionsChanges, AChangeOrResetOfAnUntouchedLineIsKept) {
  const Entries original{{"a", "1"}, {"b", "2"}, {"c", "3"}};
  // b reset and c changed by another session; a changed by the matrix.
  const Entries current{kMarker, {"c", "30"}, {"a", "9"}};
  const auto kept = other_sessions_changes(original, current, Applied{{"a", "9"}});
  EXPECT_EQ(kept.names, (std::vector<std::string>{"b", "c"}));
  const Entries expected{{"a", "1"}, {"c", "30"}};
  EXPECT_EQ(kept.target, expected);
}

TEST(OtherSessionsChanges, ATouchedSettingAnotherSessionChangedAgainIsKept) {
  const Entries original{{"work_mem", "77MB"}};
  const Entries current{kMarker, {"work_mem", "256MB"}};
  const auto kept = other_sessions_changes(original, current, Applied{{"work_mem", "8MB"}});
  EXPECT_EQ(kept.names, std::vector<std::string>{"work_mem"});
  EXPECT_EQ(kept.target, (Entries{{"work_mem", "256MB"}}));
}

TEST(OtherSessionsChanges, ATouchedSettingTheMatrixResetIsNotAnotherSessions) {
  const Entries original{{"work_mem", "77MB"}, {"jit", "on"}};
  const Entries current{{"jit", "on"}, kMarker};
  const auto kept = other_sessions_changes(original, current, Applied{{"work_mem", std::nullopt}});
  EXPECT_TRUE(kept.names.empty());
  EXPECT_EQ(kept.target, original);
}

}  // namespace
}  // namespace pgwaitprof::engine
