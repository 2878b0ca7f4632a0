// The settings journal's pure parts: the ALTER SYSTEM replay that brings postgresql.auto.conf
// back in its order, the marker's value, and the journal file's round trip. The journal against
// a real server, killed matrices included, is in tests/faults/signal_class_test.cc.
#include "daemon/engine/settings_journal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace pgwaitprof::engine {
namespace {

using Entries = std::vector<AutoConfEntry>;

// What ALTER SYSTEM does to the file's entries (PostgreSQL's replace_auto_config_value): a SET
// removes the setting and appends it at the end, a RESET removes it.
Entries simulate(Entries entries, const std::vector<std::string>& statements) {
  for (const auto& sql : statements) {
    if (sql.starts_with("ALTER SYSTEM RESET ")) {
      const auto name = sql.substr(std::string("ALTER SYSTEM RESET ").size());
      std::erase_if(entries, [&](const AutoConfEntry& entry) { return entry.name == name; });
      continue;
    }
    const auto rest = sql.substr(std::string("ALTER SYSTEM SET ").size());
    const auto name = rest.substr(0, rest.find(" = "));
    auto value = rest.substr(rest.find(" = ") + 3);
    EXPECT_TRUE(value.front() == '\'' && value.back() == '\'') << sql;
    value = value.substr(1, value.size() - 2);
    std::erase_if(entries, [&](const AutoConfEntry& entry) { return entry.name == name; });
    entries.push_back({name, value});
  }
  return entries;
}

TEST(ReplayStatements, NothingToDoWhenTheFileIsAsFound) {
  const Entries found{{"work_mem", "77MB"}, {"commit_delay", "5"}};
  EXPECT_TRUE(replay_statements(found, found).empty());
}

TEST(ReplayStatements, AVariantsChangesComeBackInTheOriginalOrderTheMarkerLast) {
  // The case: the user's work_mem and commit_delay, then a matrix's marker and variant.
  const Entries original{{"work_mem", "77MB"}, {"commit_delay", "5"}};
  const Entries changed{{"pgwaitprof.settings_journal", "host:/m/settings-journal.json"},
                        {"commit_delay", "10"},
                        {"synchronous_commit", "off"},
                        {"work_mem", "8MB"}};
  const auto statements = replay_statements(changed, original);
  ASSERT_FALSE(statements.empty());
  EXPECT_EQ(statements.back(), "ALTER SYSTEM RESET pgwaitprof.settings_journal");
  EXPECT_EQ(simulate(changed, statements), original);
}

TEST(ReplayStatements, AnUntouchedPrefixKeepsItsLines) {
  const Entries original{{"a", "1"}, {"b", "2"}, {"c", "3"}};
  const Entries changed{{"a", "1"}, {"c", "3"}, {"b", "9"}};
  const auto statements = replay_statements(changed, original);
  for (const auto& sql : statements) EXPECT_EQ(sql.find(" a"), std::string::npos) << sql;
  EXPECT_EQ(simulate(changed, statements), original);
}

TEST(ReplayStatements, AnyChangedFileComesBackToAnyOriginal) {
  std::mt19937 random(23);
  const std::vector<std::string> names{"a", "b", "c", "d", "e", "f"};
  for (int trial = 0; trial < 2000; ++trial) {
    auto pick = [&] {
      Entries entries;
      auto shuffled = names;
      std::shuffle(shuffled.begin(), shuffled.end(), random);
      shuffled.resize(random() % (names.size() + 1));
      for (const auto& name : shuffled) entries.push_back({name, std::to_string(random() % 3)});
      return entries;
    };
    const auto original = pick();
    auto changed = pick();
    if (random() % 2) {
      changed.insert(changed.begin() + static_cast<long>(random() % (changed.size() + 1)),
                     {"pgwaitprof.settings_journal", "h:/j"});
    }
    ASSERT_EQ(simulate(changed, replay_statements(changed, original)), original) << trial;
  }
}

TEST(ReplayStatements, ValuesAreQuotedAndListsSetElementByElement) {
  const auto statements =
      replay_statements({}, {{"application_name", "it's"}, {"search_path", "\"$user\", public"}});
  ASSERT_EQ(statements.size(), 2u);
  EXPECT_EQ(statements[0], "ALTER SYSTEM SET application_name = 'it''s'");
  // The server quotes each element again as it did the first time: "$user", public.
  EXPECT_EQ(statements[1], "ALTER SYSTEM SET search_path = '$user', 'public'");
}

TEST(ParseMarker, HostAndAbsolutePath) {
  const auto marker = parse_marker("bench-1:/var/lib/pgwaitprof/matrix/x/settings-journal.json");
  ASSERT_TRUE(marker);
  EXPECT_EQ(marker->host, "bench-1");
  EXPECT_EQ(marker->path, "/var/lib/pgwaitprof/matrix/x/settings-journal.json");
  EXPECT_FALSE(parse_marker("no-colon"));
  EXPECT_FALSE(parse_marker(":/path"));
  EXPECT_FALSE(parse_marker("host:relative/path"));
}

TEST(JournalRecord, RoundTripsBytesAndEntries) {
  JournalRecord record;
  record.host = "bench-1";
  record.target = "host=db password=********";
  record.bytes = std::string("# Do not edit\nwork_mem = '77MB'\n") + std::string("\x01\xff", 2);
  record.entries = {{"work_mem", "77MB"}, {"commit_delay", "5"}};
  const auto read = journal_from_json(journal_to_json(record));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->host, record.host);
  EXPECT_EQ(read->bytes, record.bytes);
  EXPECT_EQ(read->entries, record.entries);
  record.bytes.reset();
  EXPECT_FALSE(journal_from_json(journal_to_json(record))->bytes);
  EXPECT_FALSE(journal_from_json("{\"entries\": 3}"));
}

}  // namespace
}  // namespace pgwaitprof::engine
