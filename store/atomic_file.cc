// Atomic file replacement.
#include "store/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace pgwaitprof::store {

std::filesystem::path staged_path(const std::filesystem::path& path) {
  return path.string() + ".tmp." + std::to_string(::getpid());
}

base::Status stage_file(const std::filesystem::path& path, std::string_view content, mode_t mode,
                        std::optional<FileOwner> owner) {
  const auto temporary = staged_path(path);
  auto fail = [&](const char* what, int fd) -> base::Status {
    const int failure = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(temporary.c_str());
    return base::Error{
        fmt::format("could not {} file \"{}\": {}", what, path.string(), std::strerror(failure))};
  };
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return fail("create", -1);
  // The umask may have taken bits off; the mode is what we promise, no more and no less.
  if (::fchmod(fd, mode) != 0) return fail("change mode of", fd);
  if (owner && ::fchown(fd, owner->uid, owner->gid) != 0) return fail("change owner of", fd);
  size_t written = 0;
  while (written < content.size()) {
    const auto got = ::write(fd, content.data() + written, content.size() - written);
    if (got < 0) {
      if (errno == EINTR) continue;
      return fail("write", fd);
    }
    written += static_cast<size_t>(got);
  }
  if (::fsync(fd) != 0) return fail("fsync", fd);
  if (::close(fd) != 0) return fail("close", -1);
  return std::nullopt;
}

base::Status publish_staged_file(const std::filesystem::path& path,
                                 const std::filesystem::path& staged) {
  if (::rename(staged.c_str(), path.c_str()) != 0) {
    const int failure = errno;
    ::unlink(staged.c_str());
    return base::Error{
        fmt::format("could not rename file \"{}\": {}", path.string(), std::strerror(failure))};
  }
  const auto directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return std::nullopt;
}

base::Status write_file_atomically(const std::filesystem::path& path, std::string_view content,
                                   mode_t mode, std::optional<FileOwner> owner) {
  if (auto failed = stage_file(path, content, mode, owner)) return failed;
  return publish_staged_file(path, staged_path(path));
}

base::Status create_private_directories(const std::filesystem::path& path, mode_t mode) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return std::nullopt;
  if (path.has_parent_path() && path.parent_path() != path) {
    if (auto failed = create_private_directories(path.parent_path(), mode)) return failed;
  }
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) {
    return base::Error{
        fmt::format("could not create directory \"{}\": {}", path.string(), std::strerror(errno))};
  }
  return std::nullopt;
}

base::Expected<std::optional<mode_t>> claim_data_directory(const std::filesystem::path& path) {
  if (auto failed = create_private_directories(path, kDataDirectoryMode)) return *failed;
  // The checks and the change on one open directory: a rename in between changes nothing.
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return base::Error{fmt::format("could not open data directory \"{}\": {}", path.string(),
                                   std::strerror(errno))};
  }
  const std::unique_ptr<const int, void (*)(const int*)> closer(
      &fd, [](const int* open) { ::close(*open); });
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    return base::Error{fmt::format("could not stat data directory \"{}\": {}", path.string(),
                                   std::strerror(errno))};
  }
  if (status.st_uid != ::geteuid()) {
    return base::Error{fmt::format(
        "data directory \"{}\" is owned by uid {}, not by this user (uid {}): run as its owner",
        path.string(), status.st_uid, ::geteuid())};
  }
  const mode_t mode = status.st_mode & 07777;
  if ((mode & (S_IWGRP | S_IRWXO)) == 0) return std::optional<mode_t>();
  if (::fchmod(fd, kDataDirectoryMode) != 0) {
    return base::Error{
        fmt::format("could not change mode of data directory \"{}\" from {:04o} to "
                    "{:04o}: {}",
                    path.string(), mode, kDataDirectoryMode, std::strerror(errno))};
  }
  return std::optional<mode_t>(mode);
}

}  // namespace pgwaitprof::store
