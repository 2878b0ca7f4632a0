// What the matrix table's renderers share (matrix_table.cc: text, Markdown, CSV, JSON;
// matrix_html.cc: the page) and the rows of each variant's wait-profile tables
// (matrix_composition.cc), so that every format shows the same cells the same way.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/matrix_aggregate.h"

namespace pgwaitprof::exporters::matrix_detail {

// How many events of each cell the composition tables show per variant (the union of each
// cell's largest few), at most kShownEvents in all.
inline constexpr size_t kTopEventsPerCell = 3;
inline constexpr size_t kShownEvents = 8;

// One row of a variant's composition table: the total AAS, a wait class, a heading, or a wait
// event; `cells` per client count of the table, "" where the cell is missing or has no profile.
struct CompositionRow {
  enum class Kind { kTotal, kClass, kHeading, kEvent };
  Kind kind = Kind::kClass;
  std::string label;
  std::string wait_class;  // for swatches
  std::vector<std::string> cells;
};

// `separator` goes between a share and its error: " ±" in text ("77.8 ±0.4").
std::vector<CompositionRow> composition_rows(const model::MatrixTable& table,
                                             const std::string& variant,
                                             const std::string& separator);

// The title of the composition tables and what their errors are (and, with traced cells, what
// their durations are), each one line of text.
std::string composition_title();
std::string composition_note(const model::MatrixTable& table);

// The wait classes that occur in any cell of the table, in kWaitClassOrder.
std::vector<std::string> table_wait_classes(const model::MatrixTable& table);

using model::variant_label;  // "-" for the unnamed variant
bool has_tps(const model::MatrixCell* cell);
// The cell's figure as the table shows it: "20000" tps, "12.34" s.
std::string format_figure(const model::MatrixCell* cell, double value);
// "tps", or "elapsed s (lower is better)".
std::string figure_title(const model::MatrixTable& table);
// The majors of a plan of builds that mixes them: "16, 17".
std::string majors_text(const model::MatrixTable& table);
bool has_checkpoint(const model::MatrixTable& table);
std::string checkpoint_text(const model::MatrixCell* cell);  // "9.12", "-"
std::string median_text(const model::MatrixCell* cell);      // "20000*" (* = some runs failed)
std::string range_text(const model::MatrixCell* cell);       // "18500-23000", "" for one run
std::string latency_text(const model::MatrixCell* cell);     // "1.600"
std::string p99_text(const model::MatrixCell* cell);  // "4.210", "-" without a transaction log
bool has_p99(const model::MatrixTable& table);
std::string dominant_text(const model::MatrixCell* cell);   // "LWLock | XactSLRU 69%"
std::string repeats_text(const model::MatrixTable& table);  // "5 repeats", "1-5 repeats"
std::vector<std::string> failed_notes(const model::MatrixTable& table);
std::string error_source_name(model::ShareError source);  // "repeats", "sampling", ""

// The scalability section (matrix_scalability.cc): what the model is and its intervals, then
// per variant its facts as label and value and the waits across its knee, all unescaped (each
// format escapes them: wait event names come from the server, variant names from the user).
std::string scalability_title();
std::string scalability_note(
    const model::MatrixTable& table);  // the interval method(s), the weights
struct ScalabilityFact {
  std::string label;
  std::string value;
};
std::vector<ScalabilityFact> scalability_facts(const model::VariantScalability& variant);
// "0.0189 [0.0169, 0.0216]", or the figure's note when the data do not constrain it.
std::string figure_text(const model::UslFigure& figure, int significant_digits);
// The waits across the knee: every wait class that changed, then the events that changed most
// (at most kShownEvents), as rows of growth_headers() columns.
std::vector<std::string> growth_headers();
std::vector<CompositionRow> growth_rows(const model::VariantScalability& variant);

// One cell text per client count of the table for `variant`.
template <typename Format>
std::vector<std::string> row_cells(const model::MatrixTable& table, const std::string& variant,
                                   Format format) {
  std::vector<std::string> cells;
  for (const int clients : table.clients) cells.push_back(format(table.find(variant, clients)));
  return cells;
}

}  // namespace pgwaitprof::exporters::matrix_detail
