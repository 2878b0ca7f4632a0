// What a run id may be: the form store::make_run_id gives, and its run directory's name. The
// results database takes a run only under such an id (a report edited to claim another run's
// id, or holding a path as its id, is refused).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "base/expected.h"

namespace pgwaitprof::store {

// Whether `id` has the form make_run_id gives: "YYYYMMDD-HHMMSS-XXXX" (4 hex digits), then
// "-" and up to 40 of [A-Za-z0-9_-] not ending in "-" when the label gave a suffix. Nothing
// else is a run id: not a path ("../../../tmp/evil"), not empty.
bool valid_run_id(std::string_view id);

// The run id of a report read from `dir`: one pgwaitprof makes, and the directory's own name
// (a matrix's run directory, <data_dir>/matrix/NAME/runs/CELL, is named by its cell instead).
// "run directory "DIR" holds run id "ID", not one pgwaitprof makes" or "..., not its own name".
base::Status check_run_id(const std::string& id, const std::filesystem::path& dir);

}  // namespace pgwaitprof::store
