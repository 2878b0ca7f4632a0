// Files of a run directory are written atomically: a temporary file, fsync, rename, fsync of
// the directory. A reader never sees half a report, and a write that fails (a full disk) leaves
// no temporary file behind and the previous version, if any, intact.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string_view>

#include "daemon/engine/expected.h"

namespace pgwaitprof::engine {

// Run and matrix files hold server settings and statements: readable by owner and group only.
inline constexpr mode_t kPrivateFileMode = 0640;
inline constexpr mode_t kPrivateDirectoryMode = 0750;
inline constexpr mode_t kDataDirectoryMode = 0700;

// The error is "could not write file "PATH": REASON".
[[nodiscard]] Status write_file_atomically(const std::filesystem::path& path,
                                           std::string_view content,
                                           mode_t mode = kPrivateFileMode);

// create_directories with `mode` for every directory it creates; the error is
// "could not create directory "PATH": REASON".
[[nodiscard]] Status create_private_directories(const std::filesystem::path& path,
                                                mode_t mode = kPrivateDirectoryMode);

}  // namespace pgwaitprof::engine
