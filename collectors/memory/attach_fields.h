// What the attach steps (memory_attach.cc) and their live checks (memory_live_check.cc) read
// the same way: a field of bytes copied from the server's memory, and an integer of a query's
// text result.
#pragma once

#include <charconv>
#include <cstring>
#include <string_view>
#include <system_error>
#include <vector>

namespace pgwaitprof::collectors::memory {

// The T at `offset` of `bytes`; the caller has checked that it lies inside them.
template <typename T>
T field_at(const std::vector<char>& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// The whole of `text` as an integer; false when it is not one.
template <typename Integer>
bool parse_integer(std::string_view text, Integer& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace pgwaitprof::collectors::memory
