// The shared formatting helpers of the exporters; see text_format.h.
#include "exporters/render/text_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <utility>

namespace pgwaitprof::exporters::text_format {

namespace {

// The entity of a character HTML reads as markup; quotes only where `quotes` (attributes).
const char* html_entity(char c, bool quotes) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return quotes ? "&quot;" : nullptr;
    case '\'':
      return quotes ? "&#39;" : nullptr;
    default:
      return nullptr;
  }
}

// One character of UTF-8 at the start of `text`: its code point and length in bytes; length 0
// when the bytes there are not valid UTF-8 (a stray continuation byte, an overlong form, a
// surrogate, a code point past U+10FFFF, a sequence cut short).
struct Utf8Char {
  char32_t code_point = 0;
  size_t length = 0;
};

Utf8Char next_utf8(std::string_view text) {
  const auto byte = [&](size_t at) { return static_cast<unsigned char>(text[at]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  size_t length = 0;
  unsigned char low = 0x80;  // the range of the second byte, narrower after some leads
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // past U+10FFFF
  } else {
    return {};
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) return {};
  char32_t code_point = lead & (0xFF >> (length + 1));
  for (size_t at = 1; at < length; ++at) {
    if ((byte(at) & 0xC0) != 0x80) return {};
    code_point = (code_point << 6) | (byte(at) & 0x3F);
  }
  return {code_point, length};
}

// The characters text_escape writes out beyond C0 and DEL: C1 controls, the line and paragraph
// separators, and the bidirectional controls (which reorder the rest of a line as displayed).
bool is_unicode_control(char32_t code_point) {
  return (code_point >= 0x80 && code_point <= 0x9F) || code_point == 0x2028 ||
         code_point == 0x2029 || code_point == 0x061C || code_point == 0x200E ||
         code_point == 0x200F || (code_point >= 0x202A && code_point <= 0x202E) ||
         (code_point >= 0x2066 && code_point <= 0x2069);
}

// Calls `keep(bytes)` for each run of text to keep as it is, and `control(written, blank)` for
// each control character or invalid byte with text_escape's spelling of it; `blank` for a line
// break, carriage return or tab, which Markdown shows as a space.
template <typename Keep, typename Control>
void scan_controls(std::string_view text, Keep keep, Control control) {
  size_t kept = 0;  // start of the pending run of ordinary text
  size_t at = 0;
  while (at < text.size()) {
    const Utf8Char next = next_utf8(text.substr(at));
    std::string written;
    if (next.length == 0) {
      written = fmt::format("\\x{:02x}", static_cast<unsigned char>(text[at]));
    } else if (next.code_point == '\n') {
      written = "\\n";
    } else if (next.code_point == '\r') {
      written = "\\r";
    } else if (next.code_point == '\t') {
      written = "\\t";
    } else if (next.code_point < 0x20 || next.code_point == 0x7F) {
      written = fmt::format("\\x{:02x}", static_cast<unsigned>(next.code_point));
    } else if (is_unicode_control(next.code_point)) {
      written = fmt::format("\\u{:04x}", static_cast<unsigned>(next.code_point));
    } else {
      at += next.length;
      continue;
    }
    keep(text.substr(kept, at - kept));
    const bool blank = next.length > 0 && (next.code_point == '\n' || next.code_point == '\r' ||
                                           next.code_point == '\t');
    control(written, blank);
    at += std::max<size_t>(next.length, 1);
    kept = at;
  }
  keep(text.substr(kept));
}

// The longest run of backticks in `text`.
size_t longest_backtick_run(std::string_view text) {
  size_t longest = 0;
  size_t run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

}  // namespace

std::string text_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  scan_controls(
      text, [&](std::string_view kept) { escaped += kept; },
      [&](const std::string& written, bool) { escaped += written; });
  return escaped;
}

std::string format_tps(double tps) {
  return tps >= 100 ? fmt::format("{:.0f}", tps) : fmt::format("{:.1f}", tps);
}

size_t display_width(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string pad_right(std::string_view text, size_t width) {
  const size_t used = display_width(text);
  return std::string(text) + std::string(used < width ? width - used : 0, ' ');
}

std::string pad_left(std::string_view text, size_t width) {
  const size_t used = display_width(text);
  return std::string(used < width ? width - used : 0, ' ') + std::string(text);
}

std::string rstrip(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string text_table(const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right_aligned) {
  std::vector<std::vector<std::string>> escaped;
  escaped.reserve(rows.size());
  for (const auto& row : rows) {
    escaped.emplace_back();
    for (const auto& cell : row) escaped.back().push_back(text_escape(cell));
  }
  std::vector<size_t> widths(right_aligned.size(), 0);
  for (const auto& row : escaped) {
    for (size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], display_width(row[column]));
    }
  }
  std::string out;
  for (const auto& row : escaped) {
    std::string line;
    for (size_t column = 0; column < row.size(); ++column) {
      if (column > 0) line += "  ";
      line += right_aligned[column] ? pad_left(row[column], widths[column])
                                    : pad_right(row[column], widths[column]);
    }
    out += rstrip(std::move(line)) + '\n';
  }
  return out;
}

