// The memory source's refusals: one line that says what was wrong and what to do ("memory
// source refused: WHAT; HINT"), and the reason `auto` gives for sampling pg_stat_activity
// instead (what was wrong, with no hint to use the activity source it already uses).
#pragma once

#include <string>
#include <string_view>

#include "base/expected.h"

namespace pgwaitprof::collectors::memory {

inline constexpr std::string_view kUseActivity = "use --source activity";
inline constexpr std::string_view kNeedPgMonitor = "the sampling role needs pg_monitor";
// A server in a PID namespace that this one cannot see into.
inline constexpr std::string_view kNeedNamespace =
    "run pgwaitprof in the server's PID namespace or in one above it";
// Who may read another process's memory (ptrace's access mode), then the way out.
inline constexpr std::string_view kNeedRights =
    "run as root, as the server's OS user or with CAP_SYS_PTRACE, or use --source activity";

// "memory source refused: WHAT; HINT".
base::Error refused(std::string_view what, std::string_view hint);

// A failed read of the server's memory or of its /proc files, as a refusal: the rights' hint
// when the kernel said no (EPERM, EACCES), else the activity source's.
base::Error unreadable(const base::Error& error);

// The major of a server_version_num without a layout in this build, as a refusal.
std::string missing_layout_message(int major);

// What a refusal says was wrong, without its "memory source refused: " and the hint to use the
// activity source; what would let the memory source read the server stays (root, the server's
// OS user, CAP_SYS_PTRACE; pg_monitor). Never cut inside a word.
std::string refusal_reason(std::string_view message);

}  // namespace pgwaitprof::collectors::memory
