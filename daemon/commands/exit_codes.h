// The commands' exit codes besides 0: a failure of the work, and a bad invocation (an unknown
// option, a value out of range), which exits before any work is done.
#pragma once

namespace pgwaitprof::commands {

inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

}  // namespace pgwaitprof::commands
