// The run directory, <data_dir>/runs/<run_id>/: its one writer and its one reader. report.json
// is the source of truth; every other file is rendered from it. Every file is written
// atomically (engine/atomic_file.h) with mode 0640.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "daemon/engine/expected.h"
#include "daemon/model/run.h"

namespace pgwaitprof::engine {

// "20261129-215116-0b34-readme-c8": UTC time, 16 random bits, the label's safe characters.
std::string make_run_id(std::string_view label = "");

// Every rendering of the run, then report.json. On the first failure (a full disk) it stops,
// leaves no temporary file, and returns "could not write file "PATH": REASON".
[[nodiscard]] Status write_run_directory(const std::filesystem::path& dir, const model::Run& run);

// The renderings write_run_directory() writes before report.json, removed: after a failure
// they could contradict the report.json that says why the run failed.
void remove_rendered_files(const std::filesystem::path& dir);

// A report.json that says the run is unfinished (failed, with why), written when the run
// starts: a pgwaitprof killed mid-run (SIGKILL, the OOM killer, a reboot) leaves a run marked
// failed with a reason, never one without a status. The final report replaces it.
[[nodiscard]] Status write_unfinished_report(const std::filesystem::path& dir, model::Run run);

// A run from a run directory or a report.json path. The error is one line ("could not open
// report ...", "could not read report ...: ...").
Expected<model::Run> read_run(const std::filesystem::path& dir_or_report);

}  // namespace pgwaitprof::engine
