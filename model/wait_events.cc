// The wait event reference: the table (wait_events_data.inc), name lookups tolerant of how people
// type and quote wait events, and the text of `pgwaitprof explain`.
#include "model/wait_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

namespace pgwaitprof::model {
namespace {

struct RawEntry {
  std::string_view type;
  std::string_view name;
  int first_version;
  int last_version;
  WaitEventOrigin origin;
  std::string_view meaning;
  std::string_view hint;
};

struct RawOldName {
  std::string_view type;  // today's type and name of the event
  std::string_view name;
  WaitEventName old;
};

#include "model/wait_events_data.inc"

struct TypeMeaning {
  std::string_view type;
  std::string_view meaning;
};

constexpr std::array kTypeMeanings = {
    TypeMeaning{"Activity", "A background process is idle in its main loop, waiting for work."},
    TypeMeaning{"BufferPin", "A process waits to have a shared buffer to itself."},
    TypeMeaning{"Client",
                "A process waits for its client (or, for replication, the other server)."},
    TypeMeaning{"Extension",
                "A process waits inside an extension; since PostgreSQL 17 extensions "
                "can name their own events of this type."},
    TypeMeaning{"InjectionPoint",
                "A process waits at an injection point, a test hook of "
                "PostgreSQL 17 builds; the names are the test's own."},
    TypeMeaning{"IO", "A process waits for a file operation to complete."},
    TypeMeaning{"IPC", "A process waits for another process to do something."},
    TypeMeaning{"Lock",
                "A process waits for a heavyweight lock; the name is the kind of object "
                "locked (pg_locks.locktype)."},
    TypeMeaning{"LWLock",
                "A process waits for a lightweight lock protecting a shared-memory "
                "structure; extensions' locks are named after their tranche."},
    TypeMeaning{"LWLockNamed",
                "PostgreSQL 9.6's type for individually named lightweight locks; "
                "LWLock since 10."},
    TypeMeaning{"LWLockTranche",
                "PostgreSQL 9.6's type for groups (tranches) of lightweight "
                "locks; LWLock since 10."},
    TypeMeaning{"Timeout", "A process sleeps on purpose for a while."},
    TypeMeaning{"CPU", "pgwaitprof: an active backend that reports no wait event."},
    TypeMeaning{"Kernel",
                "pgwaitprof: an active backend with no wait event that the kernel "
                "reports as blocked (state D or S in /proc)."},
};

std::vector<WaitEventInfo> build_reference() {
  std::vector<WaitEventInfo> reference;
  reference.reserve(std::size(kEntries));
  for (const RawEntry& raw : kEntries) {
    reference.push_back(WaitEventInfo{raw.type,
                                      raw.name,
                                      raw.meaning,
                                      raw.hint,
                                      raw.first_version,
                                      raw.last_version,
                                      raw.origin,
                                      {}});
  }
  for (const RawOldName& raw : kOldNames) {
    auto entry = std::find_if(reference.begin(), reference.end(), [&](const WaitEventInfo& info) {
      return info.type == raw.type && info.name == raw.name;
    });
    // A typo in the table would silently drop an old name; the unit tests build the table.
    if (entry == reference.end()) {
      throw std::logic_error(
          fmt::format("old wait event name \"{}\" refers to unknown event \"{} | {}\"",
                      raw.old.name, raw.type, raw.name));
    }
    entry->old_names.push_back(raw.old);
  }
  return reference;
}

char fold(char character) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(character)));
}

bool iequals(std::string_view left, std::string_view right) {
  return left.size() == right.size() &&
         std::equal(left.begin(), left.end(), right.begin(),
                    [](char a, char b) { return fold(a) == fold(b); });
}

