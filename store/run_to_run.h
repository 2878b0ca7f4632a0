// Run-to-run spread: where a repeat of a run should land, from the same figures over earlier
// comparable runs of the history. A run's own batch-means errors are within-run; on a shared
// machine the variation between identical runs is often many times larger (docs/performance.md,
// "A/A calibration of the error bars"), and only repeats can show it. The report states both.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "model/run.h"
#include "store/run_summary.h"

namespace pgwaitprof::store {

struct RunToRunOptions {
  size_t window = 10;  // the newest comparable runs used: older ones may predate a drift
  size_t needed = 3;   // fewer give no estimate (2 degrees of freedom at least)
  size_t waits = 5;    // the run's largest wait events given a spread, besides tps
};

// Whether `other` repeats `run`'s configuration: a different completed run of the same workload
// and load generator command (clients, duration, options), on the same host, server version
// and recorded non-default settings.
bool comparable(const RunSummary& run, const RunSummary& other);

// The comparable runs of `run` among `history` (newest first, as load_history gives them), at
// most options.window of them.
std::vector<RunSummary> comparable_runs(const RunSummary& run, std::span<const RunSummary> history,
                                        const RunToRunOptions& options = {});

// The spread of tps and of the run's largest wait events' shares over its comparable runs:
// sd between them, and the 95 % half-width t(n - 1) x sqrt(2) x sd of where a repeat should
// land around this run's figure. figures is empty with fewer than options.needed runs.
model::RunToRun run_to_run(const RunSummary& run, std::span<const RunSummary> history,
                           const RunToRunOptions& options = {});

}  // namespace pgwaitprof::store
