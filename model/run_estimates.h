// The figures a report states for a run, with errors that respect autocorrelation: the steady
// state (the warm-up MSER-5 finds in the per-interval tps is left out, unless the reader asks
// to keep it), the run's tps with its confidence interval, and the share and AAS of any set of
// wait keys with their standard errors, all from batch means over the timeline (statistics.h),
// never from the binomial formula over snapshots.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "model/run.h"
#include "model/statistics.h"

namespace pgwaitprof::model {

// The part of the timeline the summary figures cover.
// A warm-up is left out only when the run is at least three times as long: a shorter run's
// steady part would be too short to stand for it, so it keeps its warm-up and says so.
struct SteadyWindow {
  size_t first_interval = 0;     // timeline index the window starts at
  base::Seconds excluded{0};     // warm-up left out
  bool trimmed = false;          // trimming was asked for (false: --no-trim)
  bool at_search_limit = false;  // the warm-up may be longer than half the run
  base::Seconds kept{0};  // the warm-up MSER-5 found but left in: the run is under 3 times it
  // "first 5 s trimmed as warm-up (MSER-5)", "warm-up of 5 s kept: the run is shorter than 3
  // times it", or "" when MSER-5 found none.
  std::string description() const;
};

SteadyWindow steady_window(const Run& run, bool trim = true);

// The profile over the window (run.profile itself when the window is the whole run).
Profile window_profile(const Run& run, const SteadyWindow& window);

// Batch-means options for the run's intervals.
BatchMeansOptions batch_options(const Run& run);

// tps over the window: per-interval tps weighted by interval length; nullopt when no interval
// reported tps.
std::optional<MeanEstimate> tps_estimate(const Run& run, const SteadyWindow& window);

// The run's throughput as a report leads with it: the load generator's own whole-run figure
// (pgbench's "tps = ..." line; the server's count over the run for a command or a window),
// and beside it the mean of the per-interval tps over the steady window with its interval.
struct TpsFigures {
  std::optional<double> whole_run;
  std::string whole_run_from;  // "pgbench", "sysbench", "the server"
  // What time whole_run covers: "whole run", or where the server's count covers only part of it
  // (the run's connection was down a while) "3.0 s of the 10.2 s run".
  std::string whole_run_scope;
  std::optional<MeanEstimate> steady;
  base::Seconds steady_from{0};  // the window, in seconds since the run started
  base::Seconds steady_to{0};
};
TpsFigures tps_figures(const Run& run, const SteadyWindow& window);

// Share (of the non-idle samples, or of all with `include_idle`) and AAS of the keys
// `selected` picks, over the window. Errors are NaN when the run has too few intervals.
WaitKeyEstimate estimate_keys(const Run& run, const SteadyWindow& window, bool include_idle,
                              const std::function<bool(const WaitKey&)>& selected);

// How errors are made, in one sentence for reports.
std::string error_method_note();

}  // namespace pgwaitprof::model
