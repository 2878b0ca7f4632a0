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

// report.json and every rendering of it. On the first failure (a full disk) it stops, leaves
// no temporary file, and returns "could not write file "PATH": REASON".
[[nodiscard]] Status write_run_directory(const std::filesystem::path& dir, const model::Run& run);

// A run from a run directory or a report.json path. The error is one line ("could not open
// report ...", "could not read report ...: ...").
Expected<model::Run> read_run(const std::filesystem::path& dir_or_report);

}  // namespace pgwaitprof::engine
