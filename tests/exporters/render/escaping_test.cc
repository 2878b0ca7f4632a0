// The escapers of text_format, one per output format (text and terminal, Markdown, CSV, JSON),
// on thousands of random strings from a seeded std::mt19937, made of what breaks each format:
// control bytes, escape sequences, HTML, Markdown syntax, line breaks and bytes that are not
// UTF-8. The properties are read from the output the way a terminal, a Markdown renderer or a
// CSV reader reads it.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>

#include "base/json_text.h"
#include "exporters/render/text_format.h"
#include "tests/exporters/render/escaping_fixture.h"

namespace pgwaitprof::exporters::text_format {
namespace {

using escaping_test::decode_utf8;
using escaping_test::kHostile;
using escaping_test::markdown_cells;
using escaping_test::terminal_hazard;

constexpr int kStrings = 5000;

// Pieces the random strings are made of, beside random bytes.
using namespace std::string_view_literals;
const std::array<std::string_view, 38> kPieces = {"\x1b[31m"sv,
                                                  "\x1b]0;x\x07"sv,
                                                  "\x1b"sv,
                                                  "\x07"sv,
                                                  "\x7f"sv,
                                                  "\x00"sv,
                                                  "\n"sv,
                                                  "\r"sv,
                                                  "\t"sv,
                                                  "\r\n"sv,
                                                  "<"sv,
                                                  ">"sv,
                                                  "<body>"sv,
                                                  "<!--"sv,
                                                  "&"sv,
                                                  "&lt;"sv,
                                                  "|"sv,
                                                  "\\"sv,
                                                  "\\|"sv,
                                                  "`"sv,
                                                  "``"sv,
                                                  "```"sv,
                                                  "["sv,
                                                  "]"sv,
                                                  "](x)"sv,
                                                  "*"sv,
                                                  "_"sv,
                                                  "~"sv,
                                                  "#"sv,
                                                  " "sv,
                                                  "a"sv,
                                                  "\xc2\x9b"sv,
                                                  "\xe2\x80\xae"sv,
                                                  "\xe2\x80\xa8"sv,
                                                  "\xc3\xa9"sv,
                                                  "\xff"sv,
                                                  "\xe2\x80"sv,
                                                  "\xc0\xaf"sv};

class RandomStrings {
 public:
  explicit RandomStrings(uint32_t seed) : random_(seed) {}

  std::string next() {
    std::string text;
    const int parts = std::uniform_int_distribution<int>(0, 16)(random_);
    for (int part = 0; part < parts; ++part) {
      if (std::uniform_int_distribution<int>(0, 2)(random_) == 0) {
        text += static_cast<char>(std::uniform_int_distribution<int>(0, 255)(random_));
      } else {
        const auto& piece =
            kPieces[std::uniform_int_distribution<size_t>(0, kPieces.size() - 1)(random_)];
        text.append(piece.data(), piece.size());
      }
    }
    return text;
  }

