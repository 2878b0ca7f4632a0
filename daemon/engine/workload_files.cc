// Embedded workload files.
#include "daemon/engine/workload_files.h"

namespace pgwaitprof::engine {

Expected<std::string> workload_file(const std::string& file_name) {
  const auto& files = embedded_workload_files();
  const auto found = files.find(file_name);
  if (found == files.end()) {
    return Error{"built-in workload file \"" + file_name + "\" is missing from this build"};
  }
  return found->second;
}

}  // namespace pgwaitprof::engine
