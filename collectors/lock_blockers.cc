// Lock blocker lookups.
#include "collectors/lock_blockers.h"

#include <charconv>

#include "collectors/statements.h"

namespace pgwaitprof::collectors {
namespace {

template <typename Number>
Number number(const PGresult* result, int row, int column, Number fallback) {
  const auto text = cell(result, row, column);
  Number value = fallback;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

}  // namespace

std::vector<model::LockWait> parse_lock_blockers(const PGresult* result) {
  std::vector<model::LockWait> waits;
  for (int row = 0; row < PQntuples(result); ++row) {
    model::LockWait wait;
    wait.pid = number<int32_t>(result, row, 0, 0);
    wait.lock_type = cell(result, row, 1);
    wait.mode = cell(result, row, 2);
    wait.object = cell(result, row, 3);
    wait.blocker_pid = number<int32_t>(result, row, 4, 0);
    wait.blocker_backend_type = cell(result, row, 5);
    wait.blocker_application = cell(result, row, 6);
    wait.blocker_state = cell(result, row, 7);
    wait.blocker_xact_age = base::Seconds(number<double>(result, row, 8, -1));
    wait.blocker_statement = normalize_statement(cell(result, row, 9));
    wait.blocker_blocked = cell(result, row, 10) == "t";
    wait.blocker_prepared = cell(result, row, 11);
    if (!wait.blocker_prepared.empty()) {
      wait.blocker_owner = cell(result, row, 12);
      wait.blocker_backend_type = "prepared transaction";
      wait.blocker_state = "prepared";
    }
    waits.push_back(std::move(wait));
  }
  return waits;
}

asio::awaitable<CollectResult> LockBlockerCollector::collect(CollectContext& context) {
  // One lookup per snapshot at most, and only while backends wait on locks.
  if (context.latest == nullptr || context.latest->taken_at_steady == looked_at_snapshot_) {
    co_return std::nullopt;
  }
  looked_at_snapshot_ = context.latest->taken_at_steady;
  std::string pids;
  for (const auto& backend : context.latest->backends) {
    if (backend.wait_event_type != "Lock") continue;
    pids += (pids.empty() ? "" : ",") + std::to_string(backend.pid);
  }
  if (pids.empty()) co_return std::nullopt;
  const std::vector<std::string> params{"{" + pids + "}"};
  auto found = co_await context.session->execute(kLockBlockersQuery, params);
  if (!found.ok()) co_return collector_error(*found.error, *context.session);
  model::LockLookup lookup;
  lookup.at = context.latest->taken_at_steady;
  lookup.waits = parse_lock_blockers(found.result.get());
  if (!lookup.waits.empty()) context.sink->on_lock_waits(lookup);
  co_return std::nullopt;
}

}  // namespace pgwaitprof::collectors
