// The figures of a matrix cell and table as every matrix renderer writes them (matrix_detail.h).
#include "exporters/render/matrix_detail.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters::matrix_detail {

using model::MatrixCell;
using model::MatrixTable;
using model::ShareError;
using text_format::format_tps;

bool has_tps(const MatrixCell* cell) { return cell != nullptr && !cell->tps.empty(); }

std::string format_figure(const MatrixCell* cell, double value) {
  return cell->metric == model::Metric::kDuration ? fmt::format("{:.2f}", value)
                                                  : format_tps(value);
}

std::string figure_title(const MatrixTable& table) {
  return table.metric == model::Metric::kDuration ? "elapsed s (lower is better)" : "tps";
}

bool has_checkpoint(const MatrixTable& table) {
  return std::any_of(table.cells.begin(), table.cells.end(), [](const MatrixCell& cell) {
    return std::isfinite(cell.checkpoint_median.count());
  });
}

std::string checkpoint_text(const MatrixCell* cell) {
  if (cell == nullptr || !std::isfinite(cell->checkpoint_median.count())) return "-";
  return fmt::format("{:.2f}", cell->checkpoint_median.count());
}

std::string median_text(const MatrixCell* cell) {
  if (cell == nullptr) return "";
  std::string text = has_tps(cell) ? format_figure(cell, cell->tps_median) : "failed";
  if (cell->failed_runs > 0 && has_tps(cell)) text += "*";
  return text;
}

std::string range_text(const MatrixCell* cell) {
  if (!has_tps(cell) || cell->tps.size() < 2) return "";
  return fmt::format("{}-{}", format_figure(cell, cell->tps_min),
                     format_figure(cell, cell->tps_max));
}

std::string p99_text(const MatrixCell* cell) {
  if (cell == nullptr || !std::isfinite(cell->p99_median.count())) return "-";
  return fmt::format("{:.3f}", cell->p99_median.count());
}

bool has_p99(const MatrixTable& table) {
  return std::any_of(table.cells.begin(), table.cells.end(),
                     [](const MatrixCell& cell) { return std::isfinite(cell.p99_median.count()); });
}

std::string latency_text(const MatrixCell* cell) {
  if (!has_tps(cell)) return "";
  return fmt::format("{:.3f}", cell->latency_median.count());
}

std::string dominant_text(const MatrixCell* cell) {
  if (cell == nullptr || cell->dominant_wait.empty()) return "";
  return fmt::format("{} {:.0f}%", cell->dominant_wait, cell->dominant_share * 100);
}

std::string repeats_text(const MatrixTable& table) {
  size_t fewest = SIZE_MAX, most = 0;
  for (const auto& cell : table.cells) {
    fewest = std::min(fewest, cell.tps.size());
    most = std::max(most, cell.tps.size());
  }
  if (most == 0) return "no completed runs";
  if (fewest == most) return fmt::format("{} repeat{}", most, most == 1 ? "" : "s");
  return fmt::format("{}-{} repeats", fewest, most);
}

std::vector<std::string> failed_notes(const MatrixTable& table) {
  std::vector<std::string> notes;
  for (const auto& cell : table.cells) {
    if (cell.failed_runs == 0) continue;
    notes.push_back(fmt::format("{} at {} clients: {} of {} runs failed",
                                variant_label(cell.variant), cell.clients, cell.failed_runs,
                                cell.failed_runs + static_cast<int>(cell.tps.size())));
  }
  return notes;
}

std::string error_source_name(ShareError source) {
  switch (source) {
    case ShareError::kRepeats:
      return "repeats";
    case ShareError::kSampling:
      return "sampling";
    case ShareError::kNone:
      break;
  }
  return "";
}

std::string majors_text(const MatrixTable& table) {
  return fmt::format("{}", fmt::join(table.mixed_majors, ", "));
}

}  // namespace pgwaitprof::exporters::matrix_detail
