// Helpers of the traced source's fault tests (issue 48 item 7): the traced parts of a report, and
// (tests/integration/bpf_objects.h) the BPF programs and links a process holds.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/traced_time.h"
#include "tests/faults/fault_harness.h"
#include "tests/integration/bpf_objects.h"

namespace pgwaitprof::testing {

// The traced parts of a report's profile (or a timeline slice's) for one backend type and wait
// event, summed over states; `type` "" for every wait event of the backend type.
inline model::TracedTime traced_in(const nlohmann::json& profile, const std::string& backend_type,
                                   const std::string& type = "", const std::string& event = "") {
  model::TracedTime sum;
  for (const auto& entry : profile.value("traced", nlohmann::json::array())) {
    if (entry["backend_type"] != backend_type) continue;
    if (!type.empty() && (entry["wait_event_type"] != type || entry["wait_event"] != event)) {
      continue;
    }
    sum.blocked_s += entry["blocked_s"].get<double>();
    sum.runqueue_s += entry["runqueue_s"].get<double>();
    sum.on_cpu_s += entry["on_cpu_s"].get<double>();
    sum.waits += entry["waits"].get<uint64_t>();
  }
  return sum;
}

// The one run directory under `data`/runs ("" when none).
inline std::filesystem::path only_run_dir(const std::filesystem::path& data) {
  std::filesystem::path found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(data / "runs", error)) {
    found = entry.path();
  }
  return found;
}

inline nlohmann::json report_of(const std::filesystem::path& data) {
  const auto text = read_text(only_run_dir(data) / "report.json");
  return nlohmann::json::parse(text, nullptr, false);
}

}  // namespace pgwaitprof::testing
