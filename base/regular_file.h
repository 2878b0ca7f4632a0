// Files the user names (configurations, plans, reports, journals) are read only when they are
// regular files: opened with O_NONBLOCK, so that a FIFO or a device neither blocks the open
// nor the read, then checked with fstat on the open descriptor (no race with a rename). A FIFO
// given as a plan once made `pgwaitprof matrix` wait forever with no output.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/expected.h"

namespace pgwaitprof::base {

// The file's bytes. Errors, one line each: "could not open WHAT "PATH": REASON", "WHAT "PATH"
// is not a regular file (it is a FIFO)", "WHAT "PATH" is too large (more than N KiB)", "could
// not read WHAT "PATH": REASON"; the path as `shown` gives it (the caller's quoting), else in
// double quotes.
Expected<std::string> read_regular_file(const std::filesystem::path& path, std::string_view what,
                                        std::size_t max_bytes = std::size_t{64} << 20,
                                        std::string_view shown = {});

// A /proc file's text, empty when it cannot be opened or read: a process that exits while it is
// read makes read() fail with ESRCH, which std::ifstream's buffer turns into an exception
// ("basic_filebuf::underflow error reading the file: No such process", which ended a matrix in
// CI on 2026-12-06 as its scratch postmasters stopped).
std::string read_proc_text(const std::string& path);
// The rest of an open descriptor's bytes (to its end or the first failed read); closes it.
std::string read_and_close(int fd);

}  // namespace pgwaitprof::base
