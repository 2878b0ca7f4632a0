// The /metrics HTTP server on Asio (http_server.h says why not civetweb).
#include "exporters/prometheus/http_server.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <cctype>
#include <optional>
#include <string_view>

#include "base/as_tuple.h"
#include "base/logging.h"

namespace pgwaitprof::exporters {
namespace {

using asio::ip::tcp;
using base::kAsTuple;

// Connections accepted in one go before the loop turns to the others' reads, and how many a
// turn may refuse at their accept besides (a refusal costs a peek and a close).
constexpr int kAcceptBatch = 64;
constexpr int kRefuseBatch = 1024;
// The kernel's queue of connections not yet accepted. A scraper's connection waits behind all of
// those a flood put there first: with the kernel's 4,096 and a loop that accepts 5,000 a second
// (a loaded machine), a second. Behind kMaxConnections it waits a few tens of milliseconds; a
// flood that fills the queue has its new connections dropped until the loop has taken some.
constexpr int kListenBacklog = static_cast<int>(MetricsHttpServer::kMaxConnections);

// The niceness of the threads that check passwords (the sampler's stays 0): a flood of wrong
// passwords cannot take the CPU from the sampler.
constexpr int kScrapeNice = 10;

auto http_server_log() {
  static auto logger = base::component_logger("metrics");
  return logger;
}

void lower_thread_priority() {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kScrapeNice);
}

// "HOST:PORT" with an IPv6 host in brackets, as the configuration validated it.
std::pair<std::string, std::string> split_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) return {"", listen};
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return {host, listen.substr(colon + 1)};
}

bool equal_ignoring_case(std::string_view left, std::string_view right) {
  return left.size() == right.size() &&
         std::equal(left.begin(), left.end(), right.begin(), [](char one, char other) {
           return std::tolower(static_cast<unsigned char>(one)) ==
                  std::tolower(static_cast<unsigned char>(other));
         });
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string decoded;
  uint32_t bits = 0;
  int count = 0;
  for (const char character : text) {
    if (character == '=') break;
    int value = -1;
    if (character >= 'A' && character <= 'Z') value = character - 'A';
    if (character >= 'a' && character <= 'z') value = character - 'a' + 26;
    if (character >= '0' && character <= '9') value = character - '0' + 52;
    if (character == '+') value = 62;
    if (character == '/') value = 63;
    if (value < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      decoded += static_cast<char>((bits >> count) & 0xFF);
    }
  }
  return decoded;
}

// A request line and headers, as far as /metrics needs them.
struct Request {
  std::string method;
  std::string path;
  std::optional<std::string> authorization;
};

std::optional<Request> parse_request(std::string_view head) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < head.size();) {
    const auto end = head.find('\n', start);
    auto line = head.substr(start, end == std::string_view::npos ? head.npos : end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (lines.empty()) return std::nullopt;
  const auto first_space = lines[0].find(' ');
  const auto last_space = lines[0].rfind(' ');
  if (first_space == std::string_view::npos || first_space == last_space) return std::nullopt;
  Request request;
  request.method = lines[0].substr(0, first_space);
  const auto target = lines[0].substr(first_space + 1, last_space - first_space - 1);
  if (!lines[0].substr(last_space + 1).starts_with("HTTP/1.") || target.empty() ||
      target.find(' ') != std::string_view::npos) {
    return std::nullopt;
  }
  request.path = target.substr(0, target.find('?'));
  for (size_t index = 1; index < lines.size(); ++index) {
    const auto colon = lines[index].find(':');
    if (lines[index].empty()) continue;
    if (colon == std::string_view::npos) return std::nullopt;
    if (equal_ignoring_case(lines[index].substr(0, colon), "authorization")) {
      auto value = lines[index].substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
        value.remove_prefix(1);
      }
      request.authorization = std::string(value);
    }
  }
  return request;
}

