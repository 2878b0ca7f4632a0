// The memory source's refusals and the reason auto gives for them.
#include "collectors/memory/memory_refusal.h"

#include <fmt/format.h>

namespace pgwaitprof::collectors::memory {
namespace {

constexpr std::string_view kMemoryRefused = "memory source refused: ";

}  // namespace

base::Error refused(std::string_view what, std::string_view hint) {
  return base::Error{fmt::format("{}{}; {}", kMemoryRefused, what, hint)};
}

base::Error unreadable(const base::Error& error) {
  return refused(error.message,
                 error.message.find("Permission denied") != std::string::npos ||
                         error.message.find("Operation not permitted") != std::string::npos
                     ? kNeedRights
                     : kUseActivity);
}

std::string missing_layout_message(int major) {
  return refused(fmt::format("PostgreSQL {} has no shared-memory layout in this build (13 to 19 "
                             "have)",
                             major),
                 kUseActivity)
      .message;
}

std::string refusal_reason(std::string_view message) {
  if (message.starts_with(kMemoryRefused)) message.remove_prefix(kMemoryRefused.size());
  // kNeedRights ends with kUseActivity: only its ", or use --source activity" goes, so that the
  // reason still says which rights would let the memory source read the server.
  const std::string or_activity = fmt::format(", or {}", kUseActivity);
  for (const std::string& tail : {fmt::format("; {}", kUseActivity), or_activity}) {
    if (message.ends_with(tail)) {
      message.remove_suffix(tail.size());
      break;
    }
  }
  return std::string(message);
}

}  // namespace pgwaitprof::collectors::memory
