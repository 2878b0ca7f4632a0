// Quoting values in messages.
#include "config/quote.h"

#include <fmt/format.h>

namespace pgwaitprof::config {

std::string quote(std::string_view text) {
  constexpr std::size_t kMaxShown = 80;
  std::string out = "\"";
  for (std::size_t index = 0; index < text.size(); ++index) {
    if (index == kMaxShown) {
      out += "...";
      break;
    }
    const char character = text[index];
    if (character == '\n') {
      out += "\\n";
    } else if (character == '\r') {
      out += "\\r";
    } else if (character == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(character) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(character));
    } else {
      out += character;
    }
  }
  out += '"';
  return out;
}

}  // namespace pgwaitprof::config
