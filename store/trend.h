// The trend of a figure across runs: tps per run in time order (within groups of a recorded
// attribute when asked), each run checked against the noise of the runs before it with a robust
// control limit, and the AAS of the top wait classes beside it.
//
// The rule: a run is flagged when its tps, widened by its own 95 % confidence interval, lies
// outside the control band of the previous `window` completed runs of its group (at least
// `min_baseline` of them): exp(median +- 3 x 1.4826 x MAD) of their log tps. Throughput noise is
// multiplicative (a busy host costs a fraction of tps), hence logs: the band is a ratio around
// the median. 1.4826 x MAD estimates the standard deviation of normal noise and is not moved by
// one outlier; a run that changes the level is flagged until the window holds mostly runs of
// the new level.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/run_summary.h"

namespace pgwaitprof::store {

struct TrendOptions {
  // "", "server_version", "kernel", "label", "host", "workload" or "setting:NAME".
  std::string group_by;
  size_t window = 5;
  size_t min_baseline = 3;
  double sigmas = 3;
  size_t wait_classes = 3;  // top classes by AAS over all runs shown
};

struct TrendPoint {
  RunSummary run;
  std::string group;
  size_t baseline_runs = 0;
  std::optional<double> baseline_median;
  double lower = 0;  // the control band, in tps
  double upper = 0;
  double change_pct = 0;  // of tps against the baseline median
  std::string flag;       // "", "regression", "improvement"
};

struct Trend {
  std::vector<TrendPoint> points;  // by group, then oldest first
  std::vector<std::string> wait_classes;
  std::string group_by;
  std::string rule;  // the rule in one sentence
};

// The group of a run under `group_by`; "" without grouping, "(unset)" for a setting the run did
// not record (it had its default value).
std::string group_of(const RunSummary& run, const std::string& group_by);
bool valid_group_by(const std::string& group_by);

// `runs` in any order.
Trend build_trend(std::vector<RunSummary> runs, const TrendOptions& options = {});

// Median absolute deviation around the median (not scaled).
double median_absolute_deviation(const std::vector<double>& values, double median);

}  // namespace pgwaitprof::store
