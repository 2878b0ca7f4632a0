// Files of a run directory are written atomically: a temporary file, fsync, rename, fsync of
// the directory. A reader never sees half a report.
#pragma once

#include <filesystem>
#include <string_view>

namespace pgwaitprof::daemon {

// Throws std::runtime_error "could not write file "PATH": REASON".
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace pgwaitprof::daemon
