// The wait event reference: complete against the lists extracted from PostgreSQL's sources, old
// names resolve to today's, lookups forgive how people type names, and the explain text.
#include "model/wait_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

namespace pgwaitprof::model {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using TypeAndName = std::pair<std::string, std::string>;

std::set<TypeAndName> read_fixture(int version) {
  const std::string path =
      std::string(PGWAITPROF_FIXTURES) + "/wait_events/pg" + std::to_string(version) + ".txt";
  std::ifstream file(path);
  EXPECT_TRUE(file) << "could not open \"" << path << "\"";
  std::set<TypeAndName> events;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line.front() == '#') continue;
    const auto bar = line.find('|');
    EXPECT_NE(bar, std::string::npos) << line;
    events.emplace(line.substr(0, bar), line.substr(bar + 1));
  }
  return events;
}

std::set<TypeAndName> reference_names(int version) {
  std::set<TypeAndName> names;
  for (const WaitEventInfo& info : wait_event_reference()) {
    if (info.origin != WaitEventOrigin::kCore) continue;
    if (auto reported = reported_name(info, version)) {
      const bool inserted =
          names.emplace(std::string(reported->type), std::string(reported->name)).second;
      EXPECT_TRUE(inserted) << "two entries report " << reported->type << " | " << reported->name
                            << " in " << version;
    }
  }
  return names;
}

TypeAndName canonical_of(const WaitEventInfo& info) {
  return {std::string(info.type), std::string(info.name)};
}

TEST(WaitEventReference, CoversEveryEventOfPostgres15) {
  const auto fixture = read_fixture(15);
  ASSERT_GT(fixture.size(), 200u);
  for (const auto& [type, name] : fixture) {
    const WaitEventInfo* info = find_wait_event(type, name, 15);
    ASSERT_NE(info, nullptr) << type << " | " << name;
    EXPECT_TRUE(exists_in(*info, 15)) << type << " | " << name;
    EXPECT_FALSE(info->meaning.empty()) << type << " | " << name;
  }
}

// Both ways: every event the server can report is known, and the reference claims no event for
// a release that does not have it (so version ranges and renames are right).
TEST(WaitEventReference, MatchesEachReleaseExactly) {
  for (int version = kOldestCoveredVersion; version <= kNewestCoveredVersion; ++version) {
    SCOPED_TRACE("PostgreSQL " + std::to_string(version));
    const auto fixture = read_fixture(version);
    ASSERT_FALSE(fixture.empty());
    const auto reference = reference_names(version);
    for (const auto& event : fixture) {
      EXPECT_TRUE(reference.contains(event)) << "missing " << event.first << " | " << event.second;
    }
    for (const auto& event : reference) {
      EXPECT_TRUE(fixture.contains(event))
          << "not in this release: " << event.first << " | " << event.second;
    }
  }
}

TEST(WaitEventReference, EveryEntryHasAMeaningAndNoDuplicates) {
  std::set<TypeAndName> seen;
  for (const WaitEventInfo& info : wait_event_reference()) {
    EXPECT_FALSE(info.meaning.empty()) << info.type << " | " << info.name;
    EXPECT_TRUE(seen.insert(canonical_of(info)).second) << info.type << " | " << info.name;
    if (info.origin == WaitEventOrigin::kCore) {
      EXPECT_GE(info.first_version, kOldestCoveredVersion) << info.name;
      EXPECT_TRUE(info.last_version == 0 || info.last_version >= info.first_version) << info.name;
    }
    for (const WaitEventName& old : info.old_names) {
      EXPECT_LE(old.first_version, old.last_version) << old.name;
      EXPECT_GE(old.first_version, 9) << old.name;
      EXPECT_TRUE(old.type != info.type || old.name != info.name) << old.name;
    }
  }
}

