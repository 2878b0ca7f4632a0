// What each wait event means: a compiled-in reference of every wait event PostgreSQL 13-18 can
// report, the old names of 9.6-12 that engineers still quote, pgwaitprof's own pseudo-events,
// and the lookups and text behind `pgwaitprof explain EVENT`. Pure data and string functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pgwaitprof::model {

// The releases the reference covers completely. Old names reach back further: in them, 9 stands
// for 9.6, the first release with wait events (no other 9.x release has any).
inline constexpr int kOldestCoveredVersion = 13;
inline constexpr int kNewestCoveredVersion = 18;

enum class WaitEventOrigin {
  kCore,        // reported by PostgreSQL itself
  kExtension,   // registered by a common extension at run time (e.g. pg_stat_statements)
  kPgwaitprof,  // pgwaitprof's own pseudo-events: CPU, Kernel
};

// A (type, name) pair as some releases reported it in pg_stat_activity.
struct WaitEventName {
  std::string_view type;
  std::string_view name;
  int first_version = 0;
  int last_version = 0;
};

struct WaitEventInfo {
  std::string_view type;  // as the newest release that has the event reports it
  std::string_view name;
  std::string_view meaning;  // one line, our own words
  std::string_view hint;     // what usually causes it in benchmarks and what helps; may be empty
  // The covered releases that have the event (under this or an old name): first_version is 13
  // for events older than 13; last_version 0 means it is still in the newest covered release.
  // Both are 0 for entries that do not depend on the server version (extension, pgwaitprof).
  int first_version = 0;
  int last_version = 0;
  WaitEventOrigin origin = WaitEventOrigin::kCore;
  // Other names of the same event, each with the releases that reported it: the 9.6-12 names
  // (WALWriteLock, wal_insert, ...) and the spellings 13-16 used before a rename (IO WALWrite
  // became IO WalWrite in 17).
  std::vector<WaitEventName> old_names;
};

struct WaitEventMatch {
  const WaitEventInfo* info = nullptr;
  bool old_name = false;  // the query named one of info->old_names, not today's name
  WaitEventName matched;  // the name the query matched, with the releases that reported it
};

// Every entry, grouped by type. Built once; the pointers stay valid for the program's life.
const std::vector<WaitEventInfo>& wait_event_reference();

// Whether a server of that major version can report the event (always true for extension and
// pgwaitprof entries).
bool exists_in(const WaitEventInfo& info, int version);

// The (type, name) a server of that major version reports for the event, if it has it.
std::optional<WaitEventName> reported_name(const WaitEventInfo& info, int version);

// The entry for a (type, name) exactly as pg_stat_activity reports it (case-sensitive). With a
// version, only what that release reports; without, today's names win over any release's old
// spelling (so "IO" "WALWrite" from a PostgreSQL 15 server finds IO WalWrite).
const WaitEventInfo* find_wait_event(std::string_view type, std::string_view name,
                                     std::optional<int> version = std::nullopt);

// What a user types: "WALWriteLock", "LWLock | WALWrite", "LWLock:WALWrite", "LWLock WALWrite",
// "LWLockNamed | WALWriteLock", "walwrite", "ClientRead". Case-insensitive; LWLockNamed and
// LWLockTranche (9.6) stand for LWLock. A bare name can match several events (LWLock WALWrite and
// IO WalWrite): all are returned, today's names first. Empty when nothing matches.
std::vector<WaitEventMatch> lookup_wait_event(std::string_view query);

// {type, name} of today's name for an old or new name, so that report and compare accept both;
// nullopt when the query matches no event or more than one.
std::optional<std::pair<std::string, std::string>> canonical_wait_event(std::string_view query);

// One line on a wait event type ("LWLock", "InjectionPoint", "Kernel", ...); empty if unknown.
// For events the reference does not list, such as custom extension events of PostgreSQL 17.
std::string_view wait_event_type_meaning(std::string_view type);

// What a (type, name) a run reported means, in one line, for legends and tooltips: the server's
// own description when it gave one (PostgreSQL 17's pg_wait_events, `server_descriptions` keyed
// "type | name"), else ours, else the type's; "" when nothing is known. `server_version_num` is
// PG_VERSION_NUM (150004), 0 when unknown.
std::string wait_event_meaning(std::string_view type, std::string_view name, int server_version_num,
                               const std::map<std::string, std::string>& server_descriptions = {});

// "9.6" for 9, "13" for 13; "13-17", "14 only" for ranges (last_version 0 = newest covered).
std::string version_range_label(int first_version, int last_version);

// The text `pgwaitprof explain EVENT` prints for one match: "type | name", the releases that
// have it, its old names, its meaning and the hint, wrapped for a terminal. A description the
// server provides (PostgreSQL 17's pg_wait_events) is shown instead of ours when given.
std::string render_wait_event_explanation(
    const WaitEventMatch& match, std::optional<std::string_view> server_description = std::nullopt);

}  // namespace pgwaitprof::model
