// The names behind PgNames. Wait events are matched to the reference by their constant's name
// (WAIT_EVENT_WAL_WRITE is IO "WALWrite" in 15 and IO "WalWrite" in 17: compared without case
// and underscores). Backend types, states and lock tags have no such reference: their strings
// are PostgreSQL's own (GetBackendTypeDesc, pg_stat_get_activity, LockTagTypeNames), keyed by
// the constant's name so that a renumbering in a new major cannot shift them.
#include "collectors/memory/pg_names.h"

#include <algorithm>
#include <cctype>

#include "model/wait_events.h"

namespace pgwaitprof::collectors::memory {
namespace {

constexpr std::pair<std::string_view, std::string_view> kBackendTypes[] = {
    {"B_INVALID", "not initialized"},
    {"B_ARCHIVER", "archiver"},
    {"B_AUTOVAC_LAUNCHER", "autovacuum launcher"},
    {"B_AUTOVAC_WORKER", "autovacuum worker"},
    {"B_BACKEND", "client backend"},
    {"B_DEAD_END_BACKEND", "dead-end client backend"},
    {"B_BG_WORKER", "background worker"},
    {"B_BG_WRITER", "background writer"},
    {"B_CHECKPOINTER", "checkpointer"},
    {"B_IO_WORKER", "io worker"},
    {"B_LOGGER", "logger"},
    {"B_SLOTSYNC_WORKER", "slotsync worker"},
    {"B_STANDALONE_BACKEND", "standalone backend"},
    {"B_STARTUP", "startup"},
    {"B_STATS_COLLECTOR", "stats collector"},
    {"B_WAL_RECEIVER", "walreceiver"},
    {"B_WAL_SENDER", "walsender"},
    {"B_WAL_SUMMARIZER", "walsummarizer"},
    {"B_WAL_WRITER", "walwriter"},
};

constexpr std::pair<std::string_view, std::string_view> kStates[] = {
    {"STATE_UNDEFINED", ""},
    {"STATE_STARTING", "starting"},
    {"STATE_IDLE", "idle"},
    {"STATE_RUNNING", "active"},
    {"STATE_IDLEINTRANSACTION", "idle in transaction"},
    {"STATE_FASTPATH", "fastpath function call"},
    {"STATE_IDLEINTRANSACTION_ABORTED", "idle in transaction (aborted)"},
    {"STATE_DISABLED", "disabled"},
};

constexpr std::pair<std::string_view, std::string_view> kLockTags[] = {
    {"LOCKTAG_RELATION", "relation"},
    {"LOCKTAG_RELATION_EXTEND", "extend"},
    {"LOCKTAG_DATABASE_FROZEN_IDS", "frozenid"},
    {"LOCKTAG_PAGE", "page"},
    {"LOCKTAG_TUPLE", "tuple"},
    {"LOCKTAG_TRANSACTION", "transactionid"},
    {"LOCKTAG_VIRTUALTRANSACTION", "virtualxid"},
    {"LOCKTAG_SPECULATIVE_TOKEN", "spectoken"},
    {"LOCKTAG_OBJECT", "object"},
    {"LOCKTAG_USERLOCK", "userlock"},
    {"LOCKTAG_ADVISORY", "advisory"},
    {"LOCKTAG_APPLY_TRANSACTION", "applytransaction"},
};

constexpr uint32_t kClassMask = 0xFF000000U;
constexpr uint32_t kEventMask = 0x0000FFFFU;

template <size_t N>
std::string_view lookup(const std::pair<std::string_view, std::string_view> (&table)[N],
                        std::string_view constant) {
  for (const auto& [name, text] : table) {
    if (name == constant) return text;
  }
  return {};
}

std::string folded(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c != '_') out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

// The type each class of utils/wait_event.h reports, by the class byte.
std::string_view class_type(uint32_t info) {
  switch (info >> 24) {
    case 0x01:
      return "LWLock";
    case 0x03:
      return "Lock";
    case 0x04:
      return "BufferPin";
    case 0x05:
      return "Activity";
    case 0x06:
      return "Client";
    case 0x07:
      return "Extension";
    case 0x08:
      return "IPC";
    case 0x09:
      return "Timeout";
    case 0x0A:
      return "IO";
    default:
      return {};
  }
}

// Constants whose words differ from the event's name, as they fold: WAIT_EVENT_MQ_SEND is
// "MessageQueueSend", WAIT_EVENT_WAL_SENDER_WAIT_WAL "WalSenderWaitForWAL", LWTRANCHE_LAUNCHER_DSA
// "LogicalRepLauncherDSA".
constexpr std::pair<std::string_view, std::string_view> kFoldedAliases[] = {
    {"MQ", "MESSAGEQUEUE"},
    {"WALSENDERWAITWAL", "WALSENDERWAITFORWAL"},
    {"LAUNCHER", "LOGICALREPLAUNCHER"},
};

// The reference's name of WAIT_EVENT_<SUFFIX> of `type` in `major`, matched on the folded name;
// else as the nearest major on the same side of 17's renaming spells it (minor releases add
// events: RegisterSyncRequest came to 13 after 13.1, which the reference was taken from).
std::string_view reference_name(std::string_view type, std::string_view constant, int major) {
  auto wanted = folded(constant.substr(std::string_view("WAIT_EVENT_").size()));
  for (const auto& [from, to] : kFoldedAliases) {
    if (wanted.starts_with(from)) wanted = std::string(to) + wanted.substr(from.size());
  }
  for (int distance = 0; distance <= 6; ++distance) {
    for (const int candidate : {major - distance, major + distance}) {
      if ((candidate >= kNamedAfterConstants) != (major >= kNamedAfterConstants)) continue;
      for (const auto& info : model::wait_event_reference()) {
        const auto reported = model::reported_name(info, candidate);
        if (reported && reported->type == type && folded(reported->name) == wanted) {
          return reported->name;
        }
      }
    }
  }
  return {};
}

// 17+ name an event after its constant, as generate-wait_event_types.pl does: WAL_WRITE is
// "WalWrite". For events of a major newer than the reference (19's Buffer class).
std::string camel_case(std::string_view constant) {
  std::string name;
  bool upper = true;
  for (const char c : constant.substr(std::string_view("WAIT_EVENT_").size())) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c))
                                    : std::tolower(static_cast<unsigned char>(c)));
    upper = false;
  }
  return name;
}

