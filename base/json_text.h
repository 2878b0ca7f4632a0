// JSON as text for every file and message pgwaitprof writes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pgwaitprof::base {

// JSON text: nlohmann's escaping (quotes, backslashes and control characters as \u escapes),
// with bytes that are not valid UTF-8 replaced by U+FFFD instead of throwing, so that a label
// or a server's string cannot make a report, a listing or an index unwritable. `indent` as
// nlohmann::json::dump (-1: one line).
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pgwaitprof::base
