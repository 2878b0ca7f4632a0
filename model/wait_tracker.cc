// Contiguous wait estimation.
#include "model/wait_tracker.h"

namespace pgwaitprof::model {

const std::vector<CompletedWait>& WaitTracker::observe(const Snapshot& snapshot) {
  const auto now = snapshot.taken_at_steady;
  const uint64_t number = ++snapshot_number_;
  completed_.clear();
  auto finish = [&](const OpenWait& wait) {
    const auto lower = wait.last_seen - wait.first_seen;
    const auto upper = now - wait.before_first;
    completed_.push_back({wait.key, std::chrono::duration<double>(lower + upper) / 2});
  };
  size_t seen = 0;  // open waits this snapshot showed (went on, began, or ended and began anew)
  // Whether the last key seen is a wait to track: rows of one key follow each other.
  const WaitKey* last_key = nullptr;
  bool last_tracked = false;
  for (const auto& backend : snapshot.backends) {
    const WaitKey* key = key_of(backend);
    if (key == nullptr) continue;
    if (key != last_key) {
      last_key = key;
      last_tracked = key->wait_event_type != kCpu && !is_idle(*key);
    }
    if (!last_tracked) continue;
    // Without a previous snapshot the start of the wait is unknown: take this one as its bound.
    const OpenWait started{key, have_previous_ ? previous_ : now, now, now, number};
    auto [entry, inserted] =
        open_.try_emplace({backend.pid, backend.backend_start.count()}, started);
    OpenWait& wait = entry->second;
    if (inserted) ++seen;
    if (inserted || wait.seen_in == number) continue;
    ++seen;
    // Every entry left from the last snapshot was seen in it: the same key goes on, another
    // key of the same backend ends the wait it had.
    if (wait.key == key) {
      wait.last_seen = now;
      wait.seen_in = number;
    } else {
      finish(wait);
      wait = started;
    }
  }
  // Waits not seen in this snapshot have ended (none when it showed every open one: no sweep).
  for (auto entry = open_.begin(); seen < open_.size() && entry != open_.end();) {
    if (entry->second.seen_in == number) {
      ++entry;
      continue;
    }
    finish(entry->second);
    entry = open_.erase(entry);
  }
  previous_ = now;
  have_previous_ = true;
  return completed_;
}

void WaitTracker::reset() {
  open_.clear();
  have_previous_ = false;
}

}  // namespace pgwaitprof::model
