// What the report renderers share: the formatting of the summary's figures (model/summary.h:
// the profile table, the timeline rows, tps, the kernel check), of settings, sizes and command
// lines. Every format reads these so that text, Markdown, CSV and HTML never disagree.
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
#include "model/summary.h"

namespace pgwaitprof::exporters::report_detail {

using model::kTimelineClasses;
using model::ProfileRow;
using model::ProfileTable;
using model::TimelineRow;

// The server's tps of a row as the tables print it: "1683.0", "~1683.0" where it is a reading
// spread over more than the interval, "-" where there is none.
std::string server_tps_cell(const TimelineRow& row);

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
std::string tps_headline_text(const model::TpsFigures& figures, const model::SteadyWindow& window);

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
std::string kernel_check_line(const model::Run& run, const model::Summary& summary);
// pgbench's own summary lines ("tps = 7659.733333 (without initial connection time)").
std::vector<std::string> loadgen_summary_lines(const model::LoadgenSummary& summary);

}  // namespace pgwaitprof::exporters::report_detail
