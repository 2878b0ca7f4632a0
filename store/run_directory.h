// The run directory, <data_dir>/runs/<run_id>/: its one writer and its one reader. report.json
// is the source of truth; every other file is rendered from it. Every file is written
// atomically (store/atomic_file.h) with mode 0640. The renderings come from the caller (the
// renderers are above the store: exporters/render/report_render.h lists a run's files).
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "base/expected.h"
#include "model/run.h"

namespace pgwaitprof::store {

// "20261129-215116-0b34-readme-c8": UTC time, 16 random bits, the label's safe characters.
std::string make_run_id(std::string_view label = "");

// Renders a run into the text of one of its files.
using RenderRun = std::string (*)(const model::Run&);

// A file of a run directory and how it is rendered.
struct RunFile {
  const char* name;
  RenderRun render;
};

// Where write_run_directory is: every rendering staged, report.json written, all in place.
enum class RunWriteStep { kStaged, kCommitted };

// The files, so that every one of them says the same state whatever ends the process: every
// file is staged first (a temporary file beside its place, fsynced), then report.json is
// renamed into place (the commit point: until then it says unfinished and no rendering is in
// place), then the renderings. A process killed between the commit and
// the last rename leaves renderings staged, which finish_interrupted_writes puts in place. On
// the first failure (a full disk) it stops, leaves no temporary file, and returns "could not
// write file "PATH": REASON". `at_step` is called at each step (fault injection in tests).
[[nodiscard]] base::Status write_run_directory(
    const std::filesystem::path& dir, const model::Run& run, std::span<const RunFile> files,
    const std::function<void(RunWriteStep)>& at_step = {});

// What a pgwaitprof killed while it wrote files left in `root` and the run and matrix
// directories under it (ROOT/*, ROOT/*/*, ROOT/*/*/runs/*): the temporary files of processes
// that are gone. A run directory's staged renderings are put in place when its report.json is
// final (they are that report's); otherwise, and for every other file, they are removed.
// Returns the temporary files handled.
int finish_interrupted_writes(const std::filesystem::path& root);

// The files other than report.json removed: after a failure they could contradict the
// report.json that says why the run failed.
void remove_rendered_files(const std::filesystem::path& dir, std::span<const RunFile> files);

// A report.json (rendered by `report_json`) that says the run is unfinished (failed, with
// why), written when the run starts: a pgwaitprof killed mid-run (SIGKILL, the OOM killer, a
// reboot) leaves a run marked failed with a reason, never one without a status. The final
// report replaces it.
[[nodiscard]] base::Status write_unfinished_report(const std::filesystem::path& dir, model::Run run,
                                                   RenderRun report_json);

// Whether `run` is the report write_unfinished_report wrote (its process never replaced it).
bool is_unfinished_report(const model::Run& run);

// A run from a run directory or a report.json path. The error is one line ("could not open
// report ...", "could not read report ...: ...").
base::Expected<model::Run> read_run(const std::filesystem::path& dir_or_report);

}  // namespace pgwaitprof::store
