// Contiguous wait estimation.
#include "daemon/model/wait_tracker.h"

#include "daemon/model/wait_key.h"

namespace pgwaitprof::model {

std::vector<CompletedWait> WaitTracker::observe(const Snapshot& snapshot) {
  const auto now = snapshot.taken_at_steady;
  std::vector<CompletedWait> completed;
  auto finish = [&](const OpenWait& wait) {
    const auto lower = wait.last_seen - wait.first_seen;
    const auto upper = now - wait.before_first;
    completed.push_back(
        {wait.wait_event_type, wait.wait_event, std::chrono::duration<double>(lower + upper) / 2});
  };

  std::map<BackendId, OpenWait> still_open;
  for (const auto& backend : snapshot.backends) {
    const auto key = classify(backend);
    if (!key || key->wait_event_type == kCpu || is_idle(*key)) continue;
    const BackendId id{backend.pid, backend.backend_start.count()};
    auto found = open_.find(id);
    if (found != open_.end() && found->second.wait_event_type == key->wait_event_type &&
        found->second.wait_event == key->wait_event) {
      found->second.last_seen = now;
      still_open.insert(open_.extract(found));
      continue;
    }
    // Without a previous snapshot the start of the wait is unknown: take this one as its bound.
    still_open[id] =
        OpenWait{key->wait_event_type, key->wait_event, have_previous_ ? previous_ : now, now, now};
  }
  for (const auto& [id, wait] : open_) finish(wait);
  open_ = std::move(still_open);
  previous_ = now;
  have_previous_ = true;
  return completed;
}

void WaitTracker::reset() {
  open_.clear();
  have_previous_ = false;
}

}  // namespace pgwaitprof::model
