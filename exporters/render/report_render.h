// Report renderers: text (the hackers' table), Markdown, CSV (profile and timeline), folded
// stacks, and one self-contained HTML page with SVG charts. Each reads only a model::Run.
#pragma once

#include <span>
#include <string>

#include "exporters/render/render_options.h"
#include "model/run.h"
#include "store/run_directory.h"

namespace pgwaitprof::exporters {

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