// Lowercase letters and digits only: "wal_insert", "WAL Insert" and "WALInsert" all agree.
std::string loose(std::string_view text) {
  std::string folded;
  for (char character : text) {
    if (std::isalnum(static_cast<unsigned char>(character)) != 0) folded += fold(character);
  }
  return folded;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

bool is_lwlock_family(std::string_view type) {
  return iequals(type, "LWLock") || iequals(type, "LWLockNamed") || iequals(type, "LWLockTranche");
}

bool is_known_type(std::string_view type) {
  return std::any_of(kTypeMeanings.begin(), kTypeMeanings.end(),
                     [&](const TypeMeaning& known) { return iequals(known.type, type); });
}

// LWLockNamed and LWLockTranche of 9.6 became LWLock: a user quoting either means any of them.
bool type_matches(std::string_view query_type, std::string_view type) {
  if (query_type.empty()) return true;
  if (is_lwlock_family(query_type)) return is_lwlock_family(type);
  return iequals(query_type, type);
}

struct ParsedQuery {
  std::string_view type;  // empty for a bare name
  std::string_view name;
};

ParsedQuery parse_query(std::string_view query) {
  query = trim(query);
  for (char separator : {'|', ':'}) {
    const auto at = query.find(separator);
    if (at != std::string_view::npos) {
      return {trim(query.substr(0, at)), trim(query.substr(at + 1))};
    }
  }
  // "LWLock WALWrite": split on the first blank only when what precedes it is a type, so that
  // names with blanks ("sleeping (no wait event)") still work bare.
  const auto blank = query.find_first_of(" \t");
  if (blank != std::string_view::npos && is_known_type(query.substr(0, blank))) {
    return {query.substr(0, blank), trim(query.substr(blank))};
  }
  return {{}, query};
}

using NameEquals = bool (*)(std::string_view, std::string_view);

std::vector<WaitEventMatch> match_all(const ParsedQuery& query, NameEquals equals) {
  std::vector<WaitEventMatch> current;
  std::vector<WaitEventMatch> old;
  for (const WaitEventInfo& info : wait_event_reference()) {
    const bool today = type_matches(query.type, info.type) && equals(query.name, info.name);
    // "WALWriteLock" was LWLockNamed in 9.6 and LWLock in 10-12: report the type the user
    // wrote if any, else the most recent release's spelling.
    const WaitEventName* best = nullptr;
    for (const WaitEventName& name : info.old_names) {
      if (!type_matches(query.type, name.type) || !equals(query.name, name.name)) continue;
      const bool exact_type = !query.type.empty() && iequals(query.type, name.type);
      const bool best_exact_type =
          best != nullptr && !query.type.empty() && iequals(query.type, best->type);
      if (best == nullptr || (exact_type && !best_exact_type) ||
          (exact_type == best_exact_type && name.last_version > best->last_version)) {
        best = &name;
      }
    }
    // Names that differ only in case (IO WALWrite until 16, WalWrite since 17): the user's
    // exact spelling decides whether an old name was meant.
    if (today && (best == nullptr || query.name != best->name || query.name == info.name)) {
      current.push_back(
          {&info, false, {info.type, info.name, info.first_version, info.last_version}});
    } else if (best != nullptr) {
      old.push_back({&info, true, *best});
    }
  }
  current.insert(current.end(), old.begin(), old.end());
  return current;
}

// Word-wraps one paragraph at `width` columns; continuation lines get `indent`. "type | name"
// is never split across lines.
void append_wrapped(std::string& out, std::string_view first_prefix, std::string_view text,
                    std::size_t width = 80, std::string_view indent = "  ") {
  std::vector<std::string> words;
  bool glue_next = false;
  std::size_t position = 0;
  while (position < text.size()) {
    const auto end = std::min(text.find(' ', position), text.size());
    const std::string_view word = text.substr(position, end - position);
    position = end + 1;
    if (word.empty()) continue;
    if (word == "|" && !words.empty()) {
      words.back() += " |";
      glue_next = true;
    } else if (glue_next) {
      words.back() += ' ';
      words.back() += word;
      glue_next = false;
    } else {
      words.emplace_back(word);
    }
  }
  std::string line(first_prefix);
  bool line_has_words = false;
  for (const std::string& word : words) {
    if (line_has_words && line.size() + 1 + word.size() > width) {
      out += line;
      out += '\n';
      line = indent;
      line_has_words = false;
    }
    if (line_has_words || (!line.empty() && line.back() != ' ')) line += ' ';
    line += word;
    line_has_words = true;
  }
  out += line;
  out += '\n';
}

std::string old_name_label(const WaitEventName& name) {
  return fmt::format("{} | {} ({})", name.type, name.name,
                     version_range_label(name.first_version, name.last_version));
}

}  // namespace

const std::vector<WaitEventInfo>& wait_event_reference() {
  static const std::vector<WaitEventInfo> reference = build_reference();
  return reference;
}

bool exists_in(const WaitEventInfo& info, int version) {
  if (info.origin != WaitEventOrigin::kCore) return true;
  return info.first_version <= version && (info.last_version == 0 || version <= info.last_version);
}

std::optional<WaitEventName> reported_name(const WaitEventInfo& info, int version) {
  if (!exists_in(info, version)) return std::nullopt;
  for (const WaitEventName& name : info.old_names) {
    if (name.first_version <= version && version <= name.last_version) return name;
  }
  return WaitEventName{info.type, info.name, info.first_version, info.last_version};
}

