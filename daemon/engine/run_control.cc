// Interrupting a run.
#include "daemon/engine/run_control.h"

#include <csignal>

#include "daemon/engine/process.h"

namespace pgwaitprof::engine {

void RunControl::interrupt(std::string reason) {
  if (interrupted()) return;
  reason_ = std::move(reason);
  interrupted_.set();
  signal_child(child_, SIGINT);
}

void RunControl::set_child(pid_t pid) {
  child_ = pid;
  if (interrupted()) signal_child(child_, SIGINT);
}

}  // namespace pgwaitprof::engine
