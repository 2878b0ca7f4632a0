// Reading a user-named file as a file.
#include "base/regular_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pgwaitprof::base {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

}  // namespace

Expected<std::string> read_regular_file(const std::filesystem::path& path, std::string_view what,
                                        std::size_t max_bytes, std::string_view shown) {
  const std::string name = shown.empty() ? "\"" + path.string() + "\"" : std::string(shown);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    return Error{fmt::format("could not open {} {}: {}", what, name, std::strerror(errno))};
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat status {};
  if (::fstat(fd, &status) != 0) {
    return Error{fmt::format("could not stat {} {}: {}", what, name, std::strerror(errno))};
  }
  if (!S_ISREG(status.st_mode)) {
    return Error{
        fmt::format("{} {} is not a regular file (it is {})", what, name, kind_of(status.st_mode))};
  }
  // A regular file: reads block as they always do (O_NONBLOCK means nothing for it on Linux,
  // cleared all the same).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return Error{fmt::format("could not read {} {}: {}", what, name, std::strerror(errno))};
    }
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > max_bytes) {
      return Error{
          fmt::format("{} {} is too large (more than {} KiB)", what, name, max_bytes / 1024)};
    }
  }
  return text;
}

std::string read_proc_text(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  return fd < 0 ? std::string() : read_and_close(fd);
}

std::string read_and_close(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;) {
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

}  // namespace pgwaitprof::base
