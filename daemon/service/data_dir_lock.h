// One daemon per data directory: an exclusive flock on <data_dir>/pgwaitprof.lock, held for the
// daemon's life (the kernel drops it when the process ends, however it ends). A second daemon
// refuses to start instead of taking over the first one's control socket.
#pragma once

#include <filesystem>

#include "base/expected.h"

namespace pgwaitprof::service {

class DataDirLock {
 public:
  // The error names the data directory and the pid of the daemon that holds it.
  static base::Expected<DataDirLock> acquire(const std::filesystem::path& data_dir);
  DataDirLock(DataDirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DataDirLock& operator=(DataDirLock&&) = delete;
  DataDirLock(const DataDirLock&) = delete;
  ~DataDirLock();

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace pgwaitprof::service
