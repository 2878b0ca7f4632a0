// One libpq connection driven by Asio: non-blocking connect, prepared queries, results as
// RAII handles. No libpq call here ever blocks the I/O thread; failures are returned as
// values (PgError with the SQLSTATE when the server sent one), not thrown.
#pragma once

#include <libpq-fe.h>

#include <asio/awaitable.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/conninfo.h"

namespace pgwaitprof::collectors {

struct PgConnDeleter {
  void operator()(PGconn* connection) const { PQfinish(connection); }
};
struct PgResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgConnection = std::unique_ptr<PGconn, PgConnDeleter>;
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

// A libpq version number (PQlibVersion, PQserverVersion) as people write it: 150013 is "15.13",
// 90624 (before 10) is "9.6.24".
std::string version_text(int version_number);
// The libpq this program runs with (PQlibVersion), e.g. "15.13".
std::string libpq_version();

struct PgError {
  std::string message;   // libpq's or the server's text, one line
  std::string sqlstate;  // empty for client-side errors (connection refused, timeout)
};

// A query result or the error that replaced it.
struct PgOutcome {
  PgResult result;
  std::optional<PgError> error;
  bool ok() const { return !error.has_value(); }
};

// Text of a result cell; "" for NULL.
inline std::string cell(const PGresult* result, int row, int column) {
  return PQgetisnull(result, row, column) ? std::string()
                                          : std::string(PQgetvalue(result, row, column));
}

class PgSession {
 public:
  explicit PgSession(asio::any_io_executor executor);
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;
  ~PgSession();

  // Connects with PQconnectStart/PQconnectPoll; PG* variables and .pgpass apply as in psql.
  asio::awaitable<std::optional<PgError>> connect(const std::string& conninfo,
                                                  std::chrono::milliseconds timeout);
  asio::awaitable<std::optional<PgError>> prepare(const std::string& name, const std::string& sql);
  // prepare() unless this connection has `name` already (each connection starts with none, and a
  // reconnect with none again): a statement read several times a second is planned once a
  // session, not at every reading.
  asio::awaitable<std::optional<PgError>> ensure_prepared(const std::string& name,
                                                          const std::string& sql);
  asio::awaitable<PgOutcome> execute_prepared(const std::string& name,
                                              const std::vector<std::string>& params = {});
  // execute_prepared() in two halves, so the caller can work while the server answers: send()
  // queues the statement (without parameters) and returns at once; receive() waits for its
  // result. One statement at a time: no other query until receive() has returned.
  std::optional<PgError> send_prepared(const std::string& name);
  asio::awaitable<PgOutcome> receive() { return finish_query(); }
  // One statement through the extended protocol, with text parameters ($1, $2, ...).
  asio::awaitable<PgOutcome> execute(const std::string& sql,
                                     const std::vector<std::string>& params = {});
  // Several statements in one string (simple protocol), e.g. a workload's setup file.
  asio::awaitable<PgOutcome> execute_script(const std::string& sql);
  // COPY ... FROM STDIN: `next` fills its argument with the next chunk of COPY data and returns
  // false when none is left; each chunk is sent as the socket accepts it.
  asio::awaitable<PgOutcome> copy_from(const std::string& sql,
                                       std::function<bool(std::string&)> next);

  // Waits, while no query is in flight, until the server ends the session (pg_terminate_backend,
  // a shutdown, a crash) and returns why: the server's FATAL message when it sent one. For a
  // caller that sends no query for a while (the memory source's sampler) and races this wait
  // (||) against its own: a lost session is then seen at once, not at the next query. The
  // socket has one reader at a time: with a query in flight this returns an error at once (a
  // caller's mistake, made visible); a query started meanwhile ends the wait before it reads
  // anything, as a cancellation does, with std::nullopt. Whatever else the server sends an idle
  // session (a notice, a parameter status) is read and the wait goes on.
  asio::awaitable<std::optional<PgError>> wait_closed();

  // Cuts short every wait in progress (a query in flight then ends with an error); the
  // connection stays open until close() or the destructor.
  void cancel();
  void close();
  bool connected() const;
  int server_version() const;  // PQserverVersion, e.g. 150004
  int backend_pid() const;
  // Where libpq connected (PQhost, PQport, PQuser, PQdb): what a child process is given to
  // reach the same server; "" when not connected.
  std::string host() const;
  std::string port() const;
  std::string user() const;
  std::string dbname() const;
  // Queries finished on this session since it was made (across reconnects): each is one
  // transaction in the server's pg_stat_database, which server-side throughput takes out.
  uint64_t statements() const { return statements_; }

 private:
  asio::awaitable<std::optional<PgError>> wait_socket(bool for_write);
  asio::awaitable<PgOutcome> finish_query();
  // Sends all of libpq's buffered output, reading what the server sends meanwhile.
  asio::awaitable<std::optional<PgError>> flush_copy();
  void assign_socket();
  void release_socket();
  PgError connection_error(const char* what) const;
  // Every query begins here: it ends a wait_closed() in progress (its socket wait is cancelled
  // before the query's own reads start).
  void begin_query();
  bool query_in_flight() const;
  // libpq hands the notices of an idle session (a FATAL before the server closes it among them)
  // to the notice receiver: a FATAL is kept as the reason the session ended, the rest go on to
  // libpq's own receiver.
  static void receive_notice(void* session, const PGresult* notice);

  asio::any_io_executor executor_;
  PgConnection connection_;
  // libpq owns the socket: the descriptor is always release()d, never closed.
  asio::posix::stream_descriptor socket_;
  int assigned_fd_ = -1;
  uint64_t statements_ = 0;
  uint64_t queries_begun_ = 0;
  std::set<std::string> prepared_;  // the statements prepared on this connection
  bool waiting_idle_ = false;       // wait_closed() has a socket wait pending
  PQnoticeReceiver libpq_receiver_ = nullptr;
  std::optional<PgError> farewell_;  // the FATAL the server sent before it closed the session
};

}  // namespace pgwaitprof::collectors
