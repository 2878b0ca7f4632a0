// Control socket server and client.
#include "daemon/control.h"

#include <csignal>
#include <deque>
#include <sys/stat.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/read_until.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/logging.h"
#include "daemon/app.h"
#include "daemon/process.h"

namespace pgwaitprof::daemon {
namespace {

using nlohmann::json;
using asio::local::stream_protocol;
constexpr auto kAsTuple = asio::experimental::as_tuple(asio::use_awaitable);

auto log() {
  static auto logger = config::component_logger("control");
  return logger;
}

std::string error_event(const char* code, std::string message) {
  return json{{"event", "error"}, {"code", code}, {"message", std::move(message)}}.dump() + "\n";
}

std::string done_event(const RunOutcome& outcome) {
  return json{{"event", "done"},
              {"dir", outcome.dir.string()},
              {"status", outcome.run.status},
              {"exit_code", outcome.exit_code},
              {"error", outcome.run.error}}.dump() + "\n";
}

}  // namespace

std::filesystem::path control_socket_path(const std::filesystem::path& data_dir) {
  return data_dir / "pgwaitprof.sock";
}

bool loadgen_allowed(const std::string& loadgen, const std::vector<std::string>& allowed) {
  return std::find(allowed.begin(), allowed.end(), loadgen) != allowed.end();
}

ControlServer::ControlServer(DaemonApp& app, const std::filesystem::path& data_dir)
    : app_(app), path_(control_socket_path(data_dir)), acceptor_(app.io_context()) {}

ControlServer::~ControlServer() { stop(); }

void ControlServer::start() {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);  // a stale socket of a daemon that died
  // Created owner-only: whoever can start runs can start processes as the daemon's user.
  const mode_t previous = ::umask(0177);
  acceptor_.open();
  acceptor_.bind(stream_protocol::endpoint(path_.string()));
  ::umask(previous);
  ::chmod(path_.c_str(), 0600);
  acceptor_.listen();
  asio::co_spawn(app_.io_context(), accept_loop(), [](std::exception_ptr) {});
  log()->info("control socket path={}", path_.string());
}

void ControlServer::stop() {
  if (!acceptor_.is_open()) return;
  std::error_code ignored;
  acceptor_.close(ignored);
  std::filesystem::remove(path_, ignored);
}

asio::awaitable<void> ControlServer::accept_loop() {
  while (acceptor_.is_open()) {
    auto [error, socket] = co_await acceptor_.async_accept(kAsTuple);
    if (error) break;
    asio::co_spawn(app_.io_context(), serve(std::move(socket)), [](std::exception_ptr failure) {
      if (failure) {
        try {
          std::rethrow_exception(failure);
        } catch (const std::exception& what) {
          log()->warn("control connection failed: {}", what.what());
        }
      }
    });
  }
}

asio::awaitable<void> ControlServer::serve(stream_protocol::socket socket) {
  std::string buffer;
  auto [read_error, length] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), '\n', kAsTuple);
  if (read_error) co_return;
  // Refusals end the conversation. (The event is built before the co_await: GCC 12 cannot
  // keep a braced initializer list alive across a suspension point.)
  auto refuse = [&](const char* code, std::string message) -> asio::awaitable<void> {
    const std::string text = error_event(code, std::move(message));
    co_await asio::async_write(socket, asio::buffer(text), kAsTuple);
  };
  json request = json::parse(buffer.substr(0, length), nullptr, /*allow_exceptions=*/false);
  buffer.erase(0, length);
  if (!request.is_object() || request.value("type", "") != "run") {
    co_await refuse("refused", "could not parse request");
    co_return;
  }
  RunRequest run;
  run.conninfo = request.value("target", "");
  run.workload = request.value("workload", "tpcb");
  run.label = request.value("label", "");
  run.pgbench_args = request.value("pgbench_args", std::vector<std::string>{});
  run.interval = std::chrono::seconds(request.value("interval_s", 1));
  run.loadgen = request.value("loadgen", "pgbench");
  run.data_dir = app_.config().data_dir;
  // Only configured load generators, always as an argv array: a request can never name
  // another program.
  if (!loadgen_allowed(run.loadgen, app_.config().loadgen_executables)) {
    log()->warn("refused run request: load generator not allowed loadgen=\"{}\"", run.loadgen);
    co_await refuse("refused", fmt::format("load generator \"{}\" is not allowed (allowed: {})", run.loadgen,
                                           fmt::join(app_.config().loadgen_executables, ", ")));
    co_return;
  }
  auto* target = app_.find_target(run.conninfo);
  if (target == nullptr) {
    co_await refuse("unknown_target", "this daemon does not sample that target");
    co_return;
  }
  if (target->profile->current().run) {
    co_await refuse("busy", fmt::format("a run is already active on target \"{}\"", target->config.name));
    co_return;
  }
  run.target_name = target->config.name;
  run.conninfo = target->config.dsn;

  std::deque<std::string> outbox;
  RunControl control;
  bool finished = false;

  // The client going away (Ctrl-C) or asking to interrupt stops the run; its report is kept.
  auto watch_client = [&]() -> asio::awaitable<void> {
    for (;;) {
      auto [error, got] = co_await asio::async_read_until(socket, asio::dynamic_buffer(buffer), '\n', kAsTuple);
      if (error || buffer.find("interrupt") != std::string::npos) {
        if (!finished) control.interrupt();
        co_return;
      }
      buffer.erase(0, got);
    }
  };
  auto pump = [&]() -> asio::awaitable<void> {
    asio::steady_timer idle(socket.get_executor());
    while (!finished || !outbox.empty()) {
      if (outbox.empty()) {
        idle.expires_after(std::chrono::milliseconds(10));
        co_await idle.async_wait(kAsTuple);
        continue;
      }
      const std::string text = std::move(outbox.front());
      outbox.pop_front();
      auto [error, written] = co_await asio::async_write(socket, asio::buffer(text), kAsTuple);
      if (error) outbox.clear();
    }
  };
  asio::co_spawn(socket.get_executor(), watch_client(), [](std::exception_ptr) {});
  bool pump_done = false;
  asio::co_spawn(socket.get_executor(), pump(), [&](std::exception_ptr) { pump_done = true; });
  log()->info("run requested target={} workload={}", run.target_name, run.workload);
  RunOutcome outcome = co_await app_.execute(*target, run, control, [&](json event) {
    outbox.push_back(event.dump() + "\n");
  });
  outbox.push_back(done_event(outcome));
  finished = true;
  asio::steady_timer drain(socket.get_executor());
  while (!pump_done) {
    drain.expires_after(std::chrono::milliseconds(5));
    co_await drain.async_wait(kAsTuple);
  }
  std::error_code ignored;
  socket.shutdown(stream_protocol::socket::shutdown_both, ignored);
  socket.close(ignored);
}

