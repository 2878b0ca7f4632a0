// A/B comparison of runs or sets of runs (matrix directories). Per cell (clients, and variant
// where both sides have it): throughput, and p99 latency where the runs have it, tested across
// repeats with Welch's t-test on the log scale (model::welch_log_test): the change with its
// 95 % interval, the p-value, the smallest change the design could detect, and, with too few
// repeats, how many would be needed. With a single run a side, tps is tested against the spread
// between earlier runs of the same configuration when a run's report has one (its run-to-run
// section), else against the noise inside each run (batch means), which cannot see run-to-run
// noise, and says so. Then the wait events whose average active sessions moved, with errors
// from the repeats (or, for a single run, from batch means over its timeline), and for traced
// runs the waits whose count, time or p99 duration moved. The decisions and
// their figures; exporters/render/compare.h renders them. A verdict and its detail are the
// decision's own words ("faster", "needs 4 repeats per side ..."), as a MeanEstimate's method.
#pragma once

#include <string>
#include <vector>

#include "model/compare_types.h"
#include "model/run.h"

namespace pgwaitprof::model {

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
