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
  // The build to run (--server-bin, a variant's server_bin): a directory with initdb, pg_ctl
  // and postgres; empty = the first initdb on PATH or in /usr/lib/postgresql/*/bin.
  std::filesystem::path server_bin;
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
  // The major of the cluster (its PG_VERSION), e.g. 13; 0 before initdb.
  int major() const { return major_; }
  int port() const { return port_; }

  asio::awaitable<base::Status> restart();
  // Whether destroy() leaves the cluster running (--keep-cluster); a failed set-up discards it.
  void set_keep(bool keep) { options_.keep = keep; }
  // Stops the server and removes the directory (unless kept); safe to call twice.
  asio::awaitable<void> destroy();

 private:
  explicit ScratchCluster(ScratchOptions options) : options_(std::move(options)) {}
  asio::awaitable<base::Status> initialise(base::RunControl& control);
  // initialise()'s first steps: the server's programs (bin_dir_; initdb's path is returned) and
  // the account to run them as (run_as_); the cluster's directory (directory_), supervised from
  // its creation.
  base::Expected<std::string> locate_programs();
  base::Status make_directory();
  asio::awaitable<base::Status> pg_ctl(const std::vector<std::string>& arguments);
  std::vector<std::string> pg_ctl_argv(const std::vector<std::string>& arguments) const;
  void write_configuration();
  void stop_left_processes();
  void remove_directory();

  ScratchOptions options_;
  std::optional<RunAs> run_as_;
  std::filesystem::path directory_;
  std::filesystem::path bin_dir_;
  int port_ = 0;
  bool wait_sampling_ = false;
  int major_ = 0;
};

// A client program (psql, pgbench) for a cluster of `server_bin`: the one beside the server when
// there is one, else the first on PATH or in /usr/lib/postgresql/*/bin (a server-only build, as
// the npm packages of the version matrix are, is driven by Debian's pgbench and psql); "" when
// there is none.
std::string client_program(const std::filesystem::path& server_bin, const std::string& name);

// A TCP port nobody listens on right now, for the cluster's socket name.
int free_port();

}  // namespace pgwaitprof::engine
