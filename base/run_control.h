// Lets a signal handler, a control-socket client or a daemon shutdown stop a run (or the set-up
// before it) at any stage: the child process the current step waits for (initdb, pg_ctl,
// pgbench -i, the load generator) gets SIGINT in its process group, waits that could take long
// end early, and the run is marked interrupted with the reason; its report is still written.
#pragma once

#include <sys/types.h>

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <string>

#include "base/async_event.h"

namespace pgwaitprof::base {

class RunControl {
 public:
  explicit RunControl(asio::any_io_executor executor) : interrupted_(std::move(executor)) {}

  // Idempotent: the first reason is kept.
  void interrupt(std::string reason = "interrupted by a signal");
  bool interrupted() const { return interrupted_.is_set(); }
  const std::string& reason() const { return reason_; }
  // Returns once interrupted.
  asio::awaitable<void> wait_interrupted() { co_await interrupted_.wait(); }

  // The child process the current step waits for; -1 when none. A child registered after the
  // interrupt is signalled at once.
  void set_child(pid_t pid);
  void clear_child() { child_ = -1; }

 private:
  base::AsyncEvent interrupted_;
  std::string reason_;
  pid_t child_ = -1;
};

}  // namespace pgwaitprof::base
