// Control socket server.
#include "daemon/service/control_server.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/read_until.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <deque>

#include "base/as_tuple.h"
#include "base/logging.h"
#include "daemon/service/control_protocol.h"

namespace pgwaitprof::service {
namespace {

using namespace std::chrono_literals;
using asio::local::stream_protocol;
using namespace asio::experimental::awaitable_operators;
using base::kAsTuple;
constexpr auto kAliveEvery = 5s;
constexpr auto kWriteTimeout = 10s;
constexpr auto kRefusalTimeout = 1s;
constexpr auto kAcceptBackoffStart = 50ms;
constexpr auto kAcceptBackoffCap = 2s;
// Events kept for a client that reads slowly; beyond this, the oldest lines are dropped.
constexpr size_t kMaxQueuedEvents = 10000;

auto control_server_log() {
  static auto logger = base::component_logger("control");
  return logger;
}

// Events on their way to the client, in order. The run never waits for a slow client.
class Outbox {
 public:
  explicit Outbox(asio::any_io_executor executor) : changed_(std::move(executor)) {}
  void push(std::string event) {
    if (queue_.size() >= kMaxQueuedEvents) queue_.pop_front();
    queue_.push_back(std::move(event));
    changed_.notify();
  }
  void close() {
    closed_ = true;
    changed_.notify();
  }
  bool empty() const { return queue_.empty(); }
  bool closed() const { return closed_; }
  std::string pop() {
    std::string front = std::move(queue_.front());
    queue_.pop_front();
    return front;
  }
  // True when something changed, false after `timeout` without change.
  asio::awaitable<bool> wait_for(std::chrono::steady_clock::duration timeout) {
    co_return co_await changed_.wait_for(timeout);
  }

 private:
  base::AsyncPulse changed_;
  std::deque<std::string> queue_;
  bool closed_ = false;
};

class ClientObserver : public engine::RunObserver {
 public:
  explicit ClientObserver(Outbox& outbox) : outbox_(outbox) {}
  void on_started(const std::string& run_id, const std::filesystem::path& dir) override {
    outbox_.push(started_event(run_id, dir.string()));
  }
  void on_loadgen_line(std::string_view line) override { outbox_.push(line_event(line)); }

 private:
  Outbox& outbox_;
};

}  // namespace

std::filesystem::path control_socket_path(const std::filesystem::path& data_dir) {
  return data_dir / "pgwaitprof.sock";
}

ControlServer::ControlServer(asio::any_io_executor executor, std::filesystem::path path,
                             RunService& service, ControlLimits limits)
    : executor_(executor),
      path_(std::move(path)),
      service_(service),
      limits_(limits),
      acceptor_(executor),
      connections_(executor),
      closing_(executor) {}

base::Status ControlServer::open() {
  std::error_code error;
  std::filesystem::remove(path_, error);  // a stale socket of a daemon that died
  // Created owner-only: whoever can start runs can start processes as the daemon's user.
  const mode_t previous = ::umask(0177);
  acceptor_.open(stream_protocol(), error);
  if (!error) acceptor_.bind(stream_protocol::endpoint(path_.string()), error);
  ::umask(previous);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    return base::Error{
        fmt::format("could not create control socket \"{}\": {}", path_.string(), error.message())};
  }
  ::chmod(path_.c_str(), 0600);
  control_server_log()->info("control socket path={} max_connections={}", path_.string(),
                             limits_.max_connections);
  return std::nullopt;
}

void ControlServer::close() {
  closing_.set();
  if (!acceptor_.is_open()) return;
  std::error_code ignored;
  acceptor_.close(ignored);
  std::filesystem::remove(path_, ignored);
}

asio::awaitable<void> ControlServer::serve() {
  auto backoff = std::chrono::milliseconds(kAcceptBackoffStart);
  asio::steady_timer pause(executor_);
  while (acceptor_.is_open()) {
    auto [error, socket] = co_await acceptor_.async_accept(kAsTuple);
    if (!acceptor_.is_open()) break;
    if (error) {
      // Out of file descriptors (or memory): the backlog keeps the clients until we can.
      if (backoff == kAcceptBackoffStart) {
        control_server_log()->error("could not accept a control connection: {} (retrying)",
                                    error.message());
      }
      pause.expires_after(backoff);
      co_await pause.async_wait(kAsTuple);
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, kAcceptBackoffCap);
      continue;
    }
    if (backoff != kAcceptBackoffStart)
      control_server_log()->info("accepting control connections again");
    backoff = kAcceptBackoffStart;
    if (connections_.running() >= limits_.max_connections) {
      connections_.spawn(
          [](ControlServer& server, stream_protocol::socket refused) -> asio::awaitable<void> {
            co_await server.refuse(refused, "busy",
                                   fmt::format("too many control connections (at most {})",
                                               server.limits_.max_connections));
          }(*this, std::move(socket)),
          "control refusal");
      continue;
    }
    connections_.spawn(serve_connection(std::move(socket)), "control connection");
  }
  // Runs in progress were interrupted by whoever closed us; their reports are being written.
  co_await connections_.wait_idle(std::chrono::hours(24));
}