std::string status_only(int code, std::string_view reason, std::string_view extra = {}) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\n{}Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n"
      "Connection: close\r\n\r\n{}\n",
      code, reason, extra, reason.size() + 1, reason);
}

// Where the request line and headers end (after the blank line); npos while they have not.
size_t end_of_head(std::string_view received) {
  const auto crlf = received.find("\r\n\r\n");
  const auto lf = received.find("\n\n");
  if (crlf == std::string_view::npos && lf == std::string_view::npos) return std::string_view::npos;
  if (lf == std::string_view::npos || (crlf != std::string_view::npos && crlf < lf)) {
    return crlf + 4;
  }
  return lf + 2;
}

// How much of its request head a connection still reading it has sent: nothing yet, a part, or
// all of it. `read` bytes of it the loop has read already; the rest is looked at in the kernel
// (MSG_PEEK: nothing is taken). A scraper whose request has arrived is not a stalled connection
// of a flood, even when a busy loop (a sanitizer build, a loaded machine) has not read it
// before more connections arrive; one that has sent nothing may be a scraper between its
// connect and its request.
enum class HeadSent { kNothing, kPart, kWhole };
HeadSent head_sent(asio::ip::tcp::socket& socket, size_t read) {
  std::array<char, 4096> peeked{};
  const ssize_t got =
      ::recv(socket.native_handle(), peeked.data(), peeked.size(), MSG_PEEK | MSG_DONTWAIT);
  if (got > 0 && end_of_head(std::string_view(peeked.data(), static_cast<size_t>(got))) !=
                     std::string_view::npos) {
    return HeadSent::kWhole;
  }
  return got > 0 || read > 0 ? HeadSent::kPart : HeadSent::kNothing;
}

}  // namespace

struct MetricsHttpServer::Connection {
  Connection(tcp::socket accepted, const asio::any_io_executor& executor)
      : socket(std::move(accepted)), deadline(executor) {}
  tcp::socket socket;
  asio::steady_timer deadline;
  std::string peer;
  uint64_t serial = 0;
  bool reading_header = true;
  size_t head_read = 0;  // bytes of the request head read so far

  // Closes the socket when `after` passes (its pending read or write then ends).
  void close_after(std::chrono::milliseconds after, const std::shared_ptr<Connection>& self) {
    deadline.expires_after(after);
    deadline.async_wait([weak = std::weak_ptr<Connection>(self)](std::error_code error) {
      if (error) return;
      if (auto connection = weak.lock()) {
        std::error_code ignored;
        connection->socket.close(ignored);
      }
    });
  }
};

