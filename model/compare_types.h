// The figures of an A/B comparison (compare.h): per cell the throughput and latency tests and
// wait classes, the wait events, CPU functions and traced waits that moved, and the matrices'
// scalability side by side. Their own header so that compare's files (compare_detail.h) share
// them without including compare.h.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "base/time.h"
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

// One figure of a traced wait in one cell on both sides: the mean over the side's traced runs
// with its standard error (between repeats with two runs or more, else batch means over the
// lone run's timeline where that has one; NaN when neither can be estimated).
struct TracedFigure {
  double a = 0, b = 0;
  double stderr_a = std::numeric_limits<double>::quiet_NaN();
  double stderr_b = std::numeric_limits<double>::quiet_NaN();
  double relative_pct = 0;  // (b - a) / a * 100; 0 when both are 0, +inf when new on B
  // |b - a| beyond the 95 % band of the combined error (Welch's t); nullopt when an error is
  // unknown.
  std::optional<bool> significant;
};

// A wait event's blocking waits as the traced source measured them (collectors/trace/), in one
// cell on both sides: how many a second, how much time (AAS: blocked, run queue and on-CPU
// time with the event set, per second of the window), and their p99 duration. Only where both
// sides have traced runs; the waits of the load: idle sessions and background processes asleep
// are left out, as in the rest of compare.
struct TracedWaitMove {
  std::string variant;
  int clients = 0;
  std::string wait;        // display name (as side A names it; old and new names are matched)
  std::string wait_class;  // wait_event_type, for colours
  TracedFigure waits_per_s;
  TracedFigure aas;
  // Seconds; the mean of the runs' p99 over the runs with waits of the event (NaN on a side
  // without any). A lone run's p99 has no error: batches of a short run hold too few waits.
  TracedFigure p99_s;
  uint64_t waits_a = 0, waits_b = 0;  // blocking waits counted on each side, all runs
  // Which figures moved beyond the spread: "waits", "time", "p99" (empty: none, or untested).
  std::vector<std::string> moved;
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
  // Where both sides of a cell have traced runs: the waits that moved beyond the spread first,
  // then the rest by time, at most 15.
  std::vector<TracedWaitMove> traced_waits;
  // Per variant fitted on both sides; empty for fixed-work runs.
  std::vector<ScalabilityShift> scalability;
};

}  // namespace pgwaitprof::model
