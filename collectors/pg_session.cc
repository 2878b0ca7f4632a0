// libpq on Asio (after ozo and taopq): the socket is registered with the io_context and every
// libpq call is made only when the socket is ready, so nothing blocks the I/O thread.
#include "collectors/pg_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>

#include "base/as_tuple.h"

namespace pgwaitprof::collectors {
namespace {

using base::kAsTuple;

std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (auto& character : text) {
    if (character == '\n') character = ' ';
  }
  return text;
}

}  // namespace

PgSession::PgSession(asio::any_io_executor executor)
    : executor_(std::move(executor)), socket_(executor_) {}

PgSession::~PgSession() { close(); }

void PgSession::release_socket() {
  if (assigned_fd_ >= 0) {
    socket_.cancel();
    socket_.release();
    assigned_fd_ = -1;
  }
}

void PgSession::assign_socket() {
  const int fd = PQsocket(connection_.get());
  if (fd == assigned_fd_) return;
  release_socket();
  if (fd >= 0) {
    socket_.assign(fd);
    assigned_fd_ = fd;
  }
}

void PgSession::cancel() {
  waiting_idle_ = false;
  release_socket();
}

void PgSession::close() {
  cancel();
  connection_.reset();
  prepared_.clear();
}

bool PgSession::connected() const {
  return connection_ && PQstatus(connection_.get()) == CONNECTION_OK;
}

std::string version_text(int version_number) {
  if (version_number >= 100000) {
    return fmt::format("{}.{}", version_number / 10000, version_number % 10000);
  }
  return fmt::format("{}.{}.{}", version_number / 10000, version_number / 100 % 100,
                     version_number % 100);
}

std::string libpq_version() { return version_text(PQlibVersion()); }

int PgSession::server_version() const {
  return connection_ ? PQserverVersion(connection_.get()) : 0;
}

int PgSession::backend_pid() const { return connection_ ? PQbackendPID(connection_.get()) : 0; }

namespace {

std::string text_or_empty(const char* text) { return text == nullptr ? "" : text; }

}  // namespace

std::string PgSession::host() const {
  return connection_ ? text_or_empty(PQhost(connection_.get())) : "";
}
std::string PgSession::port() const {
  return connection_ ? text_or_empty(PQport(connection_.get())) : "";
}
std::string PgSession::user() const {
  return connection_ ? text_or_empty(PQuser(connection_.get())) : "";
}
std::string PgSession::dbname() const {
  return connection_ ? text_or_empty(PQdb(connection_.get())) : "";
}

PgError PgSession::connection_error(const char* what) const {
  std::string text = connection_ ? PQerrorMessage(connection_.get()) : "";
  text = mask_secrets(one_line(text));
  if (text.empty()) text = what;
  return {text, ""};
}

asio::awaitable<std::optional<PgError>> PgSession::wait_socket(bool for_write) {
  if (assigned_fd_ < 0) co_return PgError{"connection has no socket", ""};
  auto [error] = co_await socket_.async_wait(for_write ? asio::posix::stream_descriptor::wait_write
                                                       : asio::posix::stream_descriptor::wait_read,
                                             kAsTuple);
  if (error) co_return PgError{error.message(), ""};
  co_return std::nullopt;
}

asio::awaitable<std::optional<PgError>> PgSession::connect(const std::string& conninfo,
                                                           std::chrono::milliseconds timeout) {
  using namespace asio::experimental::awaitable_operators;
  close();
  // The connection string is expanded like psql's; the application name marks our sessions in
  // pg_stat_activity unless the user chose one.
  const char* keywords[] = {"dbname", "fallback_application_name", nullptr};
  const char* values[] = {conninfo.c_str(), "pgwaitprof", nullptr};
  connection_.reset(PQconnectStartParams(keywords, values, 1));
  if (!connection_) co_return PgError{"out of memory allocating a connection", ""};
  if (PQstatus(connection_.get()) == CONNECTION_BAD) {
    auto error = connection_error("invalid connection string");
    close();
    co_return error;
  }
  asio::steady_timer deadline(executor_, timeout);
  auto poll = [&]() -> asio::awaitable<std::optional<PgError>> {
    PostgresPollingStatusType status = PGRES_POLLING_WRITING;
    while (status != PGRES_POLLING_OK) {
      if (status == PGRES_POLLING_FAILED) co_return connection_error("connection failed");
      // libpq may open a new socket while it tries hosts or SSL modes: re-read it every time.
      assign_socket();
      if (auto error = co_await wait_socket(status == PGRES_POLLING_WRITING)) co_return error;
      status = PQconnectPoll(connection_.get());
    }
    co_return std::nullopt;
  };
  auto expire = [&]() -> asio::awaitable<void> { co_await deadline.async_wait(kAsTuple); };
  auto outcome = co_await (poll() || expire());
  std::optional<PgError> error;
  if (outcome.index() == 1) {
    error = PgError{fmt::format("timeout expired after {} ms", timeout.count()), ""};
  } else {
    error = std::get<0>(outcome);
  }
  if (!error && PQsetnonblocking(connection_.get(), 1) != 0)
    error = connection_error("setnonblocking");
  if (error) {
    close();
    co_return error;
  }
  farewell_.reset();
  libpq_receiver_ = PQsetNoticeReceiver(connection_.get(), &PgSession::receive_notice, this);
  co_return std::nullopt;
}

