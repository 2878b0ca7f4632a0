// `pgwaitprof explain EVENT`: what a wait event means, under today's and old names, and what
// usually causes it (model/wait_events.h).
#pragma once

#include <string>

namespace pgwaitprof::commands {

// 0 when the event is known; 1 (with a one-line error) when it is not.
int explain_command(const std::string& event);

}  // namespace pgwaitprof::commands
