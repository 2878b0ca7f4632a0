// Fault points.
#include "daemon/engine/fault_point.h"

#include <unistd.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>

namespace pgwaitprof::engine {

asio::awaitable<void> fault_point(std::string_view name, base::RunControl& control) {
  const char* hold = std::getenv("PGWAITPROF_FAULT_HOLD");
  if (hold == nullptr || name != hold || control.interrupted()) co_return;
  std::cerr << "pgwaitprof: holding at " << name << std::endl;
  using namespace asio::experimental::awaitable_operators;
  const char* seconds = std::getenv("PGWAITPROF_FAULT_HOLD_SECONDS");
  const int limit_s = seconds != nullptr ? std::clamp(std::atoi(seconds), 0, 600) : 60;
  asio::steady_timer limit(co_await asio::this_coro::executor, std::chrono::seconds(limit_s));
  co_await (limit.async_wait(asio::experimental::as_tuple(asio::use_awaitable)) ||
            control.wait_interrupted());
}

void fault_kill(std::string_view name) {
  const char* kill_at = std::getenv("PGWAITPROF_FAULT_KILL");
  if (kill_at != nullptr && name == kill_at) ::kill(::getpid(), SIGKILL);
}

}  // namespace pgwaitprof::engine