 private:
  std::mt19937 random_;
};

// A string's line breaks and tabs as spaces: how Markdown shows them.
std::string blanks_as_spaces(std::string text) {
  for (auto& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text;
}

// The text CommonMark shows for inline Markdown made of backslash escapes of ASCII
// punctuation, the entities &amp; &lt; &gt; and plain characters.
std::string shown_inline(std::string_view markdown) {
  std::string shown;
  for (size_t at = 0; at < markdown.size(); ++at) {
    const char c = markdown[at];
    if (c == '\\' && at + 1 < markdown.size() &&
        std::ispunct(static_cast<unsigned char>(markdown[at + 1]))) {
      shown += markdown[++at];
      continue;
    }
    bool entity = false;
    for (const auto& [name, character] : {std::pair{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}}) {
      if (markdown.substr(at).starts_with(name)) {
        shown += character;
        at += std::string_view(name).size() - 1;
        entity = true;
        break;
      }
    }
    if (!entity) shown += c;
  }
  return shown;
}

// Markup a renderer would act on: one of *_~`[]|<>\ without a backslash before it, or an '&'
// that starts no entity of markdown_escape's. "" when there is none.
std::string active_markup(std::string_view markdown) {
  for (size_t at = 0; at < markdown.size(); ++at) {
    const char c = markdown[at];
    if (c == '\\') {
      if (at + 1 == markdown.size()) return "a lone backslash at the end";
      ++at;
      continue;
    }
    if (std::string_view("*_~`[]|<>").find(c) != std::string_view::npos) {
      return std::string("unescaped ") + c;
    }
    const auto rest = markdown.substr(at);
    if (c == '&' && !rest.starts_with("&amp;") && !rest.starts_with("&lt;") &&
        !rest.starts_with("&gt;")) {
      return "an '&' that is not an entity";
    }
  }
  return "";
}

size_t longest_backtick_run(std::string_view text) {
  size_t longest = 0, run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

TEST(TextEscape, SpellsOutWhatATerminalWouldActOn) {
  EXPECT_EQ(text_escape("red\x1b[31mbell\x07"), "red\\x1b[31mbell\\x07");
  EXPECT_EQ(text_escape("SELECT 1\n  FROM t\r\tx"), "SELECT 1\\n  FROM t\\r\\tx");
  EXPECT_EQ(text_escape("\xc2\x9b"
                        "2J \xe2\x80\xae"
                        "cba \xe2\x80\xa8"),
            "\\u009b2J \\u202ecba \\u2028");
  EXPECT_EQ(text_escape("\xff\xc0\xaf \xe2\x80"), "\\xff\\xc0\\xaf \\xe2\\x80");
  EXPECT_EQ(text_escape(std::string("a\0b", 3)), "a\\x00b");
  // Ordinary text, non-ASCII and backslashes included, reads as it did.
  for (const char* plain : {"LWLock | WALWrite", "p99 ± 1.2 ms, café", "C:\\tmp \\d+", ""}) {
    EXPECT_EQ(text_escape(plain), plain);
  }
}

TEST(TextEscape, RandomStringsLeaveNothingForATerminal) {
  RandomStrings strings(20261123);
  for (int index = 0; index < kStrings; ++index) {
    const std::string text = strings.next();
    const std::string escaped = text_escape(text);
    ASSERT_EQ(terminal_hazard(escaped, ""), "") << testing::PrintToString(text);
    // A second pass changes nothing: a label stored escaped shows the same when escaped again.
    ASSERT_EQ(text_escape(escaped), escaped) << testing::PrintToString(text);
    // Text with nothing to escape comes back whole.
    if (terminal_hazard(text, "").empty()) {
      ASSERT_EQ(escaped, text);
    }
  }
}

TEST(HtmlEscape, RandomStringsHaveNoMarkupAndNoControlCharactersButLinesAndTabs) {
  EXPECT_EQ(html_escape("<b>\x1b[31m\"a\" & 'b'\n\t"),
            "&lt;b&gt;\\x1b[31m&quot;a&quot; &amp; &#39;b&#39;\n\t");
  RandomStrings strings(1997);
  for (int index = 0; index < kStrings; ++index) {
    const std::string text = strings.next();
    const std::string escaped = html_escape(text);
    for (const char c : escaped) {
      const auto byte = static_cast<unsigned char>(c);
      ASSERT_TRUE(c != '<' && c != '>' && c != '"' && c != '\'') << testing::PrintToString(text);
      ASSERT_TRUE(byte >= 0x20 ? byte != 0x7f : (c == '\n' || c == '\t'))
          << testing::PrintToString(text);
    }
  }
}

TEST(MarkdownEscape, RandomStringsShowAsGivenAndNothingElse) {
  RandomStrings strings(7);
  for (int index = 0; index < kStrings; ++index) {
    const std::string text = strings.next();
    const std::string escaped = markdown_escape(text);
    const auto printed = testing::PrintToString(text);
    ASSERT_EQ(terminal_hazard(escaped, ""), "") << printed;  // no line break either
    ASSERT_EQ(escaped.find('<'), std::string::npos) << printed;
    ASSERT_EQ(active_markup(escaped), "") << printed << " -> " << escaped;
    // One cell, whatever pipes and line breaks the text had.
    ASSERT_EQ(markdown_cells("| " + escaped + " | x |"), 2U) << printed;
    // A reader sees the text: its line breaks as spaces, its controls spelled out.
    ASSERT_EQ(shown_inline(escaped), text_escape(blanks_as_spaces(text))) << printed;
  }
}

TEST(MarkdownEscape, TheHostileStringStaysText) {
  const std::string escaped = markdown_escape(kHostile);
  EXPECT_NE(escaped.find("&lt;body id=\"pwned\"&gt;"), std::string::npos) << escaped;
  EXPECT_NE(escaped.find("\\[link\\](http://evil.example)"), std::string::npos) << escaped;
  EXPECT_NE(escaped.find("\\\\x1b\\[31mred"), std::string::npos) << escaped;
  EXPECT_NE(escaped.find("txt  second line end"), std::string::npos) << escaped;
  // Names read as they did, pipes escaped.
  EXPECT_EQ(markdown_escape("LWLock | WALWrite"), "LWLock \\| WALWrite");
  EXPECT_EQ(markdown_escape("client backend"), "client backend");
}

// A code span as CommonMark reads it: the fence, the content up to the first backtick run as
// long as the fence, one space off each end when both have one; then GFM's "\|" as "|".
struct CodeSpan {
  bool closed = false;
  std::string shown;
};
CodeSpan read_code_span(std::string_view span) {
  const size_t fence = span.find_first_not_of('`');
  if (fence == 0 || fence == std::string_view::npos) return {};
  size_t at = fence;
  size_t close = std::string_view::npos;
  while (at < span.size()) {
    const size_t run_start = span.find('`', at);
    if (run_start == std::string_view::npos) break;
    const size_t run_end = std::min(span.find_first_not_of('`', run_start), span.size());
    if (run_end - run_start == fence) {
      close = run_start;
      break;
    }
    at = run_end;
  }
  if (close == std::string_view::npos || close + fence != span.size()) return {};
  std::string content(span.substr(fence, close - fence));
  if (content.size() >= 2 && content.front() == ' ' && content.back() == ' ' &&
      content.find_first_not_of(' ') != std::string::npos) {
    content = content.substr(1, content.size() - 2);
  }
  std::string shown;
  for (size_t index = 0; index < content.size(); ++index) {
    if (content[index] == '\\' && index + 1 < content.size() && content[index + 1] == '|') continue;
    shown += content[index];
  }
  return {true, shown};
}

TEST(MarkdownCode, RandomStringsAreOneSpanShownVerbatim) {
  RandomStrings strings(11);
  for (int index = 0; index < kStrings; ++index) {
    const std::string text = strings.next();
    const std::string span = markdown_code(text);
    const auto printed = testing::PrintToString(text);
    if (text.empty()) {
      ASSERT_EQ(span, "");
      continue;
    }
    ASSERT_EQ(terminal_hazard(span, ""), "") << printed;
    ASSERT_EQ(markdown_cells("| " + span + " | x |"), 2U) << printed << " -> " << span;
    if (!span.starts_with('`')) {  // a backslash before a pipe: escaped as prose
      ASSERT_EQ(span, markdown_escape(text)) << printed;
      continue;
    }
    const CodeSpan read = read_code_span(span);
    ASSERT_TRUE(read.closed) << printed << " -> " << span;
    ASSERT_EQ(read.shown, text_escape(blanks_as_spaces(text))) << printed << " -> " << span;
  }
  EXPECT_EQ(markdown_code("host=db1 port=5432"), "`host=db1 port=5432`");
  EXPECT_EQ(markdown_code("a``b"), "```a``b```");
  EXPECT_EQ(markdown_code("`x`"), "`` `x` ``");
  EXPECT_EQ(markdown_code("a | b"), "`a \\| b`");
  EXPECT_EQ(markdown_code("a\\|b"), "a\\\\\\|b");
}

TEST(MarkdownCodeBlock, RandomOutputCannotCloseTheFence) {
  RandomStrings strings(13);
  for (int index = 0; index < kStrings; ++index) {
    std::string text;
    for (int line = 0; line < 4; ++line) text += strings.next() + "\n";
    const std::string block = markdown_code_block(text);
    const auto printed = testing::PrintToString(text);
    ASSERT_EQ(terminal_hazard(block), "") << printed;
    const auto lines = escaping_test::lines_of(block);
    ASSERT_GE(lines.size(), 2U);
    const size_t fence = lines.front().find_first_not_of('`');
    ASSERT_GE(fence, 3U);
    ASSERT_EQ(lines.front().substr(fence), "text");
    ASSERT_EQ(lines.back(), std::string(fence, '`'));
    // No line inside holds a run of backticks long enough to close the block, and each is
    // the input's line escaped.
    std::vector<std::string> expected;
    for (const auto& line : escaping_test::lines_of(text)) expected.push_back(text_escape(line));
    const std::vector<std::string> inside(lines.begin() + 1, lines.end() - 1);
    for (const auto& line : inside) ASSERT_LT(longest_backtick_run(line), fence) << printed;
    ASSERT_EQ(inside, expected) << printed;
  }
}

TEST(CsvField, RandomStringsAreOneFieldOnOneLine) {
  RandomStrings strings(17);
  for (int index = 0; index < kStrings; ++index) {
    const std::string text = strings.next();
    const std::string field = csv_field(text);
    const auto printed = testing::PrintToString(text);
    ASSERT_EQ(terminal_hazard(field, ""), "") << printed;
    // RFC 4180 read back: quoted with doubled quotes, or bare without a comma or a quote.
    std::string read;
    if (field.starts_with('"')) {
      ASSERT_TRUE(field.size() >= 2 && field.ends_with('"')) << field;
      const std::string_view inner = std::string_view(field).substr(1, field.size() - 2);
      for (size_t at = 0; at < inner.size(); ++at) {
        if (inner[at] == '"') {
          ASSERT_TRUE(at + 1 < inner.size() && inner[at + 1] == '"') << field;
          ++at;
        }
        read += inner[at];
      }
    } else {
      ASSERT_EQ(field.find_first_of(",\""), std::string::npos) << field;
      read = field;
    }
    // A cell a spreadsheet would run as a formula is text: a leading ' (a number stays one).
    std::string expected = text_escape(text);
    if (!expected.empty() && std::string_view("=+-@").find(expected[0]) != std::string::npos &&
        !csv_number(expected)) {
      expected.insert(0, 1, '\'');
    }
    ASSERT_EQ(read, expected) << printed;
  }
}

TEST(JsonText, RandomStringsAreValidJsonOfOneLine) {
  RandomStrings strings(19);
  for (int index = 0; index < kStrings; ++index) {
    const std::string text = strings.next();
    const std::string json = base::json_text(nlohmann::json{{"label", text}});
    const auto printed = testing::PrintToString(text);
    // JSON is for programs: C0 controls as \u escapes (no raw line break), the rest of
    // Unicode as it is, and always valid UTF-8.
    ASSERT_TRUE(std::none_of(json.begin(), json.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20;
    })) << printed;
    ASSERT_TRUE(decode_utf8(json)) << printed;
    const auto back = nlohmann::json::parse(json).at("label").get<std::string>();
    // Valid UTF-8 comes back byte for byte; anything else as U+FFFD, never an exception.
    if (decode_utf8(text)) {
      ASSERT_EQ(back, text) << printed;
    } else {
      ASSERT_TRUE(decode_utf8(back)) << printed;
    }
  }
}

}  // namespace
}  // namespace pgwaitprof::exporters::text_format
