// What the escaping tests share (escaping_test.cc, report_escaping_test.cc and
// tests/exporters/render/history_escaping_test.cc): a hostile string, and checks of rendered output
// written apart from the escapers, so that a test reads the output as a terminal or a Markdown
// renderer would instead of asking the escaper whether it escaped.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::exporters::escaping_test {

// What a label, an application_name or a query's text can hold: an HTML tag (the one a
// rendered report.md once produced), Markdown table, link, emphasis and code syntax, line
// breaks and a tab, an ANSI colour, an OSC window title ended by BEL, a C1 CSI (U+009B), a
// bidirectional override (U+202E), and bytes that are not UTF-8.
inline const std::string kHostile =
    "<body id=\"pwned\"><script>alert(1)</script> |a|b| `x` ``` [link](http://evil.example) "
    "*em* _em_ ~~del~~ &amp; \\| \x1b[31mred\x1b[0m \x1b]0;title\x07 \xc2\x9b"
    "2J \xe2\x80\xae"
    "txt\r\nsecond line\tend \xff\xfe";

// The code points of UTF-8 text, or nullopt at the first byte that is not valid UTF-8
// (overlong forms, surrogates and code points past U+10FFFF included).
inline std::optional<std::vector<char32_t>> decode_utf8(std::string_view text) {
  std::vector<char32_t> code_points;
  size_t at = 0;
  while (at < text.size()) {
    const auto lead = static_cast<unsigned char>(text[at]);
    size_t length = lead < 0x80         ? 1
                    : lead >> 5 == 0x6  ? 2
                    : lead >> 4 == 0xE  ? 3
                    : lead >> 3 == 0x1E ? 4
                                        : 0;
    if (length == 0 || at + length > text.size()) return std::nullopt;
    char32_t code_point = length == 1 ? lead : lead & (0x7F >> length);
    for (size_t next = 1; next < length; ++next) {
      const auto byte = static_cast<unsigned char>(text[at + next]);
      if ((byte & 0xC0) != 0x80) return std::nullopt;
      code_point = (code_point << 6) | (byte & 0x3F);
    }
    static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < kSmallest[length] || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return std::nullopt;
    }
    code_points.push_back(code_point);
    at += length;
  }
  return code_points;
}

