// A finished traced run (--source trace) built by hand: its profile's counts are microseconds of
// time and its snapshots microseconds of the window, as collectors/trace/ writes them, and each
// wait key's blocking waits all last one fixed duration (the shortest and longest known, so its
// p50 and p99 are that duration exactly).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/run.h"
#include "model/traced_time.h"
#include "tests/model/run_fixture.h"

namespace pgwaitprof::model {

struct TracedWaits {
  WaitKey key;
  uint64_t waits = 0;
  double duration_s = 0;  // of every wait
};

// `waits` blocking waits of `duration_s` each, in the bucket the BPF programs would count them.
inline TracedTime fixed_waits(uint64_t waits, double duration_s) {
  TracedTime time;
  time.waits = waits;
  time.blocked_s = static_cast<double>(waits) * duration_s;
  time.ended_blocked_s = time.blocked_s;
  time.min_s = time.max_s = duration_s;
  for (int index = 0; index < kTracedBuckets; ++index) {
    if (duration_s >= traced_bucket_lower_s(index) && duration_s < traced_bucket_upper_s(index)) {
      time.histogram[index] = waits;
    }
  }
  return time;
}

inline Run traced_run(const std::string& variant, int clients, double tps, int repeat,
                      const std::vector<TracedWaits>& waits, double wall_s = 1.0) {
  Run run = run_of(variant, clients, tps, repeat);
  for (const auto& entry : waits) {
    const auto time = fixed_waits(entry.waits, entry.duration_s);
    run.profile.add(entry.key, static_cast<uint64_t>(std::llround(time.time_s() * 1e6)));
    run.profile.add_traced(entry.key, time);
  }
  run.profile.add_snapshots(static_cast<uint64_t>(std::llround(wall_s * 1e6)));
  return run;
}

inline const WaitKey kWalWrite{"client backend", "active", "LWLock", "WALWrite"};
inline const WaitKey kClientRead{"client backend", "idle in transaction", "Client", "ClientRead"};
inline const WaitKey kIdleClientRead{"client backend", "idle", "Client", "ClientRead"};
inline const WaitKey kWalWriterMain{"walwriter", "background", "Activity", "WalWriterMain"};

}  // namespace pgwaitprof::model
