// Explaining wait events.
#include "daemon/commands/explain_command.h"

#include <iostream>

#include "model/wait_events.h"

namespace pgwaitprof::commands {

int explain_command(const std::string& event) {
  const auto matches = model::lookup_wait_event(event);
  if (matches.empty()) {
    std::cerr << "pgwaitprof: unknown wait event \"" << event << "\"\n"
              << "HINT: Give a name as pg_stat_activity shows it, such as \"WALWrite\" or "
                 "\"LWLock | WALWrite\"; old names such as \"WALWriteLock\" work too.\n";
    return 1;
  }
  for (size_t index = 0; index < matches.size(); ++index) {
    if (index > 0) std::cout << '\n';
    std::cout << model::render_wait_event_explanation(matches[index]);
  }
  return 0;
}

}  // namespace pgwaitprof::commands
