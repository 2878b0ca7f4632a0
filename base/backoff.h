// The delays between attempts to reach a server that went away: 100 ms, doubling up to 5 s,
// back to 100 ms once an attempt worked. One home for every connection pgwaitprof keeps up
// (a target's sampler, a run's own connection), so they retry alike.
#pragma once

#include <algorithm>
#include <chrono>

namespace pgwaitprof::base {

class Backoff {
 public:
  static constexpr std::chrono::milliseconds kFirst{100};
  static constexpr std::chrono::milliseconds kCap{5000};

  // The wait before the next attempt; each call doubles the one after it, up to kCap.
  std::chrono::milliseconds next() {
    const auto delay = delay_;
    delay_ = std::min(delay_ * 2, kCap);
    return delay;
  }
  // An attempt worked: the next failure waits kFirst again.
  void reset() { delay_ = kFirst; }

 private:
  std::chrono::milliseconds delay_ = kFirst;
};

}  // namespace pgwaitprof::base
