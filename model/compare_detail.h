// The parts of compare (model/compare.h) that its files share: the runs of one cell, the
// statistics a move between the sides is tested with (model/moves.h: between repeats, or a lone
// run's batch means; Welch's t on the combined error), and each part's moves of one cell:
// throughput and latency (compare_metrics.cc), wait events and CPU functions (compare_waits.cc),
// the traced source's waits, their counts and durations (compare_traced.cc). Internal to model/.
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/compare_types.h"
#include "model/moves.h"
#include "model/run.h"
#include "model/wait_key.h"

namespace pgwaitprof::model::compare_detail {

// Both sides' runs of one cell.
struct CellRuns {
  std::vector<const Run*> a, b;
  int attempted_a = 0, attempted_b = 0;  // including runs that did not complete
};

// (b - a) / a * 100; 0 when both are 0, +inf when only b has it.
double relative_change_pct(double a, double b);

// Old and new names of one event match (WALWriteLock and LWLock | WALWrite): the key is the
// canonical name.
std::string match_key(const WaitKey& key);

// The noise between repeats of log tps (or elapsed time), pooled over every cell side with two
// or more runs.
std::optional<double> pooled_log_sd(const std::map<std::pair<std::string, int>, CellRuns>& cells,
                                    Metric metric);

// One cell's throughput, p99 latency, average latency and wait classes.
CompareCell make_cell(const std::string& variant, int clients, const CellRuns& runs,
                      std::optional<double> assumed_log_sd, const Comparison& comparison);

// One cell's wait events (AAS), CPU functions (share) and traced waits (count, time, p99),
// every one seen on either side, unsorted.
std::vector<WaitMove> cell_wait_moves(const std::string& variant, int clients,
                                      const CellRuns& runs);
std::vector<FunctionMove> cell_function_moves(const std::string& variant, int clients,
                                              const CellRuns& runs);
std::vector<TracedWaitMove> cell_traced_moves(const std::string& variant, int clients,
                                              const CellRuns& runs);

}  // namespace pgwaitprof::model::compare_detail