std::string markdown_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  const auto markup = [&](std::string_view kept) {
    for (const char c : kept) {
      if (std::string_view("\\|*_~`[]").find(c) != std::string_view::npos) {
        escaped += '\\';
        escaped += c;
      } else if (const char* entity = html_entity(c, false)) {
        escaped += entity;
      } else {
        escaped += c;
      }
    }
  };
  scan_controls(text, markup, [&](const std::string& written, bool blank) {
    if (blank) {
      escaped += ' ';
    } else {
      markup(written);  // its backslash escaped in turn, so that "\x1b" shows
    }
  });
  return escaped;
}

std::string markdown_code(std::string_view text) {
  if (text.empty()) return "";
  std::string body;
  body.reserve(text.size());
  // GitHub's table reads "\\" before "\|": a backslash right before a pipe cannot be shown
  // verbatim in a code span inside a table, so such text is escaped as prose instead.
  bool backslash_pipe = false;
  const auto keep = [&](std::string_view kept) {
    for (const char c : kept) {
      if (c == '|') {
        backslash_pipe |= !body.empty() && body.back() == '\\';
        body += '\\';
      }
      body += c;
    }
  };
  scan_controls(text, keep,
                [&](const std::string& written, bool blank) { body += blank ? " " : written; });
  if (backslash_pipe) return markdown_escape(text);
  // A span's content loses one space at each end when it has one at both, and a backtick at
  // an end would join the fence: padded with a space then.
  const std::string fence(longest_backtick_run(body) + 1, '`');
  const bool pad = body.front() == '`' || body.back() == '`' ||
                   (body.front() == ' ' && body.back() == ' ' &&
                    body.find_first_not_of(' ') != std::string::npos);
  const std::string padding = pad ? " " : "";
  return fence + padding + body + padding + fence;
}

std::string markdown_code_block(const std::vector<std::string>& lines, std::string_view info) {
  std::string body;
  for (const auto& line : lines) body += text_escape(line) + '\n';
  const std::string fence(std::max<size_t>(3, longest_backtick_run(body) + 1), '`');
  return fence + std::string(info) + "\n" + body + fence + "\n";
}

std::string markdown_code_block(std::string_view text, std::string_view info) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return markdown_code_block(lines, info);
}

std::string markdown_row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const auto& cell : cells) row += " " + cell + " |";
  return row + "\n";
}

std::string markdown_table(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right_aligned) {
  std::string out;
  for (size_t index = 0; index < rows.size(); ++index) {
    std::vector<std::string> cells;
    cells.reserve(rows[index].size());
    for (const auto& cell : rows[index]) cells.push_back(markdown_escape(cell));
    out += markdown_row(cells);
    if (index == 0) {
      out += "|";
      for (const bool right : right_aligned) out += right ? " --: |" : " --- |";
      out += "\n";
    }
  }
  return out;
}

std::string html_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (const char* entity = html_entity(c, true)) {
      escaped += entity;
    } else if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      // A control character shown, not passed on (query text with an escape sequence).
      escaped += fmt::format("\\x{:02x}", byte);
    } else {
      escaped += c;
    }
  }
  return escaped;
}

bool csv_number(std::string_view text) {
  size_t at = 0;
  if (at < text.size() && (text[at] == '-' || text[at] == '+')) ++at;
  size_t digits = 0;
  for (; at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])); ++at) ++digits;
  if (at < text.size() && text[at] == '.') {
    for (++at; at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])); ++at) {
      ++digits;
    }
  }
  if (digits == 0) return false;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '-' || text[at] == '+')) ++at;
    size_t exponent = 0;
    for (; at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])); ++at) {
      ++exponent;
    }
    if (exponent == 0) return false;
  }
  return at == text.size();
}

std::string csv_field(std::string_view text) {
  std::string field = text_escape(text);
  // A spreadsheet runs a cell that starts with one of these as a formula (CSV injection); a
  // leading ' makes it text. A plain number ("-0.5") is no formula and stays a number.
  if (!field.empty() && std::string_view("=+-@\t\r").find(field.front()) != std::string::npos &&
      !csv_number(field)) {
    field.insert(0, 1, '\'');
  }
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (const char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string row;
  for (size_t index = 0; index < fields.size(); ++index) {
    if (index > 0) row += ',';
    row += csv_field(fields[index]);
  }
  return row + "\n";
}

std::string_view wait_class_colour(std::string_view wait_class) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kColours = {{
      {"CPU", "#2ca02c"},
      {"LWLock", "#e377c2"},
      {"Lock", "#d62728"},
      {"IO", "#1f77b4"},
      {"IPC", "#9467bd"},
      {"Client", "#8c8c8c"},
      {"Timeout", "#bcbd22"},
      {"BufferPin", "#ff7f0e"},
      {"Extension", "#8c564b"},
      {"Activity", "#17becf"},
  }};
  for (const auto& [name, colour] : kColours) {
    if (name == wait_class) return colour;
  }
  return "#393b79";
}

std::string swatch(std::string_view wait_class) {
  if (wait_class.empty()) return "";
  return fmt::format(R"(<span class="sw" style="background:{}"></span>)",
                     wait_class_colour(wait_class));
}

}  // namespace pgwaitprof::exporters::text_format
