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

namespace pgwaitprof::exporters::report_detail {

struct SectionTable {
  std::string title;
  std::vector<std::string> notes;  // sentences under the title
  std::vector<std::string> header;
  std::vector<bool> right_aligned;
  std::vector<std::vector<std::string>> rows;
  // Per row, the wait classes and their shares (statements' stacked bars in HTML); may be empty.
  std::vector<std::vector<std::pair<std::string, double>>> bars;
};

// None when the server was not on this host (no kernel times were read).
std::optional<SectionTable> kernel_section(const model::Run& run);
// None when no Lock wait was looked up.
std::optional<SectionTable> lock_section(const model::Run& run);
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
std::vector<SectionTable> explaining_sections(const model::Run& run);

// The profile's CPU row split by the kernel (server on this host). A sampled CPU backend is
// runnable (the kernel state of each one without a wait event is read: sleeping ones are rows of
// their own); whether it was on a CPU or queued for one is not sampled, so the row is split in
// the ratio the server processes' runnable time had over the table's window
// (/proc/<pid>/schedstat: time on a CPU against time on the run queue). None for any other row,
// or when kernel times were not read.
struct CpuSplit {
  double on_cpu_aas = 0;
  double runqueue_aas = 0;
  double on_cpu_share = 0;  // of the table's non-idle samples, like the row's share
  double runqueue_share = 0;

  // The two sub-rows the renderers show under the CPU row, on a CPU first.
  struct SubRow {
    const char* label;
    const char* meaning;
    double share;
    double aas;
  };
  std::array<SubRow, 2> sub_rows() const {
    return {{{"on a CPU (schedstat)",
              "the part of the CPU row that ran: the server processes' share of runnable time on "
              "a CPU (/proc/<pid>/schedstat)",
              on_cpu_share, on_cpu_aas},
             {"waiting for a CPU",
              "the part of the CPU row that was runnable but queued for a core, in the same ratio",
              runqueue_share, runqueue_aas}}};
  }
};
std::optional<CpuSplit> cpu_split(const model::Run& run, const ProfileTable& table,
                                  const ProfileRow& row);

// Average sessions of a kernel time over the run (seconds / run duration).
double kernel_aas(const model::Run& run, const std::string& group, bool runqueue);

}  // namespace pgwaitprof::exporters::report_detail
