// What the report renderers share: the profile table (grouped, top-N with an "other" row, idle
// apart), per-interval timeline rows, and the formatting of settings, sizes and command lines.
// Every format reads these so that text, Markdown, CSV and HTML never disagree on a number.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exporters/render/render_options.h"
#include "model/run.h"
#include "model/run_estimates.h"

namespace pgwaitprof::exporters::report_detail {

struct ProfileRow {
  std::vector<std::string> fields;  // the grouping columns, as in profile.csv
  std::string label;                // as in the text table: "Lock | transactionid", "CPU", ...
  std::string wait_class;           // wait_event_type when the grouping has one (for colours)
  bool other = false;               // the sum of the rows beyond top-N
  size_t other_rows = 0;            // how many rows "other" stands for
  model::WaitStat stat;             // count, share, AAS and their standard errors
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
  std::string note;            // what the shares are of, when that is not obvious
  model::SteadyWindow window;  // the part of the run the table covers
};

// `full_keys`: with the default grouping, one row per (backend_type, state, wait_event_type,
// wait_event), as profile.csv has; otherwise rows merge on "type | event" as the hackers do.
// options.top <= 0 keeps every row.
ProfileTable profile_table(const model::Run& run, const RenderOptions& options, bool full_keys);

// The wait classes of the timeline columns, in the order of the stacked chart (bottom first).
inline constexpr std::array<std::string_view, 7> kTimelineClasses = {"CPU", "LWLock", "Lock", "IO",
                                                                     "IPC", "Client", "other"};

struct TimelineRow {
  double start_s = 0;
  double duration_s = 0;
  uint64_t snapshots = 0;
  const model::LoadgenProgress* loadgen = nullptr;  // null when the load generator said nothing
  const model::HostCpu* cpu = nullptr;
  const model::LatencySummary* latency = nullptr;  // null without pgbench's transaction log
  // Client backends' average sessions on a CPU and waiting for one (schedstat); unset when the
  // server is not on this host.
  std::optional<double> oncpu_aas, runq_aas;
  std::array<double, kTimelineClasses.size()> aas{};        // per kTimelineClasses, non-idle
  std::vector<std::pair<std::string, double>> aas_by_type;  // every wait_event_type seen
  double aas_total = 0;
  std::string dominant_wait;    // display name of the most sampled non-idle wait, "" if none
  std::string background;       // "av ch"
  bool stalled = false;         // inside one of run.stalls
  bool sampler_outage = false;  // the sampler was disconnected during part of it
  // The server's transactions per second (pg_stat_database) beside the load generator's own;
  // unset when not read, or when the timeline's tps is the server's.
  std::optional<double> server_tps;
  // server_tps is a reading's mean spread over more than this interval (model::TimelineSlice).
  bool server_tps_spread = false;
};

// The server's tps of a row as the tables print it: "1683.0", "~1683.0" where it is a reading
// spread over more than the interval, "-" where there is none.
std::string server_tps_cell(const TimelineRow& row);

std::vector<TimelineRow> timeline_rows(const model::Run& run);

// Which extra throughput columns a run's timeline has: the server's tps beside the load
// generator's own (not when the timeline's tps is already the server's), sysbench's qps and
// latency percentile (the percentile's name, e.g. "p95 ms", "" for none).
struct ThroughputColumns {
  bool server_tps = false;
  bool qps = false;
  std::string percentile;
};
ThroughputColumns throughput_columns(const model::Run& run);

// "<builtin: TPC-B (sort of)>" stays as is; an argument the shell would split or expand is
// single-quoted, so the command line can be pasted back into a shell.
std::string shell_join(const std::vector<std::string>& argv);

// pg_settings' value and unit ("1048576", "8kB") as SHOW prints it ("8GB"); "" when the unit
// is not a size or a time, or SHOW would print the same.
std::string setting_show_value(const model::Setting& setting);
// "shared_buffers = 1048576 8kB = 8GB (configuration file)"
std::string setting_line(const model::Setting& setting);

std::string format_bytes(uint64_t bytes);                 // "251.7 GiB"
std::string format_seconds(double seconds);               // "17", "0.384"
std::string format_optional(double value, int decimals);  // "" for NaN

// A standard error as the tables print it: "-" when it was not estimated or the run was too
// short for a reliable estimate (say so instead of printing a number).
std::string error_text(double standard_error, bool reliable, int decimals);
// The error a chart draws: 0 where error_text would print "-".
double drawn_error(double standard_error, bool reliable);

// The run's tps as a report leads with it: the load generator's whole-run figure (the same as
// pgbench printed), then the steady state's mean with its 95 % interval and window, and the
// warm-up in one clause: "284.0 (pgbench, whole run); steady state 290.5 ± 5.1 over 5-15 s
// (95 % CI, batch means ...); first 5 s trimmed as warm-up (MSER-5)". "" when there is none.
std::string tps_headline_text(const model::Run& run, const model::SteadyWindow& window);

// The meaning of each wait event row of a table grouped by wait event, largest first: (label,
// meaning) for the legends of the Markdown and HTML reports; rows without one are left out.
std::vector<std::pair<std::string, std::string>> row_meanings(const model::Run& run,
                                                              const ProfileTable& table);
// The meaning of one row ("" when unknown or the row is not a wait event).
std::string row_meaning(const model::Run& run, const ProfileRow& row);

// "p50 1.92, p95 4.10, p99 8.31, max 41.2 ms (51234 transactions from pgbench's log)", or "".
std::string latency_percentiles_text(const model::Run& run);

// The "status" a human must not miss: "FAILED: ...", "INTERRUPTED: ...", or "" when completed.
std::string status_banner(const model::Run& run);
std::string sampler_line(const model::SamplerInfo& sampler);
// The sampler's kernel check (model/kernel_check.h) as one line; "" where it has nothing to say.
std::string kernel_check_line(const model::Run& run);
// pgbench's own summary lines ("tps = 7659.733333 (without initial connection time)").
std::vector<std::string> loadgen_summary_lines(const model::LoadgenSummary& summary);

// Mean tps over the timeline, for runs without a load generator summary.
std::optional<double> timeline_mean_tps(const model::Run& run);

}  // namespace pgwaitprof::exporters::report_detail
