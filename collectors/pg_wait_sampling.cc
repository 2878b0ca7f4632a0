// pg_wait_sampling deltas.
#include "collectors/pg_wait_sampling.h"

#include "daemon/model/wait_key.h"

namespace pgwaitprof::collectors {

model::WaitKey wait_sampling_key(const WaitSamplingRow& row) {
  model::WaitKey key{row.backend_type.empty() ? "unknown" : row.backend_type, "active",
                     row.event_type, row.event};
  if (key.wait_event_type.empty()) {
    key.wait_event_type = model::kCpu;
    key.wait_event = model::kCpu;
  }
  if (key.backend_type != "client backend" && key.backend_type != "unknown") {
    key.state = "background";
  } else if (key.wait_event_type == "Client" && key.wait_event == "ClientRead") {
    key.state = "idle";
  }
  return key;
}

std::optional<model::Profile> WaitSamplingDelta::update(const std::vector<WaitSamplingRow>& rows,
                                                        uint64_t periods) {
  // pg_wait_sampling_profile has one row per (pid, event_type, event, queryid).
  std::map<RowKey, uint64_t> current;
  model::Profile delta;
  delta.add_snapshots(periods);
  for (const auto& row : rows) {
    const RowKey row_key{row.pid, row.event_type, row.event, row.query_id};
    current[row_key] = row.count;
    const auto before = previous_.find(row_key);
    const uint64_t old_count = before == previous_.end() ? 0 : before->second;
    const uint64_t added = row.count >= old_count ? row.count - old_count : row.count;
    if (added > 0) delta.add(wait_sampling_key(row), added);
  }
  previous_ = std::move(current);
  if (!have_baseline_) {
    have_baseline_ = true;
    return std::nullopt;
  }
  return delta;
}

}  // namespace pgwaitprof::collectors