TEST(WaitEventReference, EveryOldNameLeadsBackToItsEvent) {
  for (const WaitEventInfo& info : wait_event_reference()) {
    for (const WaitEventName& old : info.old_names) {
      const std::string query = std::string(old.type) + " | " + std::string(old.name);
      const auto matches = lookup_wait_event(query);
      const bool found = std::any_of(matches.begin(), matches.end(), [&](const auto& match) {
        return match.info == &info && match.old_name;
      });
      EXPECT_TRUE(found) << query;
      // Without a version, a name that is also some event's name today finds that event
      // (Activity RecoveryWalStream meant RecoveryRetrieveRetryInterval in 10-12).
      const std::optional<int> version = old.last_version < kOldestCoveredVersion
                                             ? std::nullopt
                                             : std::optional<int>(old.last_version);
      const WaitEventInfo* today = find_wait_event(old.type, old.name);
      const bool taken_today =
          today != nullptr && today->type == old.type && today->name == old.name;
      if (version || !taken_today) {
        EXPECT_EQ(find_wait_event(old.type, old.name, version), &info) << query;
      }
    }
  }
}

struct OldName {
  std::string query;
  std::string type;
  std::string name;
};

TEST(WaitEventReference, OldNamesMapToTodaysNames) {
  const std::vector<OldName> cases = {
      {"WALWriteLock", "LWLock", "WALWrite"},
      {"LWLockNamed | WALWriteLock", "LWLock", "WALWrite"},
      {"WALInsertLock", "LWLock", "WALInsert"},  // before 9.6: never reported, still quoted
      {"wal_insert", "LWLock", "WALInsert"},
      {"LWLockTranche | wal_insert", "LWLock", "WALInsert"},
      {"CLogControlLock", "LWLock", "XactSLRU"},
      {"clog", "LWLock", "XactBuffer"},
      {"CLogTruncationLock", "LWLock", "XactTruncation"},
      {"ProcArrayLock", "LWLock", "ProcArray"},
      {"buffer_content", "LWLock", "BufferContent"},
      {"buffer_mapping", "LWLock", "BufferMapping"},
      {"lock_manager", "LWLock", "LockManager"},
      {"buffer_io", "IPC", "BufferIo"},
      {"LWLock | BufferIO", "IPC", "BufferIo"},
      {"SubtransControlLock", "LWLock", "SubtransSLRU"},
      {"subtrans", "LWLock", "SubtransBuffer"},
      {"MultiXactOffsetControlLock", "LWLock", "MultiXactOffsetSLRU"},
      {"MultiXactMemberControlLock", "LWLock", "MultiXactMemberSLRU"},
      {"multixact_offset", "LWLock", "MultiXactOffsetBuffer"},
      {"multixact_member", "LWLock", "MultiXactMemberBuffer"},
      {"MultiXactGenLock", "LWLock", "MultiXactGen"},
      {"CommitTsControlLock", "LWLock", "CommitTsSLRU"},
      {"commit_timestamp", "LWLock", "CommitTsBuffer"},
      {"async", "LWLock", "NotifyBuffer"},
      {"AsyncCtlLock", "LWLock", "NotifySLRU"},
      {"AsyncQueueLock", "LWLock", "NotifyQueue"},
      {"oldserxid", "LWLock", "SerialBuffer"},
      {"OldSerXidLock", "LWLock", "SerialSLRU"},
      {"SerializablePredicateLockListLock", "LWLock", "SerializablePredicateList"},
      {"proc", "LWLock", "LockFastPath"},
      {"tbm", "LWLock", "SharedTidBitmap"},
      {"replication_origin", "LWLock", "ReplicationOriginState"},
      {"ReplicationOriginLock", "LWLock", "ReplicationOrigin"},
      {"serializable_xact", "LWLock", "PerXactPredicateList"},
      {"XidGenLock", "LWLock", "XidGen"},
      {"WALBufMappingLock", "LWLock", "WALBufMapping"},
      {"ClogGroupUpdate", "IPC", "XactGroupUpdate"},
      {"Hash/Batch/Allocating", "IPC", "HashBatchAllocate"},
      {"RecoveryWalAll", "Activity", "RecoveryWalStream"},
      {"speculative token", "Lock", "spectoken"},
      {"IO | WALWrite", "IO", "WalWrite"},
      {"IO | WALSync", "IO", "WalSync"},
      {"ProcArrayGroupUpdate", "IPC", "ProcarrayGroupUpdate"},
      {"BgWorkerShutdown", "IPC", "BgworkerShutdown"},
      {"RelationMapSync", "IO", "RelationMapReplace"},
      {"CommitTSBuffer", "LWLock", "CommitTsBuffer"},
      {"Client | WalReceiverWaitStart", "IPC", "WalReceiverWaitStart"},
  };
  for (const auto& [query, type, name] : cases) {
    const auto canonical = canonical_wait_event(query);
    ASSERT_TRUE(canonical) << query;
    EXPECT_EQ(*canonical, (TypeAndName{type, name})) << query;
  }
}