// What a terminal acts on instead of printing, in text that is to be shown: a C0 control other
// than the line breaks `allowed`, DEL, a C1 control, a line or paragraph separator, a
// bidirectional control, or a byte that is not UTF-8. "" when there is none.
inline std::string terminal_hazard(std::string_view text, std::string_view allowed = "\n") {
  const auto code_points = decode_utf8(text);
  if (!code_points) return "not UTF-8";
  for (const char32_t code_point : *code_points) {
    const bool c0 = code_point < 0x20 || code_point == 0x7F;
    if (c0 && allowed.find(static_cast<char>(code_point)) != std::string_view::npos) continue;
    const bool bidi = code_point == 0x061C || code_point == 0x200E || code_point == 0x200F ||
                      (code_point >= 0x202A && code_point <= 0x202E) ||
                      (code_point >= 0x2066 && code_point <= 0x2069);
    if (c0 || (code_point >= 0x80 && code_point <= 0x9F) || code_point == 0x2028 ||
        code_point == 0x2029 || bidi) {
      return fmt::format("U+{:04X}", static_cast<uint32_t>(code_point));
    }
  }
  return "";
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// The cells of a GFM table row: split on the pipes that no backslash escapes (as GitHub's
// cmark-gfm and markdown-it split a row before reading its inlines), less the outer two.
inline size_t markdown_cells(std::string_view row) {
  size_t pipes = 0;
  for (size_t at = 0; at < row.size(); ++at) {
    if (row[at] == '\\') {
      ++at;
    } else if (row[at] == '|') {
      ++pipes;
    }
  }
  return pipes < 2 ? 0 : pipes - 1;
}

// The rows of a Markdown document's tables whose cell count differs from their header's: each
// run of lines starting with '|' is one table.
inline std::vector<std::string> broken_table_rows(const std::string& markdown) {
  std::vector<std::string> broken;
  size_t header_cells = 0;
  bool in_table = false;
  for (const auto& line : lines_of(markdown)) {
    if (!line.starts_with("|")) {
      in_table = false;
      continue;
    }
    if (!in_table) {
      in_table = true;
      header_cells = markdown_cells(line);
    } else if (markdown_cells(line) != header_cells) {
      broken.push_back(line);
    }
  }
  return broken;
}

// The first '<' or '[' that a Markdown renderer would read as the start of a tag, a comment, an
// autolink or a link: one outside code spans without a backslash before it. A code span opens
// at a run of backticks and closes at the next run of the same length on its line; its
// content is shown as it is. "" when there is none.
inline std::string markup_opener(std::string_view line) {
  for (size_t at = 0; at < line.size(); ++at) {
    const char c = line[at];
    if (c == '\\') {
      ++at;
    } else if (c == '`') {
      const size_t run_end = std::min(line.find_first_not_of('`', at), line.size());
      const size_t length = run_end - at;
      size_t close = run_end;
      while ((close = line.find('`', close)) != std::string_view::npos) {
        const size_t close_end = std::min(line.find_first_not_of('`', close), line.size());
        if (close_end - close == length) break;
        close = close_end;
      }
      at = close == std::string_view::npos ? run_end - 1 : close + length - 1;
    } else if (c == '<' || c == '[') {
      return std::string(line.substr(at, 40));
    }
  }
  return "";
}

// What a Markdown document must never hold, whatever its strings were: a raw HTML tag, comment
// or autolink, a link, a terminal hazard, a table row broken by a pipe or a line break, or a
// fenced code block that does not close. Code blocks show their lines as they are. "" when it
// holds none of them.
inline std::string markdown_hazard(const std::string& markdown) {
  if (auto hazard = terminal_hazard(markdown); !hazard.empty()) return hazard;
  size_t fence = 0;  // the open code block's fence length, 0 outside one
  for (const auto& line : lines_of(markdown)) {
    const size_t backticks = std::min(line.find_first_not_of('`'), line.size());
    if (fence == 0 && backticks >= 3) {
      fence = backticks;
    } else if (fence > 0) {
      if (backticks >= fence && line.find_first_not_of(' ', backticks) == std::string::npos) {
        fence = 0;
      }
    } else if (auto opener = markup_opener(line); !opener.empty()) {
      return "markup at: " + opener;
    }
  }
  if (fence > 0) return "a code block left open";
  if (const auto broken = broken_table_rows(markdown); !broken.empty()) {
    return "table row of the wrong width: " + broken.front();
  }
  return "";
}

// Labels a spreadsheet would run as formulas (CSV injection), one per dangerous first
// character, the first with an escape sequence too.
inline const std::vector<std::string> kFormulas = {"=cmd|' /C calc'!A0\x1b[31m",
                                                   "+1+cmd|' /C calc'!A0",
                                                   "-2+3+cmd|' /C calc'!A0",
                                                   "@SUM(1+9)*cmd|' /C calc'!A0",
                                                   "\t=1+1",
                                                   "\r=1+1",
                                                   "=HYPERLINK(\"http://evil.example\",\"x\")"};

// The first cell of a CSV (read as RFC 4180 says: a quoted cell's content is what is between
// the quotes) that a spreadsheet would take for a formula: it starts with =, +, -, @, a tab or
// a carriage return and is not a plain number. "" when there is none.
inline std::string formula_hazard(const std::string& csv) {
  static const std::regex number(R"([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)");
  std::string cell;
  bool quoted = false;
  auto check = [&]() {
    const bool dangerous =
        !cell.empty() && std::string_view("=+-@\t\r").find(cell[0]) != std::string_view::npos;
    return dangerous && !std::regex_match(cell, number) ? cell : std::string();
  };
  for (size_t at = 0; at < csv.size(); ++at) {
    const char c = csv[at];
    if (quoted) {
      if (c == '"' && at + 1 < csv.size() && csv[at + 1] == '"') {
        cell += '"';
        ++at;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"' && cell.empty()) {
      quoted = true;
    } else if (c == ',' || c == '\n') {
      if (auto found = check(); !found.empty()) return found;
      cell.clear();
    } else {
      cell += c;
    }
  }
  return check();
}

}  // namespace pgwaitprof::exporters::escaping_test
