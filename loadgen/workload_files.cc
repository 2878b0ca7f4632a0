// Embedded workload files.
#include "loadgen/workload_files.h"

namespace pgwaitprof::loadgen {

base::Expected<std::string> workload_file(const std::string& file_name) {
  const auto& files = embedded_workload_files();
  const auto found = files.find(file_name);
  if (found == files.end()) {
    return base::Error{"built-in workload file \"" + file_name + "\" is missing from this build"};
  }
  return found->second;
}

}  // namespace pgwaitprof::loadgen
