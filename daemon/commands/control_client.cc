// Control socket client.
#include "daemon/commands/control_client.h"

#include <fmt/format.h>

#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/read_until.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <csignal>
#include <nlohmann/json.hpp>

#include "base/as_tuple.h"
#include "daemon/service/control_protocol.h"

namespace pgwaitprof::commands {
namespace {

using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using asio::local::stream_protocol;
using Answer = base::Expected<std::optional<RemoteRunResult>>;
using base::kAsTuple;
constexpr auto kConnectTimeout = 5s;
// The daemon sends at least an "alive" event every 5 s.
constexpr auto kSilenceTimeout = 30s;

struct Conversation {
  stream_protocol::socket socket;
  asio::signal_set signals;
  std::filesystem::path path;
  const std::function<void(const std::string&)>& on_line;
  const std::function<void(const std::string&)>& on_notice;
  std::string buffer;
};

// The daemon's events until "done" (or a refusal, or silence).
asio::awaitable<Answer> read_events(Conversation& talk) {
  asio::steady_timer silence(talk.socket.get_executor());
  for (;;) {
    silence.expires_after(kSilenceTimeout);
    auto read = co_await (
        asio::async_read_until(talk.socket, asio::dynamic_buffer(talk.buffer), '\n', kAsTuple) ||
        silence.async_wait(kAsTuple));
    if (read.index() == 1) {
      co_return base::Error{fmt::format("the daemon at \"{}\" stopped answering (nothing in {} s)",
                                        talk.path.string(), kSilenceTimeout.count())};
    }
    const auto [error, length] = std::get<0>(read);
    if (error) {
      co_return base::Error{fmt::format("lost connection to the daemon at \"{}\" during the run",
                                        talk.path.string())};
    }
    const auto event = nlohmann::json::parse(talk.buffer.substr(0, length), nullptr, false);
    talk.buffer.erase(0, length);
    if (!event.is_object()) continue;
    const std::string kind = event.value("event", "");
    if (kind == "line") {
      talk.on_line(event.value("text", ""));
    } else if (kind == "started") {
      talk.on_line(fmt::format("pgwaitprof: run {} by the daemon at {} -> {}",
                               event.value("run_id", ""), talk.path.string(),
                               event.value("dir", "")));
    } else if (kind == "error") {
      if (event.value("code", "") == "unknown_target") co_return std::optional<RemoteRunResult>{};
      co_return base::Error{"the daemon refused the run: " + event.value("message", "")};
    } else if (kind == "done") {
      co_return std::optional<RemoteRunResult>(
          RemoteRunResult{event.value("dir", ""), event.value("exit_code", 1),
                          event.value("status", ""), event.value("error", "")});
    }
  }
}

// The first signal asks the daemon to interrupt the run (its report is still written); the
// next one stops waiting for it.
asio::awaitable<void> forward_signals(Conversation& talk) {
  auto [error, signal] = co_await talk.signals.async_wait(kAsTuple);
  if (error) co_return;
  talk.on_notice("pgwaitprof: asking the daemon to stop the run (Ctrl-C again to stop waiting)");
  const std::string interrupt = service::interrupt_request_line();
  co_await asio::async_write(talk.socket, asio::buffer(interrupt), kAsTuple);
  co_await talk.signals.async_wait(kAsTuple);
}

asio::awaitable<Answer> converse(Conversation& talk, const engine::RunRequest& request) {
  asio::steady_timer deadline(talk.socket.get_executor(), kConnectTimeout);
  auto connected = co_await (
      talk.socket.async_connect(stream_protocol::endpoint(talk.path.string()), kAsTuple) ||
      deadline.async_wait(kAsTuple));
  std::string problem;
  if (connected.index() == 1) {
    problem = fmt::format("no answer in {} s", kConnectTimeout.count());
  } else if (const auto [error] = std::get<0>(connected); error) {
    // Nobody listens on a socket a dead daemon left behind: not worth a word.
    if (error == asio::error::connection_refused || error == asio::error::not_found) {
      co_return std::optional<RemoteRunResult>{};
    }
    problem = error.message();
  }
  if (problem.empty()) {
    const std::string line = service::run_request_line(request);
    auto [error, written] = co_await asio::async_write(talk.socket, asio::buffer(line), kAsTuple);
    if (error) problem = error.message();
  }
  if (!problem.empty()) {
    talk.on_notice(
        fmt::format("pgwaitprof: could not use the daemon at \"{}\": {}; sampling in "
                    "this process",
                    talk.path.string(), problem));
    co_return std::optional<RemoteRunResult>{};
  }
  auto answer = co_await (read_events(talk) || forward_signals(talk));
  if (answer.index() == 1) {
    co_return base::Error{
        "stopped waiting for the daemon; it interrupts the run and keeps its "
        "report"};
  }
  co_return std::move(std::get<0>(answer));
}

}  // namespace

Answer run_through_daemon(const std::filesystem::path& socket, const engine::RunRequest& request,
                          const std::function<void(const std::string&)>& on_line,
                          const std::function<void(const std::string&)>& on_notice) {
  std::error_code exists_error;
  if (!std::filesystem::exists(socket, exists_error)) {
    // A daemon whose directory we may not enter refuses us as surely as its socket would.
    if (exists_error && exists_error != std::errc::no_such_file_or_directory) {
      on_notice(
          fmt::format("pgwaitprof: could not use the daemon at \"{}\": {}; sampling in this "
                      "process",
                      socket.string(), exists_error.message()));
    }
    return std::optional<RemoteRunResult>{};
  }
  asio::io_context io;
  Conversation talk{stream_protocol::socket(io),
                    asio::signal_set(io, SIGINT, SIGTERM, SIGHUP),
                    socket,
                    on_line,
                    on_notice,
                    {}};
  talk.signals.add(SIGQUIT);
  Answer answer = std::optional<RemoteRunResult>{};
  asio::co_spawn(io, converse(talk, request), [&](std::exception_ptr failure, Answer done) {
    if (failure) {
      answer = base::Error{"the conversation with the daemon failed"};
    } else {
      answer = std::move(done);
    }
  });
  io.run();
  return answer;
}

}  // namespace pgwaitprof::commands
