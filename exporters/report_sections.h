// The report sections that explain the waits: the kernel's view (time on a CPU and on the run
// queue), who blocked the lock waits, and which statements waited on what. Each is built once
// as a table here; the text, Markdown and HTML renderers only lay it out, so the formats never
// disagree on a number.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "daemon/model/run.h"

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

// Average sessions of a kernel time over the run (seconds / run duration).
double kernel_aas(const model::Run& run, const std::string& group, bool runqueue);

}  // namespace pgwaitprof::exporters::report_detail
