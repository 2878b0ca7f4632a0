// Waiting on an event without polling: a steady_timer that never expires on its own serves as
// the wait queue, and cancelling it wakes every waiter (the usual Asio idiom for a condition).
// AsyncEvent latches (once set, waits return at once); AsyncPulse wakes only the current waiters.
// Single-threaded: use from the io_context's thread only.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>

namespace pgwaitprof::base {

class AsyncPulse {
 public:
  explicit AsyncPulse(asio::any_io_executor executor)
      : timer_(std::move(executor), asio::steady_timer::time_point::max()) {}

  // Returns when notify() is called (or the waiting coroutine is cancelled).
  asio::awaitable<void> wait() {
    co_await timer_.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
  // As wait(), but gives up after `timeout`; true when notified.
  asio::awaitable<bool> wait_for(std::chrono::steady_clock::duration timeout) {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer deadline(timer_.get_executor(), timeout);
    auto outcome =
        co_await (wait() || deadline.async_wait(asio::experimental::as_tuple(asio::use_awaitable)));
    co_return outcome.index() == 0;
  }
  void notify() { timer_.cancel(); }

 private:
  asio::steady_timer timer_;
};

class AsyncEvent {
 public:
  explicit AsyncEvent(asio::any_io_executor executor) : pulse_(std::move(executor)) {}

  asio::awaitable<void> wait() {
    if (!set_) co_await pulse_.wait();
  }
  asio::awaitable<bool> wait_for(std::chrono::steady_clock::duration timeout) {
    if (set_) co_return true;
    co_return co_await pulse_.wait_for(timeout);
  }
  void set() {
    set_ = true;
    pulse_.notify();
  }
  bool is_set() const { return set_; }

 private:
  AsyncPulse pulse_;
  bool set_ = false;
};

}  // namespace pgwaitprof::base
