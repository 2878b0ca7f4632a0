// The embedded default target: a scratch PostgreSQL cluster in a temporary directory (initdb,
// unix socket only, a free port, run as an unprivileged account when we are root, with
// pg_wait_sampling preloaded when it is installed), removed again when done. Creation can be
// interrupted at any step (RunControl): whatever was started is stopped and the directory goes.
#pragma once

#include <asio/awaitable.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/expected.h"
#include "base/run_control.h"
#include "daemon/engine/process.h"

namespace pgwaitprof::engine {

struct ScratchOptions {
  bool keep = false;  // leave the cluster running and its directory in place
  std::map<std::string, std::string> settings;  // extra postgresql.conf settings
};

class ScratchCluster {
 public:
  // Creates and starts a cluster; the error is one line ("initdb failed: ...", or the reason of
  // the interrupt).
  static asio::awaitable<base::Expected<std::unique_ptr<ScratchCluster>>> create(
      ScratchOptions options, base::RunControl& control);
  ScratchCluster(const ScratchCluster&) = delete;
  ScratchCluster& operator=(const ScratchCluster&) = delete;
  // Removes the cluster if destroy() was not awaited (blocking: after the I/O loop only).
  ~ScratchCluster();

  // libpq connection string for the cluster's superuser.
  std::string conninfo() const;
  const std::filesystem::path& directory() const { return directory_; }
  const std::filesystem::path& bin_dir() const { return bin_dir_; }
  bool wait_sampling_preloaded() const { return wait_sampling_; }
  int port() const { return port_; }

  asio::awaitable<base::Status> restart();
  // Whether destroy() leaves the cluster running (--keep-cluster); a failed set-up discards it.
  void set_keep(bool keep) { options_.keep = keep; }
  // Stops the server and removes the directory (unless kept); safe to call twice.
  asio::awaitable<void> destroy();

 private:
  explicit ScratchCluster(ScratchOptions options) : options_(std::move(options)) {}
  asio::awaitable<base::Status> initialise(base::RunControl& control);
  asio::awaitable<base::Status> pg_ctl(const std::vector<std::string>& arguments);
  std::vector<std::string> pg_ctl_argv(const std::vector<std::string>& arguments) const;
  void write_configuration();
  void remove_directory();

  ScratchOptions options_;
  std::optional<RunAs> run_as_;
  std::filesystem::path directory_;
  std::filesystem::path bin_dir_;
  int port_ = 0;
  bool wait_sampling_ = false;
};

// A TCP port nobody listens on right now, for the cluster's socket name.
int free_port();

}  // namespace pgwaitprof::engine
