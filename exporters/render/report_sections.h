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

// The kernel's figures beside the profile's CPU row (server on this host): the server
// processes' time on a CPU and runnable on the run queue over the table's window, from
// /proc/<pid>/schedstat, measured and not sampled. A true sampler's CPU row lies between the
// two (a sampled CPU backend is on a CPU or queued for one; run-queue time also hides in other
// waits): the activity source's falls short of the first on a busy host. None for any other
// row, or when kernel times were not read.
struct CpuSplit {
  double on_cpu_aas = 0;
  double runqueue_aas = 0;
  double on_cpu_share = 0;  // in the table's share units: AAS x the row's share per AAS
  double runqueue_share = 0;

  // The two sub-rows the renderers show under the CPU row, on a CPU first.
  struct SubRow {
    const char* label;
    const char* meaning;
    double share;
    double aas;
  };
  std::array<SubRow, 2> sub_rows() const {
    return {{{"kernel: on a CPU",
              "the server processes' time on a CPU over the same window, measured by the kernel "
              "(/proc/<pid>/schedstat), beside the sampled CPU row",
              on_cpu_share, on_cpu_aas},
             {"kernel: waiting for a CPU",
              "their time runnable but queued for a core, in any wait (a woken backend keeps its "
              "wait event until it gets a core)",
              runqueue_share, runqueue_aas}}};
  }
};
std::optional<CpuSplit> cpu_split(const model::Run& run, const ProfileTable& table,
                                  const ProfileRow& row);

// Average sessions of a kernel time over the run (seconds / run duration).
double kernel_aas(const model::Run& run, const std::string& group, bool runqueue);

}  // namespace pgwaitprof::exporters::report_detail