const WaitEventInfo* find_wait_event(std::string_view type, std::string_view name,
                                     std::optional<int> version) {
  const auto& reference = wait_event_reference();
  if (version) {
    for (const WaitEventInfo& info : reference) {
      const auto reported = reported_name(info, *version);
      if (reported && reported->type == type && reported->name == name) return &info;
    }
    return nullptr;
  }
  for (const WaitEventInfo& info : reference) {
    if (info.type == type && info.name == name) return &info;
  }
  // Old spellings of covered releases first (a PostgreSQL 15 server's IO WALWrite), then 9.6-12.
  for (const bool covered : {true, false}) {
    for (const WaitEventInfo& info : reference) {
      for (const WaitEventName& old : info.old_names) {
        if ((old.last_version >= kOldestCoveredVersion) == covered && old.type == type &&
            old.name == name) {
          return &info;
        }
      }
    }
  }
  return nullptr;
}

std::vector<WaitEventMatch> lookup_wait_event(std::string_view query) {
  const ParsedQuery parsed = parse_query(query);
  if (parsed.name.empty()) return {};
  auto matches = match_all(parsed, iequals);
  if (!matches.empty()) return matches;
  const std::string wanted = loose(parsed.name);
  matches = match_all({parsed.type, wanted}, [](std::string_view folded, std::string_view name) {
    return folded == loose(name);
  });
  if (!matches.empty()) return matches;
  // People write the source's lock names ("XactSLRULock", "BufferMappingLock") that were never
  // reported with that suffix.
  if (wanted.size() > 4 && wanted.ends_with("lock")) {
    const std::string without_suffix = wanted.substr(0, wanted.size() - 4);
    matches = match_all(
        {parsed.type, without_suffix},
        [](std::string_view folded, std::string_view name) { return folded == loose(name); });
  }
  return matches;
}

std::optional<std::pair<std::string, std::string>> canonical_wait_event(std::string_view query) {
  const auto matches = lookup_wait_event(query);
  if (matches.size() != 1) return std::nullopt;
  return std::pair{std::string(matches.front().info->type),
                   std::string(matches.front().info->name)};
}

std::string_view wait_event_type_meaning(std::string_view type) {
  for (const TypeMeaning& known : kTypeMeanings) {
    if (iequals(known.type, type)) return known.meaning;
  }
  return {};
}

std::string version_range_label(int first_version, int last_version) {
  const auto label = [](int version) {
    return version == 9 ? std::string("9.6") : std::to_string(version);
  };
  const int last = last_version == 0 ? kNewestCoveredVersion : last_version;
  if (first_version == last) return label(first_version) + " only";
  return label(first_version) + "-" + label(last);
}

std::string wait_event_meaning(std::string_view type, std::string_view name, int server_version_num,
                               const std::map<std::string, std::string>& server_descriptions) {
  const auto described = server_descriptions.find(std::string(type) + " | " + std::string(name));
  if (described != server_descriptions.end()) return described->second;
  const int major = server_version_num >= 100000 ? server_version_num / 10000 : 0;
  const WaitEventInfo* info = nullptr;
  if (major >= kOldestCoveredVersion) info = find_wait_event(type, name, major);
  if (info == nullptr) info = find_wait_event(type, name);
  if (info != nullptr) return std::string(info->meaning);
  return std::string(wait_event_type_meaning(type));
}

std::string render_wait_event_explanation(const WaitEventMatch& match,
                                          std::optional<std::string_view> server_description) {
  const WaitEventInfo& info = *match.info;
  std::string out = fmt::format("{} | {}\n", info.type, info.name);
  switch (info.origin) {
    case WaitEventOrigin::kCore:
      out += fmt::format(
          "  PostgreSQL {}{}\n", version_range_label(info.first_version, info.last_version),
          info.first_version == kOldestCoveredVersion
              ? fmt::format(" ({} is the oldest release covered)", kOldestCoveredVersion)
              : std::string());
      break;
    case WaitEventOrigin::kExtension:
      out += "  registered by an extension, not by PostgreSQL itself\n";
      break;
    case WaitEventOrigin::kPgwaitprof:
      out += "  pgwaitprof's own category, not a PostgreSQL wait event\n";
      break;
  }
  if (!info.old_names.empty()) {
    out += "  old names:\n";
    for (const WaitEventName& name : info.old_names) {
      out += fmt::format("    {}\n", old_name_label(name));
    }
  }
  if (match.old_name) {
    append_wrapped(
        out, "  ",
        fmt::format("\"{}\" is an old name: PostgreSQL {} reported this event as {} "
                    "| {}.",
                    match.matched.name,
                    version_range_label(match.matched.first_version, match.matched.last_version),
                    match.matched.type, match.matched.name),
        80, "  ");
  }
  out += '\n';
  if (server_description && !trim(*server_description).empty()) {
    append_wrapped(out, "Meaning (from the server):", trim(*server_description));
  } else {
    append_wrapped(out, "Meaning:", info.meaning);
  }
  if (!info.hint.empty()) {
    out += '\n';
    append_wrapped(out, "Usual causes and what helps:", info.hint);
  }
  return out;
}

}  // namespace pgwaitprof::model
