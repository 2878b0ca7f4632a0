// The daemon's control socket: a unix domain socket (mode 0600) in its data directory where
// `pgwaitprof run` asks the daemon to run a benchmark on a target it already samples, so the
// target is not sampled twice. Newline-delimited JSON both ways:
//   request  {"type":"run","target":T,"workload":W,"label":L,"pgbench_args":[...],
//             "interval_s":N,"loadgen":"pgbench"}   and later {"type":"interrupt"}
//   replies  {"event":"started","run_id":..,"dir":..}  {"event":"line","text":..}
//            {"event":"done","dir":..,"status":..,"exit_code":..,"error":..}
//            {"event":"error","code":"unknown_target"|"refused"|"busy","message":..}
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>

#include "daemon/run_orchestrator.h"

namespace pgwaitprof::daemon {

class DaemonApp;

std::filesystem::path control_socket_path(const std::filesystem::path& data_dir);

// Whether `loadgen` is one of the configured load-generator executables (by name or path).
bool loadgen_allowed(const std::string& loadgen, const std::vector<std::string>& allowed);

class ControlServer {
 public:
  ControlServer(DaemonApp& app, const std::filesystem::path& data_dir);
  ~ControlServer();
  void start();
  void stop();
  const std::filesystem::path& path() const { return path_; }

 private:
  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(asio::local::stream_protocol::socket socket);

  DaemonApp& app_;
  std::filesystem::path path_;
  asio::local::stream_protocol::acceptor acceptor_;
};

// Client side, used by `pgwaitprof run`. nullopt when no daemon answers on `socket` or it does
// not sample `target` (the caller then samples by itself); otherwise the run's outcome, with
// the load generator's lines passed to `on_line` as they come.
struct RemoteRunResult {
  std::filesystem::path dir;
  int exit_code = 1;
};
std::optional<RemoteRunResult> run_through_daemon(const std::filesystem::path& socket,
                                                  const RunRequest& request,
                                                  const std::function<void(const std::string&)>& on_line);

}  // namespace pgwaitprof::daemon
