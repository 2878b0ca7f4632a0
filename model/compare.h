// A/B comparison of runs or sets of runs (matrix directories). Per cell (clients, and variant
// where both sides have it): throughput, and p99 latency where the runs have it, tested across
// repeats with Welch's t-test on the log scale (model::welch_log_test): the change with its
// 95 % interval, the p-value, the smallest change the design could detect, and, with too few
// repeats, how many would be needed. With a single run a side, tps is tested against the spread
// between earlier runs of the same configuration when a run's report has one (its run-to-run
// section), else against the noise inside each run (batch means), which cannot see run-to-run
// noise, and says so. Then the wait events whose average active sessions moved, with errors
// from the repeats (or, for a single run, from batch means over its timeline). The decisions and
// their figures; exporters/render/compare.h renders them. A verdict and its detail are the
// decision's own words ("faster", "needs 4 repeats per side ..."), as a MeanEstimate's method.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "model/run.h"
#include "model/scalability.h"
#include "model/statistics.h"

namespace pgwaitprof::model {

// One side's figure: the geometric mean of its runs with its 95 % interval from the repeats;
// for a lone run's tps, the steady-state mean with the interval of its own batch means.
struct SideFigure {
  double value = std::numeric_limits<double>::quiet_NaN();
  std::optional<double> low, high;  // empty with one run and no within-run estimate
  bool within_run = false;          // the interval is a single run's own (batch means)
  // The interval is the run's figure ± t x the sd between its earlier comparable runs.
  bool run_to_run = false;
};

// One metric of a cell (tps, p99 latency), one value per completed run and side.
struct MetricTest {
  std::vector<double> a, b;
  double median_a = 0, median_b = 0;
  SideFigure side_a, side_b;
  // When both sides have a value: Welch's test across repeats, or with one run a side the
  // run-to-run test (test->run_to_run) or the within-run test (test->within_run) of their tps,
  // or only the planning figures.
  std::optional<AbTest> test;
  // "faster"/"slower" (tps), "better"/"worse" (latency), "no significant change", "no verdict"
  // (too few repeats, or single runs too short for batch means), "only in <label>",
  // "no completed runs in <label>".
  std::string verdict;
  std::string detail;  // why, and what would be needed: "needs 4 repeats per side for ..."
};

struct ClassShift {
  std::string wait_class;
  double aas_a = 0, aas_b = 0;  // mean over the cell's runs
};

struct CompareCell {
  std::string variant;  // "" when the sides are not matrices with variants
  int clients = 0;
  MetricTest tps;
  MetricTest p99_ms;                              // empty when the runs have no latency percentiles
  base::Milliseconds latency_a{0}, latency_b{0};  // median of the runs' average latency
  std::vector<ClassShift> classes;                // AAS per wait class on each side
};

// A wait event's AAS in one cell on both sides. Cells are compared separately: a profile at 8
// clients says nothing about one at 128.
struct WaitMove {
  std::string variant;
  int clients = 0;
  std::string wait;  // display name (as side A names it; old and new names are matched)
  double aas_a = 0, aas_b = 0;
  // Standard errors: between repeats when a side has two or more runs, else batch means over
  // the run's timeline; NaN when neither can be estimated.
  double stderr_a = 0, stderr_b = 0;
  double delta = 0;         // aas_b - aas_a
  double relative_pct = 0;  // delta / aas_a * 100; 0 when both are 0, +inf when new on B
  // |delta| beyond the 95 % band of the combined error (Welch's t); nullopt when an error is
  // unknown.
  std::optional<bool> significant;
};

// A function's share of the client backends' on-CPU samples (self time, --cpu-profile) in one
// cell on both sides, with the run-to-run spread as for waits: between repeats when a side has
// two or more runs, else batch means over the run's intervals (their top functions).
struct FunctionMove {
  std::string variant;
  int clients = 0;
  std::string function;  // "LWLockAcquire", "finish_task_switch [kernel]"
  double share_a = 0, share_b = 0;
  double stderr_a = 0, stderr_b = 0;  // NaN when neither can be estimated
  double delta = 0;                   // share_b - share_a
  // |delta| beyond the 95 % band of the combined error; nullopt when an error is unknown.
  std::optional<bool> significant;
};

// The scalability models of one variant on both sides (matrices with at least 4 client counts
// and throughput): sigma, kappa and N* side by side, and whether each differs beyond the two
// intervals (model::compare_figures; not comparable where a side does not constrain it).
struct ScalabilityShift {
  std::string variant;  // as the cells name it ("a vs b" across differently named variants)
  UslFit a, b;
  FigureDifference sigma, kappa, peak_clients;
};

struct Comparison {
  std::string label_a, label_b;
  // The figure of cell.tps: tps, or (every run a fixed-work run) the elapsed seconds, where
  // lower is better: "faster" then means B took less time.
  Metric metric = Metric::kTps;
  std::vector<CompareCell> cells;
  std::vector<WaitMove> waits;  // the largest |delta| of every cell, largest first
  // Where both sides of a cell have CPU profiles: the functions whose share moved most.
  std::vector<FunctionMove> functions;
  // Per variant fitted on both sides; empty for fixed-work runs.
  std::vector<ScalabilityShift> scalability;
};

Comparison compare_runs(const std::vector<Run>& a, const std::vector<Run>& b,
                        std::string label_a = "A", std::string label_b = "B");

// --split-by: the runs of both arguments pooled and regrouped by a recorded environment
// attribute (kernel, cpu_model, server_version, label), which must take exactly two values;
// each side is labelled "kernel 6.1.0". Throws std::invalid_argument otherwise.
struct SplitSides {
  std::vector<Run> a, b;
  std::string label_a, label_b;
};
SplitSides split_by_attribute(std::vector<Run> runs, const std::string& attribute);

}  // namespace pgwaitprof::model
