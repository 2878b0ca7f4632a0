// Formatting helpers every exporter shares: tps as posted to
// pgsql-hackers, plain-text tables padded to display width, and the one escaper of each output
// format (text and terminal, Markdown, HTML, CSV, JSON). One copy, so that the run report, the
// comparison, the matrix table and the history never disagree, and so that every string that
// came from a user or a server (labels, names, query text, settings, error text) is escaped on
// its way out by its format's escaper, once.
#pragma once

#include <array>
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "model/wait_key.h"

namespace pgwaitprof::exporters::text_format {

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

// Text and terminal: what a terminal would act on instead of showing is written out. C0
// control characters and DEL as "\x1b" (a line break, carriage return and tab as "\n", "\r",
// "\t"), C1 controls (U+0080-U+009F: "\u009b" is CSI) and the characters that break or
// reorder a line (U+2028, U+2029 and the bidirectional controls, as in "Trojan Source") as
// "\u202e", and a byte that is not part of valid UTF-8 as "\xff". Everything else, a backslash
// too, is kept as it is: ordinary text reads the same, and a second pass changes nothing.
std::string text_escape(std::string_view text);

// Plain-text table: every cell through text_escape, every column padded to its widest cell,
// columns two spaces apart, `right_aligned` ones (numbers) padded on the left; trailing spaces
// dropped, one line a row.
std::string text_table(const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right_aligned);

// Markdown, for a table cell, a list item, a heading or the middle of a sentence: the text as
// it was given, nothing in it read as markup. '\\', '|' (a cell's end), '*', '_', '~'
// (emphasis), '`' (code) and '[', ']' (links) backslashed; '<', '>', '&' as HTML entities (no
// tag, comment or autolink); a line break or tab as a space (a line break would end the table
// row); other control characters written out as text_escape does.
std::string markdown_escape(std::string_view text);
// A code span for a table cell (a connection string, a command line, a setting): shown
// verbatim, with line breaks and tabs as spaces and other control characters written out as
// text_escape does; '|' backslashed (a table reads it before the span), fenced by more
// backticks than the text has in a row. Text with a backslash right before a pipe, which a
// GitHub table would split there, is markdown_escape'd instead. "" for "".
std::string markdown_code(std::string_view text);
// A fenced code block (```text ... ```) of lines of output: each line through text_escape (a
// line break inside one written out), the fence longer than any run of backticks in them, so
// nothing inside can close it. The text form takes the lines it holds.
std::string markdown_code_block(const std::vector<std::string>& lines,
                                std::string_view info = "text");
std::string markdown_code_block(std::string_view text, std::string_view info = "text");

// One table row of cells taken as they are (already escaped): "| a | b |\n".
std::string markdown_row(const std::vector<std::string>& cells);
// rows[0] is the header, followed by the alignment row ("--:" where `right_aligned`, "---"
// otherwise); every cell through markdown_escape.
std::string markdown_table(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right_aligned);

// The order of wait classes in charts and tables (model/wait_key.h).
using model::kWaitClassOrder;
using model::wait_class_before;

// The colour of a wait class (CPU green, LWLock pink, Lock red, IO blue, IPC purple, Client
// grey, ...) in every chart and heat map, "#rrggbb"; one colour for every class not listed.
std::string_view wait_class_colour(std::string_view wait_class);
// A small square in the wait class's colour, for HTML tables and legends; "" for no class.
std::string swatch(std::string_view wait_class);

// '&', '<', '>', '"' and '\'' as entities: safe in element text and in quoted attributes.
// Other control characters than a line break and a tab are written out ("\x1b").
std::string html_escape(std::string_view text);

// CSV (RFC 4180), the one writer of every CSV pgwaitprof writes (runs, trend, profile.csv,
// timeline.csv, table.csv): the field through text_escape (a CSV of pgwaitprof's holds names and
// figures, never multi-line text, and is read in terminals too); a field that starts with =, +,
// -, @, a tab or a carriage return and is not a plain number gets a leading ' (a spreadsheet
// would run it as a formula); then quoted, quotes doubled, when it has a comma, a quote or a
// line break.
std::string csv_field(std::string_view text);
// Whether `text` is a plain decimal number ("-12", "+0.5", "1e-3"), which csv_field keeps as is.
bool csv_number(std::string_view text);
// The fields, each by csv_field, comma-separated, with the line's "\n".
std::string csv_row(const std::vector<std::string>& fields);

}  // namespace pgwaitprof::exporters::text_format
