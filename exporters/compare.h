// A/B comparison of runs or sets of runs (matrix directories): throughput change per cell
// with its noise band, a Mann-Whitney U test where each side has at least 3 repeats, latency
// change, and the wait events whose average active sessions moved most.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "daemon/model/run.h"

namespace pgwaitprof::exporters {

struct CompareCell {
  std::string variant;  // "" when the sides are not matrices with variants
  int clients = 0;
  std::vector<double> tps_a, tps_b;
  double median_a = 0, median_b = 0;
  double change_pct = 0;           // (median_b - median_a) / median_a * 100
  double noise_pct = 0;            // the larger side's (max - min) / median, in percent
  std::optional<double> p_value;   // Mann-Whitney U, two-sided, when both sides have >= 3
  // "faster", "slower", "no significant change"; "only in <label>" or "no completed runs in
  // <label>" when one side has no tps for the cell. With both sides >= 3 repeats and enough of
  // them for the exact test to reach p < 0.05 (not 3+3 or 3+4), p < 0.05 alone decides; else
  // |change_pct| must exceed noise_pct (5% with a single run per side).
  std::string verdict;
  double latency_a_ms = 0, latency_b_ms = 0;
  double latency_change_pct = 0;
};

struct WaitMove {
  std::string wait;  // display name
  double aas_a = 0, aas_b = 0;
  double stderr_a = 0, stderr_b = 0;
  double delta = 0;           // aas_b - aas_a
  double relative_pct = 0;    // delta / aas_a * 100; 0 when both are 0, +inf when new on B
  bool significant = false;   // |delta| > 2 * combined standard error
};

struct Comparison {
  std::string label_a, label_b;
  std::vector<CompareCell> cells;
  std::vector<WaitMove> waits;  // by |delta|, largest first
};

// Two-sided p-value of the Mann-Whitney U test (exact for small samples, normal approximation
// with tie correction otherwise).
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

Comparison compare_runs(const std::vector<model::Run>& a, const std::vector<model::Run>& b,
                        std::string label_a = "A", std::string label_b = "B");

std::string render_comparison_text(const Comparison& comparison);
std::string render_comparison_markdown(const Comparison& comparison);
std::string render_comparison_json(const Comparison& comparison);

}  // namespace pgwaitprof::exporters