MetricsHttpServer::MetricsHttpServer(const std::string& listen, Render render, Authorize authorize,
                                     std::string realm)
    : acceptor_(io_),
      render_(std::move(render)),
      authorize_(std::move(authorize)),
      realm_(std::move(realm)),
      tasks_(io_.get_executor()) {
  const auto [host, port] = split_listen(listen);
  std::error_code error;
  tcp::resolver resolver(io_);
  const auto endpoints = resolver.resolve(host, port, tcp::resolver::passive, error);
  if (error || endpoints.empty()) {
    throw std::runtime_error(fmt::format("could not listen on \"{}\": {}", listen,
                                         error ? error.message() : "no address"));
  }
  const tcp::endpoint endpoint = *endpoints.begin();
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(kListenBacklog, error);
  if (error) {
    throw std::runtime_error(
        fmt::format("could not listen on \"{}\": {}", listen, error.message()));
  }
  acceptor_.non_blocking(true, error);
  if (error) {
    throw std::runtime_error(
        fmt::format("could not listen on \"{}\": {}", listen, error.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  if (authorize_) auth_pool_ = std::make_unique<asio::thread_pool>(kAuthThreads);
  tasks_.spawn(accept_loop(), "the /metrics listener");
  // The loop keeps the default priority: a scrape is a write of the rendered buffer, and under a
  // flood the loop must drain the kernel's accept queue, behind which a scraper waits. One
  // thread takes at most one core from the sampler; the bcrypt checks run at nice 10.
  thread_ = std::thread([this] { io_.run(); });
}

MetricsHttpServer::~MetricsHttpServer() {
  asio::post(io_, [this] {
    std::error_code ignored;
    acceptor_.close(ignored);
    for (auto& [serial, connection] : connections_) {
      connection->socket.close(ignored);
      connection->deadline.cancel();
    }
  });
  // Returns once the listener and every connection's coroutine have ended (an auth check
  // under way ends first: at most one bcrypt).
  thread_.join();
  if (auth_pool_) auth_pool_->join();
}

asio::awaitable<void> MetricsHttpServer::accept_loop() {
  asio::steady_timer pause(io_);
  for (;;) {
    auto [error] = co_await acceptor_.async_wait(tcp::acceptor::wait_read, kAsTuple);
    if (error == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    // Every connection the kernel holds, one after another (the acceptor is non-blocking):
    // under a flood a scraper's connection waits behind the others in the kernel's queue, so
    // the queue is drained without a trip through the reactor per connection.
    for (int accepted = 0, refused = 0; accepted < kAcceptBatch && refused < kRefuseBatch;) {
      tcp::socket socket(io_);
      acceptor_.accept(socket, error);
      if (error) break;
      std::error_code ignored;
      std::string peer = socket.remote_endpoint(ignored).address().to_string();
      // Over a cap, a connection that has sent part of its request and not the rest is a
      // flood's (a scraper sends its request whole, in one write): closed at once, before it
      // costs a coroutine and a timer, so that the loop keeps up with the kernel's queue, behind
      // which a scraper's connection waits.
      if (over_cap(peer) && head_sent(socket, 0) == HeadSent::kPart) {
        socket.close(ignored);
        ++refused;
        continue;
      }
      ++accepted;
      auto connection = std::make_shared<Connection>(std::move(socket), io_.get_executor());
      connection->peer = std::move(peer);
      admit(connection);
      if (!connection->socket.is_open()) continue;  // over a cap with nobody to evict
      connection->close_after(kHeaderDeadline, connection);
      tasks_.spawn(serve(connection), "a /metrics connection");
    }
    if (error && error != asio::error::would_block && error != asio::error::try_again) {
      // Out of file descriptors (a flood): give the open connections a moment to end.
      http_server_log()->debug("could not accept a /metrics connection: {}", error.message());
      pause.expires_after(std::chrono::milliseconds(50));
      co_await pause.async_wait(kAsTuple);
    }
  }
}

void MetricsHttpServer::admit(const std::shared_ptr<Connection>& connection) {
  connection->serial = next_serial_++;
  connections_.emplace(connection->serial, connection);
  const size_t from_peer = ++per_peer_[connection->peer];
  const bool peer_over = from_peer > kMaxConnectionsPerPeer;
  if (!peer_over && connections_.size() <= kMaxConnections) return;
  // The oldest connection still sending its header (of the peer over its cap, else of all)
  // makes room: first one that has sent a part of it, then one that has sent nothing yet; the
  // new one is refused only when every other is being answered or has its whole request
  // waiting to be read.
  for (const HeadSent evictable : {HeadSent::kPart, HeadSent::kNothing}) {
    for (auto& [serial, open] : connections_) {
      if (open == connection || !open->reading_header) continue;
      if (peer_over && open->peer != connection->peer) continue;
      if (head_sent(open->socket, open->head_read) != evictable) continue;
      const auto evicted = open;  // forget() erases the map's reference
      std::error_code ignored;
      evicted->socket.close(ignored);
      forget(*evicted);
      return;
    }
  }
  std::error_code ignored;
  connection->socket.close(ignored);
  forget(*connection);
}

bool MetricsHttpServer::over_cap(const std::string& peer) const {
  const auto from_peer = per_peer_.find(peer);
  return connections_.size() >= kMaxConnections ||
         (from_peer != per_peer_.end() && from_peer->second >= kMaxConnectionsPerPeer);
}

void MetricsHttpServer::forget(const Connection& connection) {
  if (connections_.erase(connection.serial) == 0) return;
  const auto peer = per_peer_.find(connection.peer);
  if (peer != per_peer_.end() && --peer->second == 0) per_peer_.erase(peer);
}

asio::awaitable<bool> MetricsHttpServer::authorized(const std::string& client,
                                                    const std::string& header) {
  if (!header.starts_with("Basic ")) co_return false;
  const auto decoded = base64_decode(std::string_view(header).substr(6));
  if (!decoded) co_return false;
  const auto colon = decoded->find(':');
  if (colon == std::string::npos) co_return false;
  std::string user = decoded->substr(0, colon);
  std::string password = decoded->substr(colon + 1);
  // The check runs on the pool; its answer resumes this coroutine on the loop (the handler's
  // executor), never on the pool's thread.
  co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(bool)>(
      [this, &client, &user, &password](auto handler) {
        auto executor = asio::get_associated_executor(handler, io_.get_executor());
        asio::post(*auth_pool_,
                   [this, client, user = std::move(user), password = std::move(password), executor,
                    handler = std::move(handler)]() mutable {
                     lower_thread_priority();
                     const bool allowed = authorize_(client, user, password);
                     asio::post(executor, [handler = std::move(handler), allowed]() mutable {
                       std::move(handler)(allowed);
                     });
                   });
      },
      asio::use_awaitable);
}

asio::awaitable<void> MetricsHttpServer::serve(std::shared_ptr<Connection> connection) {
  std::string received;
  std::array<char, 2048> buffer{};
  size_t head_end = std::string::npos;
  std::string answer;
  while (head_end == std::string::npos) {
    auto [error, got] = co_await connection->socket.async_read_some(asio::buffer(buffer), kAsTuple);
    if (error) {
      // The client went, the deadline passed or a newer connection evicted this one.
      forget(*connection);
      co_return;
    }
    received.append(buffer.data(), got);
    connection->head_read = received.size();
    head_end = end_of_head(received);
    if (head_end == std::string::npos && received.size() > kMaxRequestBytes) {
      answer = status_only(431, "Request Header Fields Too Large");
      break;
    }
  }
  connection->reading_header = false;
  connection->close_after(kWriteDeadline, connection);
  std::shared_ptr<const std::string> body;
  if (answer.empty()) {
    const auto request = parse_request(std::string_view(received).substr(0, head_end));
    if (!request) {
      answer = status_only(400, "Bad Request");
    } else if (request->method != "GET" && request->method != "HEAD") {
      answer = status_only(405, "Method Not Allowed", "Allow: GET, HEAD\r\n");
    } else if (request->path != "/metrics") {
      answer = status_only(404, "Not Found");
    } else if (authorize_ &&
               !co_await authorized(connection->peer, request->authorization.value_or(""))) {
      answer = status_only(401, "Unauthorized",
                           fmt::format("WWW-Authenticate: Basic realm=\"{}\"\r\n", realm_));
    } else {
      body = render_();
      answer = fmt::format(
          "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
          "Content-Length: {}\r\nConnection: close\r\n\r\n",
          body->size());
      if (request->method == "HEAD") body.reset();
    }
  }
  std::array<asio::const_buffer, 2> buffers{asio::buffer(answer),
                                            body ? asio::buffer(*body) : asio::const_buffer()};
  (void)co_await asio::async_write(connection->socket, buffers, kAsTuple);
  std::error_code ignored;
  connection->socket.shutdown(tcp::socket::shutdown_send, ignored);
  connection->socket.close(ignored);
  connection->deadline.cancel();
  forget(*connection);
}

}  // namespace pgwaitprof::exporters