TEST(WaitEventReference, OldNameMatchReportsTheNameUsed) {
  auto matches = lookup_wait_event("WALWriteLock");
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_TRUE(matches[0].old_name);
  EXPECT_EQ(matches[0].matched.type, "LWLock");  // 10-12, the most recent spelling
  EXPECT_EQ(matches[0].matched.first_version, 10);
  EXPECT_EQ(matches[0].matched.last_version, 12);

  matches = lookup_wait_event("LWLockNamed | WALWriteLock");
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].matched.type, "LWLockNamed");
  EXPECT_EQ(matches[0].matched.last_version, 9);

  matches = lookup_wait_event("LWLock | WALWrite");
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_FALSE(matches[0].old_name);
}

TEST(WaitEventReference, LookupIgnoresCaseAndAcceptsSeparators) {
  for (const std::string query :
       {"LWLock | WALWrite", "LWLock|WALWrite", "LWLock:WALWrite", "lwlock: walwrite",
        "LWLOCK WALWRITE", "  LWLock  |  WALWrite ", "LWLockNamed | WALWrite"}) {
    const auto matches = lookup_wait_event(query);
    ASSERT_EQ(matches.size(), 1u) << query;
    EXPECT_EQ(canonical_of(*matches[0].info), (TypeAndName{"LWLock", "WALWrite"})) << query;
  }
  EXPECT_EQ(canonical_wait_event("clientread"), (TypeAndName{"Client", "ClientRead"}));
  EXPECT_EQ(canonical_wait_event("Kernel | Uninterruptible"),
            (TypeAndName{"Kernel", "uninterruptible"}));
  EXPECT_EQ(canonical_wait_event("sleeping (no wait event)"),
            (TypeAndName{"Kernel", "sleeping (no wait event)"}));
  EXPECT_EQ(canonical_wait_event("cpu"), (TypeAndName{"CPU", "CPU"}));
  EXPECT_EQ(canonical_wait_event("Lock transactionid"), (TypeAndName{"Lock", "transactionid"}));
  EXPECT_EQ(canonical_wait_event("XactSLRULock"), (TypeAndName{"LWLock", "XactSLRU"}));
  EXPECT_EQ(canonical_wait_event("data file read"), (TypeAndName{"IO", "DataFileRead"}));
  EXPECT_TRUE(lookup_wait_event("").empty());
  EXPECT_TRUE(lookup_wait_event("LWLock |").empty());
  EXPECT_TRUE(lookup_wait_event("NoSuchWaitEvent").empty());
  EXPECT_TRUE(lookup_wait_event("IO | ClientRead").empty());
}

