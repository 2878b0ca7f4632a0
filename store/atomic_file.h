// Files of a run directory are written atomically: a temporary file, fsync, rename, fsync of
// the directory. A reader never sees half a report, and a write that fails (a full disk) leaves
// no temporary file behind and the previous version, if any, intact.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string_view>

#include "base/expected.h"

namespace pgwaitprof::store {

// Run and matrix files hold server settings and statements: readable by owner and group only.
inline constexpr mode_t kPrivateFileMode = 0640;
inline constexpr mode_t kPrivateDirectoryMode = 0750;
inline constexpr mode_t kDataDirectoryMode = 0700;

// Whose a file is (chown), for a file written on behalf of another user (root restoring a
// local server's postgresql.auto.conf as the server's OS user).
struct FileOwner {
  uid_t uid;
  gid_t gid;
};

// The error is "could not write file "PATH": REASON".
[[nodiscard]] base::Status write_file_atomically(const std::filesystem::path& path,
                                                 std::string_view content,
                                                 mode_t mode = kPrivateFileMode,
                                                 std::optional<FileOwner> owner = std::nullopt);

// The two halves of write_file_atomically, for a set of files that must appear together: the
// content in the temporary file beside `path` (staged_path: "PATH.tmp.PID"), fsynced; then that
// file renamed to `path` and the directory fsynced. A failure leaves no temporary file.
std::filesystem::path staged_path(const std::filesystem::path& path);
[[nodiscard]] base::Status stage_file(const std::filesystem::path& path, std::string_view content,
                                      mode_t mode = kPrivateFileMode,
                                      std::optional<FileOwner> owner = std::nullopt);
[[nodiscard]] base::Status publish_staged_file(const std::filesystem::path& path,
                                               const std::filesystem::path& staged);

// create_directories with `mode` for every directory it creates; the error is
// "could not create directory "PATH": REASON".
[[nodiscard]] base::Status create_private_directories(const std::filesystem::path& path,
                                                      mode_t mode = kPrivateDirectoryMode);

// The daemon's data directory, made its own: created with kDataDirectoryMode when missing. An
// existing one must belong to this process's user (the error says whose it is), and one that
// others may write to or enter (group write, any bit for others) is tightened to
// kDataDirectoryMode: whoever can write to it could replace the control socket, the lock file
// or the runs. 0700 and the 0750 of the systemd unit are kept. Returns the mode it had when it
// was tightened, for a warning.
[[nodiscard]] base::Expected<std::optional<mode_t>> claim_data_directory(
    const std::filesystem::path& path);

}  // namespace pgwaitprof::store
