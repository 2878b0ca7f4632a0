// The embedded default target: a scratch PostgreSQL cluster in a temporary directory (initdb,
// unix socket only, a free port, run as an unprivileged account when we are root, with
// pg_wait_sampling preloaded when it is installed), removed again when done.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "daemon/process.h"

namespace pgwaitprof::daemon {

struct ScratchOptions {
  bool keep = false;  // leave the cluster running and its directory in place
  std::map<std::string, std::string> settings;  // extra postgresql.conf settings
};

class ScratchCluster {
 public:
  // Creates and starts the cluster; throws std::runtime_error with a one-line message.
  explicit ScratchCluster(ScratchOptions options = {});
  ScratchCluster(const ScratchCluster&) = delete;
  ScratchCluster& operator=(const ScratchCluster&) = delete;
  ~ScratchCluster();

  // libpq connection string for the cluster's superuser.
  std::string conninfo() const;
  const std::filesystem::path& directory() const { return directory_; }
  const std::filesystem::path& bin_dir() const { return bin_dir_; }
  bool wait_sampling_preloaded() const { return wait_sampling_; }
  int port() const { return port_; }

  void restart();
  // Stops the server and removes the directory (unless kept); safe to call twice.
  void destroy();

 private:
  void pg_ctl(const std::vector<std::string>& arguments);

  ScratchOptions options_;
  std::optional<RunAs> run_as_;
  std::filesystem::path directory_;
  std::filesystem::path bin_dir_;
  int port_ = 0;
  bool wait_sampling_ = false;
  bool running_ = false;
};

// A TCP port nobody listens on right now, for the cluster's socket name.
int free_port();

}  // namespace pgwaitprof::daemon
