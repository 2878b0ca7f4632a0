// Interrupting a run.
#include "base/run_control.h"

#include <sys/types.h>

#include <csignal>

namespace pgwaitprof::base {
namespace {

// Signals the child's process group (each child the engine spawns has its own).
void signal_child(pid_t pid, int signal_number) {
  if (pid <= 0) return;
  // The child is its own process group leader: its children (initdb's postgres --boot) go too.
  if (::kill(-pid, signal_number) != 0) ::kill(pid, signal_number);
}

}  // namespace

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

}  // namespace pgwaitprof::base