TEST(WaitEventReference, AmbiguousBareNamesReturnEveryMatch) {
  auto canonical_set = [](std::string_view query) {
    std::set<TypeAndName> found;
    for (const auto& match : lookup_wait_event(query)) found.insert(canonical_of(*match.info));
    return found;
  };
  EXPECT_EQ(canonical_set("WALWrite"),
            (std::set<TypeAndName>{{"LWLock", "WALWrite"}, {"IO", "WalWrite"}}));
  EXPECT_EQ(canonical_set("SyncRep"),
            (std::set<TypeAndName>{{"LWLock", "SyncRep"}, {"IPC", "SyncRep"}}));
  // Activity RecoveryWalStream today; in 10-12 the name meant what is now a Timeout.
  EXPECT_EQ(canonical_set("RecoveryWalStream"),
            (std::set<TypeAndName>{{"Activity", "RecoveryWalStream"},
                                   {"Timeout", "RecoveryRetrieveRetryInterval"}}));
  const auto matches = lookup_wait_event("RecoveryWalStream");
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_FALSE(matches[0].old_name);  // today's name first
  EXPECT_TRUE(matches[1].old_name);
  EXPECT_EQ(canonical_wait_event("WALWrite"), std::nullopt);
  EXPECT_EQ(canonical_wait_event("SyncRep"), std::nullopt);
}

TEST(WaitEventReference, FindsNamesAsEachReleaseReportsThem) {
  const WaitEventInfo* wal_write = find_wait_event("IO", "WalWrite");
  ASSERT_NE(wal_write, nullptr);
  EXPECT_EQ(find_wait_event("IO", "WALWrite", 15), wal_write);
  EXPECT_EQ(find_wait_event("IO", "WALWrite"), wal_write);
  EXPECT_EQ(find_wait_event("IO", "WALWrite", 17), nullptr);
  EXPECT_EQ(find_wait_event("IO", "WalWrite", 15), nullptr);
  EXPECT_EQ(find_wait_event("IO", "walwrite"), nullptr);  // exact, as the server reports it

  const WaitEventInfo* offsets = find_wait_event("LWLock", "MultiXactOffsetSLRU");
  ASSERT_NE(offsets, nullptr);
  EXPECT_EQ(find_wait_event("LWLock", "MultixactOffsetSLRU", 17), offsets);
  EXPECT_EQ(reported_name(*offsets, 16)->name, "MultiXactOffsetSLRU");
  EXPECT_EQ(reported_name(*offsets, 17)->name, "MultixactOffsetSLRU");

  const WaitEventInfo* stream = find_wait_event("Activity", "RecoveryWalStream");
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->type, "Activity");
  EXPECT_EQ(find_wait_event("LWLock", "WALWriteLock")->name, "WALWrite");
  EXPECT_EQ(find_wait_event("LWLock", "Checkpoint", 14), nullptr);  // removed in 14
  EXPECT_NE(find_wait_event("LWLock", "Checkpoint", 13), nullptr);
  EXPECT_NE(find_wait_event("CPU", "CPU"), nullptr);
  EXPECT_NE(find_wait_event("LWLock", "pg_stat_statements", 15), nullptr);
}

TEST(WaitEventReference, RequiredHintsArePresent) {
  const std::vector<std::string> needed = {"LWLock | WALWrite",
                                           "LWLock | WALInsert",
                                           "IO | WALSync",
                                           "IO | WALWrite",
                                           "IO | DataFileRead",
                                           "IO | DataFileWrite",
                                           "IO | DataFileExtend",
                                           "IO | DataFileFlush",
                                           "IO | DataFileSync",
                                           "Lock | transactionid",
                                           "Lock | tuple",
                                           "Lock | relation",
                                           "Lock | extend",
                                           "LWLock | XactSLRU",
                                           "LWLock | ProcArray",
                                           "LWLock | BufferContent",
                                           "LWLock | BufferMapping",
                                           "LWLock | LockManager",
                                           "LWLock | SubtransSLRU",
                                           "LWLock | MultiXactGen",
                                           "LWLock | MultiXactOffsetSLRU",
                                           "LWLock | MultiXactMemberSLRU",
                                           "LWLock | MultiXactOffsetBuffer",
                                           "LWLock | MultiXactMemberBuffer",
                                           "Client | ClientRead",
                                           "Client | ClientWrite",
                                           "IPC | ProcArrayGroupUpdate",
                                           "IPC | XactGroupUpdate",
                                           "IPC | SyncRep",
                                           "IPC | BgWorkerShutdown",
                                           "IPC | ParallelFinish",
                                           "Timeout | VacuumDelay",
                                           "Timeout | CheckpointWriteDelay",
                                           "Activity | WalWriterMain",
                                           "BufferPin | BufferPin",
                                           "CPU | CPU",
                                           "Kernel | uninterruptible",
                                           "Kernel | sleeping (no wait event)"};
  for (const auto& query : needed) {
    const auto matches = lookup_wait_event(query);
    ASSERT_EQ(matches.size(), 1u) << query;
    EXPECT_GT(matches[0].info->hint.size(), 40u) << query;
  }
  const std::string_view client_read = find_wait_event("Client", "ClientRead")->hint;
  EXPECT_THAT(std::string(client_read), HasSubstr("pgbench"));
  EXPECT_THAT(std::string(client_read), HasSubstr("kernel"));
  EXPECT_THAT(std::string(client_read), HasSubstr("idle"));
}