asio::awaitable<void> ControlServer::refuse(stream_protocol::socket& socket, std::string_view code,
                                            std::string_view message) {
  const std::string event = error_event(code, message);
  asio::steady_timer deadline(executor_, kRefusalTimeout);
  co_await (asio::async_write(socket, asio::buffer(event), kAsTuple) ||
            deadline.async_wait(kAsTuple));
  std::error_code ignored;
  socket.shutdown(stream_protocol::socket::shutdown_both, ignored);
  socket.close(ignored);
}

asio::awaitable<void> ControlServer::serve_connection(stream_protocol::socket socket) {
  std::string buffer;
  asio::steady_timer deadline(executor_, limits_.request_timeout);
  // A client that has not asked for anything yet does not hold up a stopping daemon.
  auto read =
      co_await (asio::async_read_until(socket, asio::dynamic_buffer(buffer, kMaxRequestBytes), '\n',
                                       kAsTuple) ||
                deadline.async_wait(kAsTuple) || closing_.wait());
  if (read.index() == 1) {
    co_await refuse(socket, "timeout",
                    fmt::format("no request within {} s", limits_.request_timeout.count()));
    co_return;
  }
  if (read.index() == 2) {
    co_await refuse(socket, "busy", "the daemon is stopping");
    co_return;
  }
  const auto [error, length] = std::get<0>(read);
  if (error == asio::error::not_found) {
    co_await refuse(socket, "too_large", "request longer than 64 KiB");
    co_return;
  }
  if (error) co_return;  // the client went away before asking anything
  auto request = parse_run_request(std::string_view(buffer).substr(0, length - 1));
  buffer.erase(0, length);
  if (!request) {
    control_server_log()->warn("refused control request: {}", request.error().message);
    co_await refuse(socket, "invalid", request.error().message);
    co_return;
  }
  if (auto not_allowed = check_socket_loadgen_args(*request)) {
    control_server_log()->warn("refused run request: {}", not_allowed->message);
    co_await refuse(socket, "refused", not_allowed->message);
    co_return;
  }
  if (auto refusal = service_.admit(*request)) {
    co_await refuse(socket, refusal->code, refusal->message);
    co_return;
  }
  co_await run_for_client(socket, std::move(*request), std::move(buffer));
  std::error_code ignored;
  socket.shutdown(stream_protocol::socket::shutdown_both, ignored);
  socket.close(ignored);
}

asio::awaitable<void> ControlServer::run_for_client(stream_protocol::socket& socket,
                                                    engine::RunRequest request,
                                                    std::string buffer) {
  base::RunControl control(executor_);
  Outbox outbox(executor_);
  ClientObserver observer(outbox);
  base::AsyncPulse never(executor_);

  auto run = [&]() -> asio::awaitable<void> {
    auto outcome = co_await service_.execute(std::move(request), control, observer);
    outbox.push(done_event(outcome));
    outbox.close();
  };
  // Writes events in order, and "alive" when nothing else was sent for 5 s; a client that
  // cannot be written to is gone, and so the run is interrupted (its report is kept).
  auto pump = [&]() -> asio::awaitable<void> {
    bool client_gone = false;
    while (!outbox.empty() || !outbox.closed()) {
      if (outbox.empty()) {
        if (!co_await outbox.wait_for(kAliveEvery) && !client_gone) outbox.push(alive_event());
        continue;
      }
      const std::string event = outbox.pop();
      if (client_gone) continue;
      asio::steady_timer deadline(executor_, kWriteTimeout);
      auto written = co_await (asio::async_write(socket, asio::buffer(event), kAsTuple) ||
                               deadline.async_wait(kAsTuple));
      bool failed = written.index() == 1;
      if (!failed) failed = static_cast<bool>(std::get<0>(std::get<0>(written)));
      if (failed) {
        client_gone = true;
        control.interrupt("the client went away");
      }
    }
  };
  // Interrupt requests from the client. At end of file there is nothing more to read: the
  // pump notices a client that is gone.
  auto watch = [&]() -> asio::awaitable<void> {
    for (;;) {
      auto [error, length] = co_await asio::async_read_until(
          socket, asio::dynamic_buffer(buffer, kMaxRequestBytes), '\n', kAsTuple);
      if (error == asio::error::operation_aborted) co_return;
      if (error) break;
      if (is_interrupt_request(std::string_view(buffer).substr(0, length))) {
        control.interrupt("interrupted by the client");
      }
      buffer.erase(0, length);
    }
    co_await never.wait();  // until the pump ends and cancels us
  };
  co_await (run() && (pump() || watch()));
}

}  // namespace pgwaitprof::service