void PgSession::begin_query() {
  ++queries_begun_;
  if (waiting_idle_) {
    waiting_idle_ = false;
    socket_.cancel();
  }
}

bool PgSession::query_in_flight() const {
  return connection_ && PQtransactionStatus(connection_.get()) == PQTRANS_ACTIVE;
}

void PgSession::receive_notice(void* session, const PGresult* notice) {
  auto* self = static_cast<PgSession*>(session);
  const char* severity = PQresultErrorField(notice, PG_DIAG_SEVERITY_NONLOCALIZED);
  if (severity == nullptr) severity = PQresultErrorField(notice, PG_DIAG_SEVERITY);
  const std::string_view level = severity == nullptr ? "" : severity;
  if (level == "FATAL" || level == "PANIC") {
    const char* sqlstate = PQresultErrorField(notice, PG_DIAG_SQLSTATE);
    self->farewell_ = PgError{one_line(PQresultErrorMessage(notice)), sqlstate ? sqlstate : ""};
    return;
  }
  // libpq's default receiver takes no argument of its own.
  if (self->libpq_receiver_ != nullptr) self->libpq_receiver_(nullptr, notice);
}

asio::awaitable<std::optional<PgError>> PgSession::wait_closed() {
  if (!connected() || assigned_fd_ < 0) {
    co_return farewell_ ? *farewell_ : connection_error("not connected");
  }
  if (query_in_flight()) co_return PgError{"could not watch the session: a query is in flight", ""};
  const uint64_t began = queries_begun_;
  for (;;) {
    waiting_idle_ = true;
    const auto error = co_await wait_socket(false);
    // A query began meanwhile: what came is its reader's to read.
    if (queries_begun_ != began) co_return std::nullopt;
    waiting_idle_ = false;
    if (error) co_return std::nullopt;  // cancelled: the caller's own wait ended first
    const bool read = PQconsumeInput(connection_.get()) != 0;
    // Parses what came: a FATAL reaches receive_notice(), even after the end of the connection.
    PQisBusy(connection_.get());
    if (!read || farewell_ || !connected()) {
      co_return farewell_ ? *farewell_ : connection_error("server closed the connection");
    }
  }
}

asio::awaitable<PgOutcome> PgSession::finish_query() {
  // Flush the query: with a full send buffer PQflush returns 1 and we wait for writability
  // (reading what the server sent meanwhile, so neither side deadlocks).
  for (;;) {
    const int flushed = PQflush(connection_.get());
    if (flushed == 0) break;
    if (flushed < 0) co_return PgOutcome{nullptr, connection_error("could not send query")};
    if (auto error = co_await wait_socket(true)) co_return PgOutcome{nullptr, error};
    if (PQconsumeInput(connection_.get()) == 0) {
      co_return PgOutcome{nullptr, connection_error("could not receive data")};
    }
  }
  // The first error, and the last statement's result (a script's final SELECT).
  PgOutcome outcome;
  auto keep_error = [&outcome](const PGresult* result) {
    const auto status = PQresultStatus(result);
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || outcome.error) return;
    const char* sqlstate = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    outcome.error = PgError{one_line(PQresultErrorMessage(result)), sqlstate ? sqlstate : ""};
  };
  for (;;) {
    while (PQisBusy(connection_.get())) {
      if (auto error = co_await wait_socket(false)) co_return PgOutcome{nullptr, error};
      if (PQconsumeInput(connection_.get()) == 0) {
        // A server that ends the session (FATAL, e.g. pg_terminate_backend) says why before it
        // closes: keep its message and SQLSTATE when libpq parsed them.
        if (PgResult last(PQgetResult(connection_.get())); last) keep_error(last.get());
        if (!outcome.error) outcome.error = connection_error("could not receive data");
        co_return PgOutcome{nullptr, outcome.error};
      }
    }
    PgResult result(PQgetResult(connection_.get()));
    if (!result) break;  // drained: the connection is ready for the next query
    if (!outcome.result && !outcome.error) ++statements_;
    keep_error(result.get());
    outcome.result = std::move(result);
  }
  co_return outcome;
}

asio::awaitable<std::optional<PgError>> PgSession::prepare(const std::string& name,
                                                           const std::string& sql) {
  if (!connected()) co_return PgError{"not connected", ""};
  begin_query();
  if (PQsendPrepare(connection_.get(), name.c_str(), sql.c_str(), 0, nullptr) == 0) {
    co_return connection_error("could not send prepare");
  }
  auto outcome = co_await finish_query();
  if (!outcome.error) prepared_.insert(name);
  co_return outcome.error;
}

