// Report renderers: text (the hackers' table), Markdown, CSV (profile and timeline), folded
// stacks, and one self-contained HTML page with SVG charts. Each reads only a model::Run.
#pragma once

#include <span>
#include <string>

#include "model/run.h"
#include "store/run_directory.h"

namespace pgwaitprof::exporters {

enum class GroupBy { kWaitEvent, kBackendType, kState, kWaitEventType, kQueryId };

struct RenderOptions {
  GroupBy by = GroupBy::kWaitEvent;
  int top = 20;               // rows of the profile table (and query ids); the rest is "other"
  bool include_idle = false;  // idle sessions counted in shares
  bool trim = true;           // leave the warm-up MSER-5 finds out of the summary (--no-trim)
};

std::string render_text(const model::Run& run, const RenderOptions& options = {});
std::string render_markdown(const model::Run& run, const RenderOptions& options = {});
std::string render_json(const model::Run& run);  // report.json itself, pretty-printed
std::string render_profile_csv(const model::Run& run, const RenderOptions& options = {});
std::string render_timeline_csv(const model::Run& run);
std::string render_folded(const model::Run& run, const RenderOptions& options = {});
std::string render_html(const model::Run& run, const RenderOptions& options = {});

// The files of a run directory with their renderers, in the order store::write_run_directory
// writes them: report.json last.
std::span<const store::RunFile> run_directory_files();

}  // namespace pgwaitprof::exporters
