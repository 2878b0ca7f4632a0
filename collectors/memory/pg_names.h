// What pg_stat_activity would print for the numbers the memory source reads: the wait event type
// and name of a wait_event_info, the backend type of st_backendType, the state of st_state.
// Built once per attachment from the layout's constants and the wait-event reference
// (model/wait_events.h) of that major; pure and tested on the generated tables.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collectors/memory/pg_layout.h"

namespace pgwaitprof::collectors::memory {

struct WaitName {
  std::string_view type;  // "" for no wait (wait_event_info 0)
  std::string_view name;
};

// From 17 on, the server names a wait event after its constant (WAIT_EVENT_WAL_WRITE: WalWrite).
inline constexpr int kNamedAfterConstants = 17;

class PgNames {
 public:
  explicit PgNames(const PgLayout& layout);

  // As pgstat_get_wait_event_type() and pgstat_get_wait_event() would name it. An LWLock
  // tranche of an extension is "extension" (what a backend that has not registered it shows);
  // a number the headers do not list is "unknown".
  WaitName wait_event(uint32_t wait_event_info) const;
  // As pg_stat_activity.backend_type; a background worker is "background worker" (its own
  // type name lives outside the two arrays the source reads).
  std::string_view backend_type(uint32_t code) const;
  // As pg_stat_activity.state; "" where it is NULL (STATE_UNDEFINED).
  std::string_view state(uint32_t code) const;
  uint32_t backend_type_code(std::string_view constant) const;  // B_BACKEND -> its value

  // The constants of the layout that could not be named (for the tests: empty when the
  // reference and the tables below cover the headers).
  const std::vector<std::string>& unnamed() const { return unnamed_; }
  // The wait-event constants the reference does not know, named after the constant as the
  // server does from 17 on (empty for every major the reference covers).
  const std::vector<std::string>& derived() const { return derived_; }

 private:
  std::unordered_map<uint32_t, WaitName> waits_;
  std::unordered_map<uint32_t, std::string_view> backend_types_;
  std::unordered_map<uint32_t, std::string_view> states_;
  std::unordered_map<std::string_view, uint32_t> backend_type_codes_;
  uint32_t lwlock_class_ = 0;
  uint32_t first_user_tranche_ = 0;
  uint32_t buffer_class_ = 0;
  std::string_view buffer_class_type_;
  std::vector<std::string> unnamed_;
  std::vector<std::string> derived_;
  // Names made from constants (17+), which waits_ points into: a deque keeps them in place.
  std::deque<std::string> derived_names_;
};

}  // namespace pgwaitprof::collectors::memory
