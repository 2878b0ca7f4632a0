// Coroutines started with co_spawn that must all have finished before their owner goes: the
// group counts them, logs what any of them threw (nothing escapes the I/O loop silently), and
// lets the owner await the moment the last one ends. Single-threaded, like AsyncEvent.
#pragma once

#include <asio/co_spawn.hpp>
#include <chrono>
#include <exception>
#include <string>

#include "base/async_event.h"
#include "base/logging.h"

namespace pgwaitprof::base {

class TaskGroup {
 public:
  explicit TaskGroup(asio::any_io_executor executor) : executor_(executor), idle_(executor) {}

  // Starts `task`; `what` names it in the log if it throws.
  template <typename Awaitable>
  void spawn(Awaitable task, std::string what) {
    ++running_;
    asio::co_spawn(
        executor_, std::move(task), [this, what = std::move(what)](std::exception_ptr failure) {
          if (failure) {
            try {
              std::rethrow_exception(failure);
            } catch (const std::exception& error) {
              base::component_logger("task")->error("{} stopped: {}", what, error.what());
            }
          }
          if (--running_ == 0) idle_.notify();
        });
  }

  int running() const { return running_; }
  // Returns when no task runs (at once if none does); false when `timeout` passed first.
  asio::awaitable<bool> wait_idle(std::chrono::steady_clock::duration timeout) {
    if (running_ == 0) co_return true;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running_ > 0) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) co_return false;
      co_await idle_.wait_for(left);
    }
    co_return true;
  }

 private:
  asio::any_io_executor executor_;
  base::AsyncPulse idle_;
  int running_ = 0;
};

}  // namespace pgwaitprof::base
