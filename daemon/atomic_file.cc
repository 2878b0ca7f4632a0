// Atomic file replacement.
#include "daemon/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

#include <fmt/format.h>

namespace pgwaitprof::daemon {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  auto fail = [&](const char* what) {
    throw std::runtime_error(
        fmt::format("could not {} file \"{}\": {}", what, path.string(), std::strerror(errno)));
  };
  const auto temporary = path.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("create");
  size_t written = 0;
  while (written < content.size()) {
    const auto got = ::write(fd, content.data() + written, content.size() - written);
    if (got < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("write");
    }
    written += static_cast<size_t>(got);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail("rename");
  const auto directory = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace pgwaitprof::daemon
