// The HTTP server of /metrics: a small HTTP/1.1 server on an Asio io_context and a thread of its
// own, made to answer a well-behaved scraper within a second whatever other clients do.
//
// civetweb (prometheus-cpp's exposer, used before issue 40) gives each connection a thread
// until its request has come, so four clients that reconnect at once and send half a request
// line each hold every thread and then fill the listen backlog: a real scrape got nothing in
// 10 s. Here a connection costs a socket and a timer, not a thread, and:
// - every connection must finish its request line and headers within kHeaderDeadline of its
//   accept, or it is closed; the kernel's accept queue is drained in batches and kept to
//   kMaxConnections (the kernel's 4,096 held a scraper a second behind a flood's connections
//   on a loaded machine), since a scraper's connection waits behind the flood's there;
// - at most kMaxConnections are open in all and kMaxConnectionsPerPeer from one address; a new
//   connection beyond either cap that has sent part of its request and not the rest is closed
//   at its accept (a flood's: a scraper sends its request in one write); any other closes the
//   oldest one of that peer (or of all) still sending its header, one that has sent a part
//   before one that has sent nothing yet: a flood evicts itself, while a scraper, whose request
//   follows its connect at once, is answered long before newer connections could evict it;
// - the exposition is rendered only when the metrics changed (the caller's `render` caches it)
//   and written from that buffer, so an answer costs a write;
// - basic auth checks, which may wait for a bcrypt, run on a small pool of their own and never
//   hold the loop (BasicAuthChecker bounds them).
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/thread_pool.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "base/task_group.h"

namespace pgwaitprof::exporters {

class MetricsHttpServer {
 public:
  static constexpr size_t kMaxConnections = 256;
  static constexpr size_t kMaxConnectionsPerPeer = 64;
  // From the accept to the blank line that ends the headers.
  static constexpr std::chrono::milliseconds kHeaderDeadline{1000};
  // To write the answer, for a client that does not read it.
  static constexpr std::chrono::milliseconds kWriteDeadline{10000};
  // Longer request lines and headers are refused (431); a scrape's are under 1 kB.
  static constexpr size_t kMaxRequestBytes = 8192;
  // Threads that run basic auth checks (BasicAuthChecker lets 8 of them wait or hash).
  static constexpr int kAuthThreads = 10;

  // The exposition, text format 0.0.4; called on the server's thread for each scrape.
  using Render = std::function<std::shared_ptr<const std::string>()>;
  // Whether `user` with `password`, asked by `client` (its address), may scrape; may block for
  // a bcrypt; never throws. Null: no authentication.
  using Authorize = std::function<bool(const std::string& client, const std::string& user,
                                       const std::string& password)>;

  // Binds `listen` ("HOST:PORT", an IPv6 host in brackets) and starts serving; throws
  // std::runtime_error with a one-line message when it cannot.
  MetricsHttpServer(const std::string& listen, Render render, Authorize authorize,
                    std::string realm);
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;
  // Closes every connection, waits for their coroutines to end and joins the threads.
  ~MetricsHttpServer();

  uint16_t port() const { return port_; }

 private:
  struct Connection;
  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(std::shared_ptr<Connection> connection);
  void admit(const std::shared_ptr<Connection>& connection);
  // Whether one more connection from `peer` would pass a cap.
  bool over_cap(const std::string& peer) const;
  void forget(const Connection& connection);
  asio::awaitable<bool> authorized(const std::string& client, const std::string& header);

  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  Render render_;
  Authorize authorize_;
  std::string realm_;
  uint16_t port_ = 0;
  base::TaskGroup tasks_;
  // Open connections by their accept order, and how many each peer has.
  std::map<uint64_t, std::shared_ptr<Connection>> connections_;
  std::map<std::string, size_t> per_peer_;
  uint64_t next_serial_ = 0;
  std::unique_ptr<asio::thread_pool> auth_pool_;
  std::thread thread_;
};

}  // namespace pgwaitprof::exporters
