// Fault injection for the tests of pgwaitprof's guarantees (tests/faults/signal_class_test.cc):
// with PGWAITPROF_FAULT_HOLD=NAME in its environment, pgwaitprof says
// "pgwaitprof: holding at NAME" on stderr when it reaches the point NAME and waits there, until
// it is interrupted or for PGWAITPROF_FAULT_HOLD_SECONDS (default 60), so that a test can end it
// by a signal at exactly that point of a run (say, while it writes its report). Without the
// variable (always, outside those tests) a fault point does nothing.
//
// PGWAITPROF_FAULT_FAIL=NAME makes the operation at NAME fail as if the system refused it (say,
// a new watchdog that cannot be started; the lower layers ask through base/fault_injection.h:
// trace-btf and trace-verifier in collectors/trace/), and PGWAITPROF_FAULT_KILL=NAME makes
// pgwaitprof SIGKILL itself at NAME (say, halfway through writing a run directory).
#pragma once

#include <asio/awaitable.hpp>
#include <string_view>

#include "base/fault_injection.h"
#include "base/run_control.h"

namespace pgwaitprof::engine {

asio::awaitable<void> fault_point(std::string_view name, base::RunControl& control);

// Whether the operation at `name` is to fail (PGWAITPROF_FAULT_FAIL): base/fault_injection.h.
using base::fault_fails;

// SIGKILL of this process at `name` (PGWAITPROF_FAULT_KILL), as kill -9 from outside would.
void fault_kill(std::string_view name);

}  // namespace pgwaitprof::engine
