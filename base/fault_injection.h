// The one switch of fault injection that every layer may ask: PGWAITPROF_FAULT_FAIL=NAME makes
// the operation at NAME fail as if the system refused it (daemon/engine/fault_point.h has the
// points that hold or kill a run; collectors/trace/ the kernel's refusals of the traced source).
// Without the variable (always, outside the fault tests) nothing fails.
#pragma once

#include <cstdlib>
#include <string_view>

namespace pgwaitprof::base {

// Whether the operation at `name` is to fail (PGWAITPROF_FAULT_FAIL).
inline bool fault_fails(std::string_view name) {
  const char* failing = std::getenv("PGWAITPROF_FAULT_FAIL");
  return failing != nullptr && name == failing;
}

}  // namespace pgwaitprof::base
