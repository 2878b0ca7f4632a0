// The settings of postgresql.auto.conf as ALTER SYSTEM sees them, and the pure logic of putting
// them back: the ALTER SYSTEM statements that turn the file's entries into others, order
// included, and what another session changed while a matrix had the file in its variants' state
// (kept when the matrix restores the rest).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/engine/settings_marker.h"  // kJournalMarker

namespace pgwaitprof::engine {

// One line of postgresql.auto.conf: a setting and its value as pg_file_settings shows it.
struct AutoConfEntry {
  std::string name;  // lower case
  std::string value;
  bool operator==(const AutoConfEntry&) const = default;
};

// The ALTER SYSTEM statements that turn the file's `current` entries into `original`, order
// included: ALTER SYSTEM SET appends a setting at the end, so every setting after the first
// difference is reset and set again in the original order; the marker is reset last (kept,
// with `keep_marker`, for the byte-for-byte write that removes it). Pure.
std::vector<std::string> replay_statements(const std::vector<AutoConfEntry>& current,
                                           const std::vector<AutoConfEntry>& original,
                                           bool keep_marker = false);

// What the file is to be once a matrix's changes are undone and another session's are kept.
struct KeptChanges {
  std::vector<AutoConfEntry> target;  // `original` with the other session's changes
  std::vector<std::string> names;     // the settings another session changed; empty: none
};

// The lines another session changed while a matrix ran: a setting the matrix does not touch
// whose value differs from `original` (set, changed or reset), and a setting the matrix
// touches whose value is no longer the one the matrix last set (`applied`: per touched
// setting, its value in the file, none when reset). Their changes are applied to `original` as
// ALTER SYSTEM would (a set setting at the end, in the order `current` has them). The marker is
// ignored on both sides. Pure.
KeptChanges other_sessions_changes(
    const std::vector<AutoConfEntry>& original, const std::vector<AutoConfEntry>& current,
    const std::map<std::string, std::optional<std::string>>& applied);

}  // namespace pgwaitprof::engine
