// What the collectors produce: one snapshot of every backend of a server at one instant.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pgwaitprof::model {

using SteadyClock = std::chrono::steady_clock;
using SystemClock = std::chrono::system_clock;

// One row of pg_stat_activity. Empty strings stand for SQL NULL.
struct BackendSample {
  int32_t pid = 0;
  std::string backend_type;
  std::string state;
  std::string wait_event_type;
  std::string wait_event;
  std::optional<int64_t> query_id;
  std::string datname;
  std::string application_name;
  // pid is reused by the server; (pid, backend_start) names one backend for its lifetime.
  std::chrono::microseconds backend_start{0};
  // The sampling role may not see this backend's state and wait event (not pg_read_all_stats).
  bool hidden = false;
};

struct Snapshot {
  SystemClock::time_point taken_at;
  SteadyClock::time_point taken_at_steady;
  std::chrono::nanoseconds query_duration{0};
  std::vector<BackendSample> backends;
};

}  // namespace pgwaitprof::model
