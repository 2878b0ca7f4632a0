// Control socket server.
#include "daemon/service/control_server.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <asio/experimental/as_tuple.hpp>
#include <asio/read_until.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <deque>
#include <memory>
#include <tuple>

#include "config/logging.h"
#include "daemon/service/control_protocol.h"

namespace pgwaitprof::service {
namespace {

using namespace std::chrono_literals;
using asio::local::stream_protocol;
constexpr auto kAsTuple = asio::experimental::as_tuple(asio::use_awaitable);
constexpr auto kAliveEvery = 5s;
constexpr auto kWriteTimeout = 10s;
constexpr auto kRefusalTimeout = 1s;
constexpr auto kAcceptBackoffStart = 50ms;
constexpr auto kAcceptBackoffCap = 2s;
// Events kept for a client that reads slowly; beyond this, the oldest lines are dropped.
constexpr size_t kMaxQueuedEvents = 10000;

auto log() {
  static auto logger = config::component_logger("control");
  return logger;
}

// Socket operations with a time limit, without awaitable operators: the connections of this
// server are the daemon's only untrusted input, and the cancellation plumbing of `a || b` in
// Debian's Asio (1.22) has lifetime bugs (chriskohlhoff/asio#1332; here a UBSan report under
// accept errors in CI). While armed, the deadline cancels the socket's operations when it
// passes; its handler is a plain function that touches the socket only while the deadline
// object (and so the socket, which outlives it) exists.
class SocketDeadline {
 public:
  SocketDeadline(stream_protocol::socket& socket, std::chrono::steady_clock::duration timeout)
      : timer_(socket.get_executor(), timeout), state_(std::make_shared<State>()) {
    timer_.async_wait([state = state_, &socket](std::error_code error) {
      if (error || state->disarmed) return;
      state->expired = true;
      std::error_code ignored;
      socket.cancel(ignored);
    });
  }
  SocketDeadline(const SocketDeadline&) = delete;
  SocketDeadline& operator=(const SocketDeadline&) = delete;
  ~SocketDeadline() { state_->disarmed = true; }  // the timer's destructor cancels the wait
  bool expired() const { return state_->expired; }

 private:
  struct State {
    bool disarmed = false;
    bool expired = false;
  };
  asio::steady_timer timer_;
  std::shared_ptr<State> state_;
};

// Events on their way to the client, in order. The run never waits for a slow client. One
// reader (the pump) waits for changes: a timer that push() and close() cancel.
class Outbox {
 public:
  explicit Outbox(asio::any_io_executor executor) : changed_(std::move(executor)) {}
  void push(std::string event) {
    if (queue_.size() >= kMaxQueuedEvents) queue_.pop_front();
    queue_.push_back(std::move(event));
    changed_.cancel();
  }
  void close() {
    closed_ = true;
    changed_.cancel();
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
    changed_.expires_after(timeout);
    auto [error] = co_await changed_.async_wait(kAsTuple);
    co_return error == asio::error::operation_aborted;
  }

 private:
  asio::steady_timer changed_;
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
      connections_(executor) {}

engine::Status ControlServer::open() {
  std::error_code error;
  std::filesystem::remove(path_, error);  // a stale socket of a daemon that died
  // Created owner-only: whoever can start runs can start processes as the daemon's user.
  const mode_t previous = ::umask(0177);
  acceptor_.open(stream_protocol(), error);
  if (!error) acceptor_.bind(stream_protocol::endpoint(path_.string()), error);
  ::umask(previous);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    return engine::Error{
        fmt::format("could not create control socket \"{}\": {}", path_.string(), error.message())};
  }
  ::chmod(path_.c_str(), 0600);
  log()->info("control socket path={} max_connections={}", path_.string(), limits_.max_connections);
  return std::nullopt;
}

void ControlServer::close() {
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
        log()->error("could not accept a control connection: {} (retrying)", error.message());
      }
      pause.expires_after(backoff);
      co_await pause.async_wait(kAsTuple);
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, kAcceptBackoffCap);
      continue;
    }
    if (backoff != kAcceptBackoffStart) log()->info("accepting control connections again");
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
  {
    SocketDeadline deadline(socket, kRefusalTimeout);
    co_await asio::async_write(socket, asio::buffer(event), kAsTuple);
  }
  std::error_code ignored;
  socket.shutdown(stream_protocol::socket::shutdown_both, ignored);
  socket.close(ignored);
}

asio::awaitable<void> ControlServer::serve_connection(stream_protocol::socket socket) {
  std::string buffer;
  std::error_code error;
  size_t length = 0;
  {
    SocketDeadline deadline(socket, limits_.request_timeout);
    std::tie(error, length) = co_await asio::async_read_until(
        socket, asio::dynamic_buffer(buffer, kMaxRequestBytes), '\n', kAsTuple);
    if (deadline.expired()) error = asio::error::timed_out;
  }
  if (error == asio::error::timed_out) {
    co_await refuse(socket, "timeout",
                    fmt::format("no request within {} s", limits_.request_timeout.count()));
    co_return;
  }
  if (error == asio::error::not_found) {
    co_await refuse(socket, "too_large", "request longer than 64 KiB");
    co_return;
  }
  if (error) co_return;  // the client went away before asking anything
  auto request = parse_run_request(std::string_view(buffer).substr(0, length - 1));
  buffer.erase(0, length);
  if (!request) {
    log()->warn("refused control request: {}", request.error().message);
    co_await refuse(socket, "invalid", request.error().message);
    co_return;
  }
  if (auto not_allowed = check_socket_pgbench_args(request->pgbench_args)) {
    log()->warn("refused run request: {}", not_allowed->message);
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
  engine::RunControl control(executor_);
  Outbox outbox(executor_);
  ClientObserver observer(outbox);

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
      SocketDeadline deadline(socket, kWriteTimeout);
      auto [error, written] = co_await asio::async_write(socket, asio::buffer(event), kAsTuple);
      if (error || deadline.expired()) {
        client_gone = true;
        control.interrupt("the client went away");
      }
    }
  };
  // Interrupt requests from the client, until end of file (the pump notices a client that is
  // gone) or until the run is over and the socket's operations are cancelled.
  auto watch = [&]() -> asio::awaitable<void> {
    for (;;) {
      auto [error, length] = co_await asio::async_read_until(
          socket, asio::dynamic_buffer(buffer, kMaxRequestBytes), '\n', kAsTuple);
      if (error) co_return;
      if (is_interrupt_request(std::string_view(buffer).substr(0, length))) {
        control.interrupt("interrupted by the client");
      }
      buffer.erase(0, length);
    }
  };
  auto run = [&]() -> asio::awaitable<void> {
    try {
      auto outcome = co_await service_.execute(std::move(request), control, observer);
      outbox.push(done_event(outcome));
    } catch (...) {
      outbox.close();
      throw;
    }
    outbox.close();
  };
  // The run and the reader are this frame's tasks; the pump runs here until the run has closed
  // the outbox and the last event is out, then the reader is cancelled and both are awaited.
  collectors::TaskGroup talk(executor_);
  talk.spawn(run(), "control run");
  talk.spawn(watch(), "control request reader");
  std::exception_ptr failure;
  try {
    co_await pump();
  } catch (...) {
    failure = std::current_exception();
    control.interrupt("the control connection failed");
  }
  std::error_code ignored;
  socket.cancel(ignored);
  co_await talk.wait_idle();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace pgwaitprof::service