asio::awaitable<std::optional<PgError>> PgSession::ensure_prepared(const std::string& name,
                                                                   const std::string& sql) {
  if (prepared_.contains(name)) co_return std::nullopt;
  auto error = co_await prepare(name, sql);
  // 42P05 duplicate_prepared_statement: prepared by an attempt whose answer was cut short (a
  // cancelled wait), so this connection has it.
  if (error && error->sqlstate == "42P05") {
    prepared_.insert(name);
    error.reset();
  }
  co_return error;
}

asio::awaitable<PgOutcome> PgSession::execute_prepared(const std::string& name,
                                                       const std::vector<std::string>& params) {
  if (!connected()) co_return PgOutcome{nullptr, PgError{"not connected", ""}};
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& param : params) values.push_back(param.c_str());
  begin_query();
  if (PQsendQueryPrepared(connection_.get(), name.c_str(), static_cast<int>(values.size()),
                          values.data(), nullptr, nullptr, 0) == 0) {
    co_return PgOutcome{nullptr, connection_error("could not send query")};
  }
  co_return co_await finish_query();
}

std::optional<PgError> PgSession::send_prepared(const std::string& name) {
  if (!connected()) return PgError{"not connected", ""};
  begin_query();
  if (PQsendQueryPrepared(connection_.get(), name.c_str(), 0, nullptr, nullptr, nullptr, 0) == 0) {
    return connection_error("could not send query");
  }
  return std::nullopt;
}

asio::awaitable<PgOutcome> PgSession::execute(const std::string& sql,
                                              const std::vector<std::string>& params) {
  if (!connected()) co_return PgOutcome{nullptr, PgError{"not connected", ""}};
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& param : params) values.push_back(param.c_str());
  begin_query();
  if (PQsendQueryParams(connection_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr,
                        values.data(), nullptr, nullptr, 0) == 0) {
    co_return PgOutcome{nullptr, connection_error("could not send query")};
  }
  co_return co_await finish_query();
}

asio::awaitable<PgOutcome> PgSession::execute_script(const std::string& sql) {
  if (!connected()) co_return PgOutcome{nullptr, PgError{"not connected", ""}};
  begin_query();
  if (PQsendQuery(connection_.get(), sql.c_str()) == 0) {
    co_return PgOutcome{nullptr, connection_error("could not send query")};
  }
  co_return co_await finish_query();
}

asio::awaitable<std::optional<PgError>> PgSession::flush_copy() {
  for (;;) {
    const int flushed = PQflush(connection_.get());
    if (flushed == 0) co_return std::nullopt;
    if (flushed < 0) co_return connection_error("could not send COPY data");
    if (auto error = co_await wait_socket(true)) co_return error;
    if (PQconsumeInput(connection_.get()) == 0)
      co_return connection_error("could not receive data");
  }
}

asio::awaitable<PgOutcome> PgSession::copy_from(const std::string& sql,
                                                std::function<bool(std::string&)> next) {
  if (!connected()) co_return PgOutcome{nullptr, PgError{"not connected", ""}};
  begin_query();
  if (PQsendQuery(connection_.get(), sql.c_str()) == 0) {
    co_return PgOutcome{nullptr, connection_error("could not send query")};
  }
  if (auto error = co_await flush_copy()) co_return PgOutcome{nullptr, error};
  while (PQisBusy(connection_.get())) {
    if (auto error = co_await wait_socket(false)) co_return PgOutcome{nullptr, error};
    if (PQconsumeInput(connection_.get()) == 0) {
      co_return PgOutcome{nullptr, connection_error("could not receive data")};
    }
  }
  PgResult started(PQgetResult(connection_.get()));
  if (!started || PQresultStatus(started.get()) != PGRES_COPY_IN) {
    const char* sqlstate = started ? PQresultErrorField(started.get(), PG_DIAG_SQLSTATE) : nullptr;
    PgError error{started ? one_line(PQresultErrorMessage(started.get())) : "COPY did not start",
                  sqlstate ? sqlstate : ""};
    if (error.message.empty()) error.message = "the statement is not COPY FROM STDIN";
    (void)co_await finish_query();
    co_return PgOutcome{nullptr, error};
  }
  std::string chunk;
  const char* end_error = nullptr;
  while (next(chunk)) {
    int queued = 0;
    while ((queued = PQputCopyData(connection_.get(), chunk.data(),
                                   static_cast<int>(chunk.size()))) == 0) {
      if (auto error = co_await flush_copy()) co_return PgOutcome{nullptr, error};
    }
    if (queued < 0) {
      end_error = "could not queue COPY data";
      break;
    }
    // libpq's buffer grows without bound in non-blocking mode: send the chunk before the next.
    if (auto error = co_await flush_copy()) co_return PgOutcome{nullptr, error};
  }
  int ended = 0;
  while ((ended = PQputCopyEnd(connection_.get(), end_error)) == 0) {
    if (auto error = co_await flush_copy()) co_return PgOutcome{nullptr, error};
  }
  if (ended < 0) co_return PgOutcome{nullptr, connection_error("could not end COPY")};
  co_return co_await finish_query();
}

}  // namespace pgwaitprof::collectors
