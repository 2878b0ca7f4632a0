// postgresql.auto.conf's entries and the statements that put them back.
#include "daemon/engine/auto_conf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "collectors/pg_session.h"

namespace pgwaitprof::engine {
namespace {

// Settings whose ALTER SYSTEM value is a list of identifiers, each quoted by the server when it
// is not a plain one (GUC_LIST_QUOTE): set again element by element so the file reads the same.
bool list_quoted(std::string_view name) {
  for (const char* listed : {"search_path", "temp_tablespaces", "session_preload_libraries",
                             "shared_preload_libraries", "local_preload_libraries"}) {
    if (name == listed) return true;
  }
  return false;
}

// The elements of a list setting's value as SplitIdentifierString reads it ("a, \"B c\"").
std::vector<std::string> list_elements(std::string_view value) {
  std::vector<std::string> elements;
  size_t at = 0;
  auto skip_space = [&] {
    while (at < value.size() && std::isspace(static_cast<unsigned char>(value[at]))) ++at;
  };
  while (true) {
    skip_space();
    if (at >= value.size()) break;
    std::string element;
    if (value[at] == '"') {
      for (++at; at < value.size(); ++at) {
        if (value[at] == '"') {
          if (at + 1 < value.size() && value[at + 1] == '"') {
            element += '"';
            ++at;
          } else {
            ++at;
            break;
          }
        } else {
          element += value[at];
        }
      }
    } else {
      while (at < value.size() && value[at] != ',') element += value[at++];
      while (!element.empty() && std::isspace(static_cast<unsigned char>(element.back()))) {
        element.pop_back();
      }
    }
    elements.push_back(element);
    skip_space();
    if (at < value.size() && value[at] == ',') ++at;
  }
  return elements;
}

// A setting's name in SQL: as it is when it is a plain (dotted) identifier, else quoted.
std::string setting_name_sql(std::string_view name) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char character) {
    return std::islower(static_cast<unsigned char>(character)) ||
           std::isdigit(static_cast<unsigned char>(character)) || character == '_' ||
           character == '.';
  });
  if (plain) return std::string(name);
  std::string quoted = "\"";
  for (const char character : name)
    quoted += character == '"' ? std::string("\"\"") : std::string(1, character);
  return quoted + "\"";
}

std::string set_sql(const AutoConfEntry& entry) {
  std::string value;
  if (list_quoted(entry.name)) {
    for (const auto& element : list_elements(entry.value)) {
      value += (value.empty() ? "" : ", ") + collectors::quote_literal(element);
    }
  }
  if (value.empty()) value = collectors::quote_literal(entry.value);
  return fmt::format("ALTER SYSTEM SET {} = {}", setting_name_sql(entry.name), value);
}

// The value a setting has in `entries` (the last line of a name wins, as for the server).
std::optional<std::string> value_in(const std::vector<AutoConfEntry>& entries,
                                    const std::string& name) {
  std::optional<std::string> value;
  for (const auto& entry : entries) {
    if (entry.name == name) value = entry.value;
  }
  return value;
}

}  // namespace

std::vector<std::string> replay_statements(const std::vector<AutoConfEntry>& current,
                                           const std::vector<AutoConfEntry>& original,
                                           bool keep_marker) {
  size_t same = 0;
  while (same < current.size() && same < original.size() && current[same] == original[same]) {
    ++same;
  }
  std::vector<std::string> statements;
  std::set<std::string> reset;
  bool marker = false;
  for (size_t index = same; index < current.size(); ++index) {
    const auto& name = current[index].name;
    if (name == kJournalMarker) {
      marker = true;
    } else if (reset.insert(name).second) {
      statements.push_back("ALTER SYSTEM RESET " + setting_name_sql(name));
    }
  }
  for (size_t index = same; index < original.size(); ++index) {
    statements.push_back(set_sql(original[index]));
  }
  // Last: until everything else is back, the server says a journal is unfinished.
  if (marker && !keep_marker) {
    statements.push_back(std::string("ALTER SYSTEM RESET ") + kJournalMarker);
  }
  return statements;
}

KeptChanges other_sessions_changes(
    const std::vector<AutoConfEntry>& original, const std::vector<AutoConfEntry>& current,
    const std::map<std::string, std::optional<std::string>>& applied) {
  std::set<std::string> names;
  for (const auto& entries : {&original, &current}) {
    for (const auto& entry : *entries) {
      if (entry.name != kJournalMarker) names.insert(entry.name);
    }
  }
  for (const auto& [name, value] : applied) names.insert(name);
  std::set<std::string> changed;
  for (const auto& name : names) {
    const auto touched = applied.find(name);
    const auto expected = touched != applied.end() ? touched->second : value_in(original, name);
    if (value_in(current, name) != expected) changed.insert(name);
  }
  KeptChanges kept;
  kept.target = original;
  if (changed.empty()) return kept;
  std::erase_if(kept.target,
                [&](const AutoConfEntry& entry) { return changed.contains(entry.name); });
  // Set again in the order the other session's lines have in the file now.
  std::set<std::string> appended;
  for (const auto& entry : current) {
    if (!changed.contains(entry.name) || !appended.insert(entry.name).second) continue;
    kept.target.push_back({entry.name, *value_in(current, entry.name)});
  }
  kept.names.assign(changed.begin(), changed.end());
  return kept;
}

}  // namespace pgwaitprof::engine
