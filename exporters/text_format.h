// Formatting helpers every exporter shares: the median of a sample, tps as posted to
// pgsql-hackers, plain-text tables padded to display width, and escaping for Markdown, HTML and
// CSV. One copy, so that the run report, the comparison and the matrix table never disagree.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::exporters::text_format {

// The middle value, or the mean of the two middle values; 0 for an empty sample.
double median(std::vector<double> values);

// Whole tps from 100 up, one decimal below: "7660", "42.5".
std::string format_tps(double tps);

// Width on a terminal: UTF-8 continuation bytes take no column ("±" is two bytes, one column).
size_t display_width(std::string_view text);
// Padded with spaces to `width` columns: text then spaces (left-aligned), or spaces then text
// (right-aligned, for numbers). Text wider than `width` is kept whole.
std::string pad_right(std::string_view text, size_t width);
std::string pad_left(std::string_view text, size_t width);
// Without its trailing spaces.
std::string rstrip(std::string text);

// Plain-text table: every column padded to its widest cell, columns two spaces apart,
// `right_aligned` ones (numbers) padded on the left; trailing spaces dropped, one line a row.
std::string text_table(const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right_aligned);

enum class MarkdownEscape {
  // '|' would end a table cell, '\\' escape, and '*', '_', '`' emphasis or code: backslashed.
  kMarkup,
  // As kMarkup, and '[', ']' backslashed (links); '<', '>', '&' as HTML entities (raw HTML);
  // a line break, which would end a table row, as a space.
  kMarkupAndHtml,
};
std::string markdown_escape(std::string_view text, MarkdownEscape mode = MarkdownEscape::kMarkup);

// One table row of cells taken as they are (already escaped): "| a | b |\n".
std::string markdown_row(const std::vector<std::string>& cells);
// rows[0] is the header, followed by the alignment row ("--:" where `right_aligned`, "---"
// otherwise); every cell escaped with MarkdownEscape::kMarkup.
std::string markdown_table(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right_aligned);

// The wait classes in the order charts stack them (bottom up) and tables list them; classes not
// listed follow, by name (wait_class_before).
inline constexpr std::array<std::string_view, 10> kWaitClassOrder = {
    "CPU",    "LWLock",  "Lock",      "IO",        "IPC",
    "Client", "Timeout", "BufferPin", "Extension", "Activity"};
bool wait_class_before(std::string_view a, std::string_view b);

// The colour of a wait class (CPU green, LWLock pink, Lock red, IO blue, IPC purple, Client
// grey, ...) in every chart and heat map, "#rrggbb"; one colour for every class not listed.
std::string_view wait_class_colour(std::string_view wait_class);

// '&', '<', '>', '"' and '\'' as entities: safe in element text and in quoted attributes.
std::string html_escape(std::string_view text);

// RFC 4180: a field with a comma, a quote or a line break is quoted, quotes doubled.
std::string csv_field(std::string_view text);
// The fields, each by csv_field, comma-separated, with the line's "\n".
std::string csv_row(const std::vector<std::string>& fields);

}  // namespace pgwaitprof::exporters::text_format
