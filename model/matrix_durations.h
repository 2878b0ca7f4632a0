// The traced source's blocking waits in a matrix cell (collectors/trace/ runs): per wait event,
// how many a second and their durations (mean, p50, p99, longest), so that a sweep shows how a
// wait's p99 grows with the clients. Means over the cell's traced runs, each run weighing the
// same (as the cell's shares do), with the standard error between repeats.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "model/run.h"

namespace pgwaitprof::model {

struct WaitDurations {
  std::string name;        // display name ("LWLock | WALWrite"), states and backends merged
  std::string wait_class;  // wait_event_type, for colours
  int runs = 0;            // the traced runs with waits of it
  double waits_per_s = 0;  // mean over every traced run of the cell (0 where it had none)
  double waits_per_s_error = std::numeric_limits<double>::quiet_NaN();  // between repeats
  double aas = 0;  // its time per second, mean over every traced run
  // Seconds, means over the runs with waits of it; the longest is the longest of any run.
  double mean_s = 0, p50_s = 0, p99_s = 0;
  double p99_error = std::numeric_limits<double>::quiet_NaN();  // between repeats
  double longest_s = 0;
};

struct CellDurations {
  int traced_runs = 0;  // completed runs of the cell with traced figures in their window
  // Every non-idle event with blocking waits (model/traced_waits.h: load_wait), the most time
  // first.
  std::vector<WaitDurations> events;
  const WaitDurations* find(const std::string& name) const;
};

// The cell's completed runs' traced waits over their steady windows; empty without traced runs.
CellDurations cell_durations(const std::vector<const Run*>& runs);

}  // namespace pgwaitprof::model
