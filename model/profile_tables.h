// The profile tables of a run's summary (model/summary.h): the window's samples grouped as the
// options say, sorted and cut to top-N under an "other" row, with batch-means errors, the traced
// parts of each row and the kernel's split of the CPU row; and the table of every wait event.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/profile.h"
#include "model/run.h"
#include "model/run_estimates.h"

namespace pgwaitprof::model {

// How the profile table groups its samples (report --by).
enum class GroupBy { kWaitEvent, kBackendType, kState, kWaitEventType, kQueryId };

struct SummaryOptions {
  GroupBy by = GroupBy::kWaitEvent;
  int top = 20;               // rows of the profile table (and query ids); the rest is "other"
  bool include_idle = false;  // idle sessions counted in shares
  bool trim = true;           // leave the warm-up MSER-5 finds out of the summary (--no-trim)
  // With the default grouping, one row per (backend_type, state, wait_event_type, wait_event),
  // as profile.csv has; otherwise rows merge on "type | event" as the hackers do.
  bool full_keys = false;
};

// The kernel's figures beside the profile's CPU row (server on this host): the server
// processes' time on a CPU and runnable on the run queue over the table's window, from
// /proc/<pid>/schedstat, measured and not sampled. A true sampler's CPU row lies between the
// two (a sampled CPU backend is on a CPU or queued for one; run-queue time also hides in other
// waits): the activity source's falls short of the first on a busy host.
struct CpuSplit {
  double on_cpu_aas = 0;
  double runqueue_aas = 0;
  double on_cpu_share = 0;  // in the table's share units: AAS x the row's share per AAS
  double runqueue_share = 0;
};

struct ProfileRow {
  std::vector<std::string> fields;  // the grouping columns, as in profile.csv
  std::string label;                // as in the text table: "Lock | transactionid", "CPU", ...
  std::string wait_class;           // wait_event_type when the grouping has one (for colours)
  bool other = false;               // the sum of the rows beyond top-N
  size_t other_rows = 0;            // how many rows "other" stands for
  WaitStat stat;                    // count, share, AAS and their standard errors
  // The CPU row's kernel figures; none for any other row, or when kernel times were not read.
  std::optional<CpuSplit> cpu_split;
  // The traced source's parts of the row's time, its waits and their durations (exact).
  std::optional<TracedTime> traced;
};

struct ProfileTable {
  std::string dimension;             // column title: "wait event", "backend type", ...
  std::string dimension_plural;      // for the "other (3 wait events)" row
  std::vector<std::string> columns;  // grouping column names of profile.csv
  std::vector<ProfileRow> rows;      // ascending by count, the "other" row first
  uint64_t total = 0;                // samples the shares are of
  uint64_t snapshots = 0;
  std::vector<ProfileRow> idle;  // idle sessions, when they are not counted in shares
  uint64_t idle_total = 0;
  std::string note;     // what the shares are of, when that is not obvious
  SteadyWindow window;  // the part of the run it covers (query ids: the whole run)
  double total_aas() const;
  double idle_aas() const;
};

struct ProfileTables {
  ProfileTable profile;  // grouped and cut to top-N as the options say
  ProfileTable waits;    // every wait event, no "other" row; empty with full_keys
};

// The tables of the run's samples in `window`, as `options` say.
ProfileTables profile_tables(const Run& run, const SteadyWindow& window,
                             const SummaryOptions& options);

}  // namespace pgwaitprof::model
