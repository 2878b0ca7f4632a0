// The tps x clients table of a matrix sweep (variants down, clients across), with each cell's
// median and min-max over repeats, latency, and dominant wait event; text, Markdown, CSV, JSON
// and an HTML page (tps-vs-clients lines per variant, heat map of the dominant wait class).
#pragma once

#include <string>
#include <vector>

#include "daemon/model/run.h"

namespace pgwaitprof::exporters {

struct MatrixCell {
  std::string variant;
  int clients = 0;
  std::vector<double> tps;  // one per finished repeat
  double tps_median = 0, tps_min = 0, tps_max = 0;
  double latency_median_ms = 0;
  std::string dominant_wait;   // display name of the top non-idle wait key ("CPU" included)
  std::string dominant_class;  // its wait_event_type
  double dominant_share = 0;   // 0..1
  int failed_runs = 0;         // runs not "completed"
};

struct MatrixTable {
  std::string name;
  std::vector<std::string> variants;  // in plan order (first appearance)
  std::vector<int> clients;           // ascending
  std::vector<MatrixCell> cells;      // variants x clients, missing cells absent
  const MatrixCell* find(const std::string& variant, int clients) const;
};

// Groups runs by (run.variant, run.clients).
MatrixTable build_matrix_table(const std::vector<model::Run>& runs, std::string name = "");

std::string render_matrix_text(const MatrixTable& table);
std::string render_matrix_markdown(const MatrixTable& table);
std::string render_matrix_csv(const MatrixTable& table);
std::string render_matrix_json(const MatrixTable& table);
std::string render_matrix_html(const MatrixTable& table);

}  // namespace pgwaitprof::exporters
