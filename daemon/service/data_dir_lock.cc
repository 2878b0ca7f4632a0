// The data directory's lock file.
#include "daemon/service/data_dir_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace pgwaitprof::service {

base::Expected<DataDirLock> DataDirLock::acquire(const std::filesystem::path& data_dir) {
  const auto path = data_dir / "pgwaitprof.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return base::Error{
        fmt::format("could not open lock file \"{}\": {}", path.string(), std::strerror(errno))};
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int failure = errno;
    char holder[32] = {};
    [[maybe_unused]] auto got = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    if (failure == EWOULDBLOCK) {
      std::string pid(holder);
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      return base::Error{
          fmt::format("data directory \"{}\" is in use by another pgwaitprof daemon{}",
                      data_dir.string(), pid.empty() ? "" : " (pid " + pid + ")")};
    }
    return base::Error{
        fmt::format("could not lock file \"{}\": {}", path.string(), std::strerror(failure))};
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The lock holds without the pid; it only makes a second daemon's message less precise.
  }
  return DataDirLock(fd);
}

DataDirLock::~DataDirLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace pgwaitprof::service
