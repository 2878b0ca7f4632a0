// The daemon's control socket: a unix domain socket (mode 0600) in its data directory where
// `pgwaitprof run` asks the daemon to run a benchmark on a target it already samples, so the
// target is not sampled twice (protocol: control_protocol.h). Bounded: at most
// `max_connections` clients, a request must arrive whole within `request_timeout` and within
// 64 KiB, accept errors (out of file descriptors) are logged and retried with backoff. Every
// connection's coroutines finish before serve() returns.
#pragma once

#include <asio/awaitable.hpp>
#include <asio/local/stream_protocol.hpp>
#include <chrono>
#include <filesystem>

#include "base/async_event.h"
#include "base/expected.h"
#include "base/task_group.h"
#include "daemon/service/run_service.h"

namespace pgwaitprof::service {

std::filesystem::path control_socket_path(const std::filesystem::path& data_dir);

struct ControlLimits {
  int max_connections = 16;
  std::chrono::seconds request_timeout{10};
};

class ControlServer {
 public:
  ControlServer(asio::any_io_executor executor, std::filesystem::path path, RunService& service,
                ControlLimits limits);
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Binds the socket (replacing a stale one: the caller holds the data directory's lock).
  [[nodiscard]] base::Status open();
  // Accepts until close(); returns when every connection has ended.
  asio::awaitable<void> serve();
  // Stops accepting and removes the socket; connections in progress finish their runs, those
  // still waiting for their request are refused at once ("busy": the daemon is stopping).
  void close();
  const std::filesystem::path& path() const { return path_; }

 private:
  asio::awaitable<void> serve_connection(asio::local::stream_protocol::socket socket);
  asio::awaitable<void> refuse(asio::local::stream_protocol::socket& socket, std::string_view code,
                               std::string_view message);
  asio::awaitable<void> run_for_client(asio::local::stream_protocol::socket& socket,
                                       engine::RunRequest request, std::string buffer);

  asio::any_io_executor executor_;
  std::filesystem::path path_;
  RunService& service_;
  ControlLimits limits_;
  asio::local::stream_protocol::acceptor acceptor_;
  base::TaskGroup connections_;
  base::AsyncEvent closing_;
};

}  // namespace pgwaitprof::service