std::string_view or_unknown(std::string_view name) {
  return name.empty() ? std::string_view("unknown") : name;
}

}  // namespace

PgNames::PgNames(const PgLayout& layout)
    : lwlock_class_(layout.wait_class_lwlock),
      first_user_tranche_(static_cast<uint32_t>(layout.first_user_tranche)),
      buffer_class_(layout.wait_class_buffer),
      buffer_class_type_(layout.buffer_class_type) {
  for (const auto& event : layout.wait_events) {
    const auto type =
        (event.value & kClassMask) == buffer_class_ ? buffer_class_type_ : class_type(event.value);
    std::string_view name = reference_name(type, event.name, layout.major);
    if (name.empty() && layout.major >= kNamedAfterConstants) {
      name = derived_names_.emplace_back(camel_case(event.name));
      derived_.emplace_back(event.name);
    }
    if (name.empty()) unnamed_.emplace_back(event.name);
    waits_[event.value] = {type, or_unknown(name)};
  }
  for (const auto& lock : layout.individual_lwlocks) {
    waits_[layout.wait_class_lwlock | lock.value] = {"LWLock", lock.name};
  }
  for (const auto& tranche : layout.tranches) {
    // LWTRANCHE_WAL_INSERT is LWLock "WALInsert": the reference knows it as an LWLock event.
    const auto constant = std::string("WAIT_EVENT_") + std::string(tranche.name.substr(10));
    std::string_view name = reference_name("LWLock", constant, layout.major);
    if (name.empty() && layout.major >= kNamedAfterConstants) {
      name = derived_names_.emplace_back(camel_case(constant));
      derived_.emplace_back(tranche.name);
    }
    if (name.empty()) unnamed_.emplace_back(tranche.name);
    waits_[layout.wait_class_lwlock | tranche.value] = {"LWLock", or_unknown(name)};
  }
  for (const auto& tag : layout.lock_tags) {
    const auto name = lookup(kLockTags, tag.name);
    if (name.empty()) unnamed_.emplace_back(tag.name);
    waits_[layout.wait_class_lock | tag.value] = {"Lock", or_unknown(name)};
  }
  // Up to 16 the buffer pin wait is the class alone (event id 0), with no enum.
  waits_.try_emplace(layout.wait_class_buffer, WaitName{layout.buffer_class_type, "BufferPin"});
  waits_[layout.wait_class_extension] = {"Extension", "Extension"};
  for (const auto& type : layout.backend_types) {
    const auto name = lookup(kBackendTypes, type.name);
    if (name.empty()) unnamed_.emplace_back(type.name);
    backend_types_[type.value] = or_unknown(name);
    backend_type_codes_[type.name] = type.value;
  }
  for (const auto& state : layout.states) {
    const auto it = std::find_if(std::begin(kStates), std::end(kStates),
                                 [&](const auto& entry) { return entry.first == state.name; });
    if (it == std::end(kStates)) unnamed_.emplace_back(state.name);
    states_[state.value] = it == std::end(kStates) ? std::string_view("unknown") : it->second;
  }
}

WaitName PgNames::wait_event(uint32_t wait_event_info) const {
  if (wait_event_info == 0) return {};
  if (const auto it = waits_.find(wait_event_info); it != waits_.end()) return it->second;
  const auto type = (wait_event_info & kClassMask) == buffer_class_
                        ? buffer_class_type_
                        : class_type(wait_event_info & kClassMask);
  if ((wait_event_info & kClassMask) == lwlock_class_ &&
      (wait_event_info & kEventMask) >= first_user_tranche_) {
    return {type, "extension"};
  }
  return {type.empty() ? std::string_view("unknown") : type, "unknown"};
}

std::string_view PgNames::backend_type(uint32_t code) const {
  const auto it = backend_types_.find(code);
  return it == backend_types_.end() ? std::string_view("unknown") : it->second;
}

std::string_view PgNames::state(uint32_t code) const {
  const auto it = states_.find(code);
  return it == states_.end() ? std::string_view("unknown") : it->second;
}

uint32_t PgNames::backend_type_code(std::string_view constant) const {
  const auto it = backend_type_codes_.find(constant);
  return it == backend_type_codes_.end() ? UINT32_MAX : it->second;
}

}  // namespace pgwaitprof::collectors::memory