namespace {
int interrupt_fd = -1;
void forward_interrupt(int) {
  static const char message[] = "{\"type\":\"interrupt\"}\n";
  if (interrupt_fd >= 0) [[maybe_unused]] auto written = ::write(interrupt_fd, message, sizeof message - 1);
}
}  // namespace

std::optional<RemoteRunResult> run_through_daemon(const std::filesystem::path& socket_path,
                                                  const RunRequest& request,
                                                  const std::function<void(const std::string&)>& on_line) {
  if (!std::filesystem::exists(socket_path)) return std::nullopt;
  asio::io_context io;
  stream_protocol::socket socket(io);
  std::error_code error;
  socket.connect(stream_protocol::endpoint(socket_path.string()), error);
  if (error) return std::nullopt;  // a stale socket: nobody listens
  const json message = {{"type", "run"},           {"target", request.conninfo},
                        {"workload", request.workload}, {"label", request.label},
                        {"pgbench_args", request.pgbench_args},
                        {"interval_s", request.interval.count()}, {"loadgen", request.loadgen}};
  asio::write(socket, asio::buffer(message.dump() + "\n"), error);
  if (error) return std::nullopt;

  interrupt_fd = socket.native_handle();
  struct sigaction action {};
  action.sa_handler = forward_interrupt;
  struct sigaction previous_int {}, previous_term {};
  ::sigaction(SIGINT, &action, &previous_int);
  ::sigaction(SIGTERM, &action, &previous_term);
  auto restore = [&] {
    ::sigaction(SIGINT, &previous_int, nullptr);
    ::sigaction(SIGTERM, &previous_term, nullptr);
    interrupt_fd = -1;
  };

  std::string buffer;
  std::optional<RemoteRunResult> result;
  for (;;) {
    const auto length = asio::read_until(socket, asio::dynamic_buffer(buffer), '\n', error);
    if (error == asio::error::interrupted) continue;
    if (error) {
      restore();
      throw std::runtime_error("lost connection to the daemon at \"" + socket_path.string() + "\" during the run");
    }
    const json event = json::parse(buffer.substr(0, length));
    buffer.erase(0, length);
    const std::string kind = event.value("event", "");
    if (kind == "line") {
      on_line(event.value("text", ""));
    } else if (kind == "started") {
      on_line(fmt::format("pgwaitprof: run {} by the daemon at {} -> {}", event.value("run_id", ""),
                          socket_path.string(), event.value("dir", "")));
    } else if (kind == "error") {
      restore();
      if (event.value("code", "") == "unknown_target") return std::nullopt;
      throw std::runtime_error("the daemon refused the run: " + event.value("message", ""));
    } else if (kind == "done") {
      result = RemoteRunResult{event.value("dir", ""), event.value("exit_code", 1)};
      break;
    }
  }
  restore();
  return result;
}

}  // namespace pgwaitprof::daemon
