// The tps x clients table of a matrix sweep (variants down, clients across), with each cell's
// median and min-max over repeats, latency, dominant wait event, and wait profile (share and AAS
// per wait class and wait event, with errors; aggregated in model/matrix_aggregate.h) rendered
// as text, Markdown, CSV, JSON and an HTML page
// (tps-vs-clients lines per variant, heat map of the dominant wait class, AAS by wait class
// stacked against clients per variant).
#pragma once

#include <string>

#include "model/matrix_aggregate.h"

namespace pgwaitprof::exporters {

// The table's cells (model/matrix_aggregate.h), by their names here.
using model::build_matrix_table;
using model::MatrixCell;
using model::MatrixTable;
using model::run_attribute;
using model::ShareError;
using model::WaitShare;

std::string render_matrix_text(const MatrixTable& table);
std::string render_matrix_markdown(const MatrixTable& table);
std::string render_matrix_csv(const MatrixTable& table);
// The version of table.json's shape (docs/schema/matrix.schema.json): raised with every change
// of its fields or their types (2: the builds of a plan of builds, and mixed majors; 3: the
// cells' CPU functions of --cpu-profile runs; 4: the cells' traced wait durations).
inline constexpr int kMatrixSchemaVersion = 4;
// A matrix directory's table.json.
std::string render_matrix_json(const MatrixTable& table);
std::string render_matrix_html(const MatrixTable& table);

}  // namespace pgwaitprof::exporters
