// The traced source's figures (issue 48) in every format a person reads: the durations of a
// wait's blocking waits, the hackers' table with exact time, waits and durations (text,
// Markdown, HTML), profile.csv's columns of them, and the HTML page's duration histograms of the
// top wait events. A traced profile's counts are microseconds (collectors/trace/).
#pragma once

#include <string>
#include <vector>

#include "model/summary.h"

namespace pgwaitprof::exporters::report_detail {

// A wait's duration: "183us", "4.10ms", "1.002s"; "-" for none.
std::string duration_text(double seconds);

// What is exact and what sampled in a traced table.
std::string traced_table_note();

// A profile row's amount as the tables show it: samples, or seconds where the profile is traced
// (counts of microseconds); the column's header; the idle table's heading after "idle (not in
// shares): ".
std::string amount_text(const model::Run& run, uint64_t count);
std::string amount_header(const model::Run& run);
std::string idle_amount(const model::Run& run, const model::ProfileTable& table);

// The text table's lines (header, rows, total), labels already escaped and `width` wide.
std::vector<std::string> traced_text_table(const model::ProfileTable& table,
                                           const std::vector<std::string>& labels, size_t width);
// The Markdown table, with its note.
std::string traced_markdown_table(const model::ProfileTable& table);
// The HTML table (rows escaped), with its note.
std::string traced_html_table(const model::ProfileTable& table);

// profile.csv's columns after the common ones, and a row's values of them (empty for a row
// without traced figures).
std::vector<std::string> traced_csv_columns();
std::vector<std::string> traced_csv_fields(const model::ProfileRow& row);

// Histograms of the blocking waits' durations of the wait events with the most blocked time
// (at most `top`), on a logarithmic axis with p50 and p99 marked; "" when no row has waits.
std::string svg_wait_durations(const model::ProfileTable& table, size_t top = 6);

}  // namespace pgwaitprof::exporters::report_detail
