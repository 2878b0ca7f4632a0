// The report sections that explain the waits: the kernel's view (time on a CPU and on the run
// queue), who blocked the lock waits, and which statements waited on what. Each is built once
// as a table here; the text, Markdown and HTML renderers only lay it out, so the formats never
// disagree on a number.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "exporters/render/report_common.h"
#include "model/run.h"
#include "model/summary.h"

namespace pgwaitprof::exporters::report_detail {

struct SectionTable {
  std::string title;
  std::string anchor;              // the HTML heading's id, for links to it; "" for none
  std::vector<std::string> notes;  // sentences under the title
  std::vector<std::string> header;
  std::vector<bool> right_aligned;
  std::vector<std::vector<std::string>> rows;
  // Per row, the wait classes and their shares (statements' stacked bars in HTML); may be empty.
  std::vector<std::vector<std::pair<std::string, double>>> bars;
};

// None when the server was not on this host (no kernel times were read).
std::optional<SectionTable> kernel_section(const model::Summary& summary);
// None when no Lock wait was looked up.
std::optional<SectionTable> lock_section(const model::Run& run, const model::Summary& summary);
// None when the run sampled no query id (then run.statements_note says why, if known).
std::optional<SectionTable> statements_section(const model::Run& run, size_t top = 10);

// None without --checkpoint-after: how long the CHECKPOINT after the load took, and the waits
// of its intervals (all backends: the checkpointer's own writes and fsyncs are the point).
std::optional<SectionTable> checkpoint_section(const model::Run& run, size_t top = 10);

// None when the run was written outside a data directory: where a repeat of the run should land
// (tps and its largest waits' shares), from the comparable earlier runs; a title and a note
// alone when there were too few of them.
std::optional<SectionTable> run_to_run_section(const model::Run& run);

// The sections the text and Markdown reports lay out after the timeline, in their order: run
// to run, kernel view, lock waits, statements, checkpoint; those the run has.
std::vector<SectionTable> explaining_sections(const model::Run& run, const model::Summary& summary);

// "Where the CPU went" (--cpu-profile), under the wait table: the client backends' top
// functions by self time with their share of the on-CPU samples and the AAS they stand for,
// kernel and user told apart, the stalls in which the CPU share rose with their own; then the
// busiest background process type's, when it was busy. Empty without a CPU profile.
std::vector<SectionTable> cpu_sections(const model::Run& run, const model::Summary& summary);
inline constexpr const char* kCpuAnchor = "cpu";
// The line under the wait table that leads from its CPU row to those sections; "" without them.
std::string cpu_row_note(const model::Summary& summary);

// The two sub-rows the renderers show under the CPU row (model::CpuSplit), on a CPU first.
struct CpuSubRow {
  const char* label;
  const char* meaning;
  double share;
  double aas;
};
std::array<CpuSubRow, 2> cpu_sub_rows(const model::CpuSplit& split);

}  // namespace pgwaitprof::exporters::report_detail
