// The kernel times' readings of one second, shared by every kernel stage of the process. Each
// local target reads the schedstat of every backend of its server once a second, and a daemon's
// targets on one server all read the same backends: 300 targets made 90,000 /proc reads a second,
// a quarter of a CPU of the I/O thread's time, which on a loaded host then answered a SIGTERM
// only after seconds. Readings are
// taken in rounds, one per whole second of the steady clock: the first stage to need a process
// in a round reads it, the others take its figures, and all take the round's time (when its first
// reading was taken) as the end of their interval, so that intervals still tile. Process-wide
// and locked: stages of any thread may share a round.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <optional>

#include "base/time.h"
#include "model/sample.h"

namespace pgwaitprof::collectors {

struct Schedstat {
  uint64_t on_cpu_ns = 0;
  uint64_t runqueue_ns = 0;
};

class KernelRound {
 public:
  // The round `now` falls in: its number counts whole seconds of the steady clock.
  static int64_t number(model::SteadyClock::time_point now);

  // Holds the process's round of `now` until destroyed; a new round forgets the one before. A
  // `now` of a round already past takes the current one (a stage's time from before it waited).
  explicit KernelRound(model::SteadyClock::time_point now);
  KernelRound(const KernelRound&) = delete;
  KernelRound& operator=(const KernelRound&) = delete;

  // The round held.
  int64_t number() const;
  // When the round's first reading was taken: on the steady clock, and in microseconds since
  // 1970 (as backend_start counts).
  model::SteadyClock::time_point taken_at() const;
  int64_t taken_at_epoch_us() const;
  // A process's schedstat and reaped children's CPU as this round read them; read with `read`
  // now when it has not (kernel.h's read_schedstat and read_reaped_children_cpu). A process
  // gone is remembered as gone.
  using ReadSchedstat = std::optional<Schedstat> (*)(pid_t);
  using ReadReaped = std::optional<base::Seconds> (*)(pid_t);
  std::optional<Schedstat> schedstat(pid_t process, ReadSchedstat read);
  std::optional<base::Seconds> reaped_children_cpu(pid_t process, ReadReaped read);

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace pgwaitprof::collectors
