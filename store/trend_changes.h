// Change points in the run history (`trend`'s default): per group, the series of tps, p99
// latency and the AAS of each wait event that reaches a share, each searched for change points
// (model/change_points.h: E-Divisive with means and its permutation test); each change point
// explained by the step of tps and p99 between the whole segments on each side (Welch's test on
// log, as `compare`), the wait events whose AAS moved most across it (and whether beyond the
// noise between runs, as `compare` judges them), and what else changed at that run (server
// version, kernel, host, pgwaitprof's own version, settings). Failed and interrupted runs are kept
// out and named; a group with runs of different workloads is refused with the filter that splits
// it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/expected.h"
#include "model/change_points.h"
#include "model/statistics.h"
#include "store/run_summary.h"

namespace pgwaitprof::store {

struct ChangeOptions {
  std::string group_by;  // as TrendOptions::group_by
  model::ChangePointOptions method;
  double wait_share = 0.05;  // waits reaching this share of the non-idle samples in some run
  size_t explained_waits = 3;
};

// A wait event before and after a change point (the same segments as the step), as the mean of
// its runs: its AAS, its share of DB time (of the non-idle AAS) and its time a transaction (AAS
// / tps, in ms: what it adds to each transaction's time in the server, so that runs of another
// tps compare, and what the moves of a step in latency add up to).
struct WaitShift {
  std::string wait;
  double before = 0, after = 0;  // AAS
  double share_before = 0, share_after = 0;
  double ms_before = 0, ms_after = 0;  // a transaction
  // Whether the time a transaction moved beyond the noise between runs; nullopt when unknown.
  std::optional<bool> significant;
};

struct AttributeChange {
  // "server_version", "kernel", "host", "pgwaitprof_version" (an unknown one: "unknown"),
  // "setting shared_buffers"
  std::string name;
  std::string before, after;
};

// One metric's series over a group's completed runs that have it.
struct MetricSeries {
  std::string metric;        // "tps", "p99 ms", "AAS <wait>"
  std::vector<size_t> runs;  // indexes into GroupChanges::runs
  std::vector<double> values;
  model::ChangePoints found;
};

struct TrendChange {
  std::string metric;
  size_t run = 0;  // index into GroupChanges::runs: the first run of the new level
  std::string run_id;
  model::ChangePoint point;
  size_t runs_before = 0, runs_after = 0;  // in the segments compared
  // Welch's test on log between the segments (tps, p99); nullopt for AAS series, which may be 0.
  std::optional<model::AbTest> test;
  // The waits whose time a transaction moved most (beyond the noise first, then by the size
  // of the move), at most ChangeOptions::explained_waits.
  std::vector<WaitShift> waits;
  std::vector<AttributeChange> changed;
};

struct GroupChanges {
  std::string group;
  std::vector<RunSummary> runs;      // completed, oldest first
  std::vector<std::string> skipped;  // ids of failed or interrupted runs ("ID (failed)")
  size_t runs_needed = 0;
  std::vector<MetricSeries> series;
  std::vector<TrendChange> changes;  // by run, then tps, p99, waits
  size_t more_runs_needed() const {
    return runs.size() < runs_needed ? runs_needed - runs.size() : 0;
  }
};

struct TrendChanges {
  std::string group_by;
  std::string method;  // one sentence
  std::vector<GroupChanges> groups;
};

// `runs` in any order. An error (the usage error's line) when a group mixes workloads or load
// generator commands, naming the filter or --group-by that splits them.
base::Expected<TrendChanges> find_trend_changes(std::vector<RunSummary> runs,
                                                const ChangeOptions& options = {});

// The change points of one group's runs (repeats of one configuration, in any order) that its
// newest run brought: those the analysis of all of them finds and the analysis without the
// newest did not (by metric and first run of the new level). What the daemon reports after a
// run; stateless, so a restart neither repeats nor loses one.
base::Expected<std::vector<TrendChange>> new_change_points(std::vector<RunSummary> runs,
                                                           const ChangeOptions& options = {});

// How a metric's series is searched ("tps", "p99 ms", "AAS <wait>"): throughput and latency on
// the log scale (their noise is a ratio); the end test looks for a regression (tps falling,
// latency and waits rising), the permutation test for either direction.
model::ChangePointOptions method_for(const std::string& metric,
                                     const model::ChangePointOptions& method);

// AAS of a wait (display name) in a run: its share of the non-idle samples x the run's AAS.
double wait_aas(const RunSummary& run, const std::string& wait);

}  // namespace pgwaitprof::store
