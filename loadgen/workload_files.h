// The built-in workloads' SQL set-up and pgbench scripts (loadgen/workloads/), compiled into the
// binary so a run never depends on where the project was installed. The workload table itself is
// model/workloads.h.
#pragma once

#include <map>
#include <string>

#include "base/expected.h"

namespace pgwaitprof::loadgen {

// Contents of loadgen/workloads files by file name (generated at build time).
const std::map<std::string, std::string>& embedded_workload_files();
base::Expected<std::string> workload_file(const std::string& file_name);

}  // namespace pgwaitprof::loadgen