TEST(WaitEventReference, TypeMeanings) {
  EXPECT_FALSE(wait_event_type_meaning("InjectionPoint").empty());
  EXPECT_FALSE(wait_event_type_meaning("lwlocktranche").empty());
  EXPECT_FALSE(wait_event_type_meaning("Kernel").empty());
  EXPECT_TRUE(wait_event_type_meaning("Nonsense").empty());
}

TEST(WaitEventReference, VersionLabels) {
  EXPECT_EQ(version_range_label(9, 12), "9.6-12");
  EXPECT_EQ(version_range_label(9, 9), "9.6 only");
  EXPECT_EQ(version_range_label(14, 14), "14 only");
  EXPECT_EQ(version_range_label(13, 0), "13-18");
  EXPECT_EQ(version_range_label(15, 16), "15-16");
}

TEST(WaitEventExplanation, ShowsNamesVersionsMeaningAndHint) {
  const auto matches = lookup_wait_event("WALWriteLock");
  ASSERT_EQ(matches.size(), 1u);
  const std::string text = render_wait_event_explanation(matches[0]);
  EXPECT_THAT(text, HasSubstr("LWLock | WALWrite\n"));
  EXPECT_THAT(text, HasSubstr("PostgreSQL 13-18 (13 is the oldest release covered)\n"));
  EXPECT_THAT(text, HasSubstr("old names:\n    LWLockNamed | WALWriteLock (9.6 only)\n"));
  EXPECT_THAT(text, HasSubstr("\n    LWLock | WALWriteLock (10-12)\n"));
  EXPECT_THAT(text, HasSubstr(" LWLock | WALWriteLock.\n"));
  EXPECT_THAT(text, HasSubstr("\"WALWriteLock\" is an old name"));
  EXPECT_THAT(text, HasSubstr("Meaning: A process waits for the lock that serializes"));
  EXPECT_THAT(text, HasSubstr("Usual causes and what helps:"));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
}

TEST(WaitEventExplanation, PrefersTheServersDescription) {
  const auto matches = lookup_wait_event("IO | DataFileRead");
  ASSERT_EQ(matches.size(), 1u);
  const std::string ours = std::string(matches[0].info->meaning.substr(0, 30));
  const std::string text =
      render_wait_event_explanation(matches[0], "Waiting for a read from a relation data file.");
  EXPECT_THAT(text, HasSubstr("Meaning (from the server): Waiting for a read from a relation"));
  EXPECT_THAT(text, Not(HasSubstr(ours)));
  EXPECT_THAT(text, Not(HasSubstr("old name")));
  EXPECT_THAT(render_wait_event_explanation(matches[0], "  "), HasSubstr(ours));
}

TEST(WaitEventExplanation, PseudoEventsSayTheyAreOurs) {
  const auto matches = lookup_wait_event("Kernel | uninterruptible");
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_THAT(render_wait_event_explanation(matches[0]), HasSubstr("pgwaitprof's own category"));
}

}  // namespace
}  // namespace pgwaitprof::model
