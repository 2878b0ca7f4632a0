// Raising the calling thread's scheduling priority as far as the process may: real time
// (SCHED_FIFO at its lowest priority, 1: root, CAP_SYS_NICE or an RLIMIT_RTPRIO), else nice -10
// (root or CAP_SYS_NICE), else nothing. For a thread that must wake on time on a machine a
// benchmark saturates (the memory source's reader, and the benchmark of its wake-ups). Returns
// what it got, in words for the log.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string_view>

namespace pgwaitprof::base {

inline constexpr std::string_view kRealTime = "real time (SCHED_FIFO 1)";

inline std::string_view raise_thread_priority() {
  const sched_param lowest{.sched_priority = 1};
  if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &lowest) == 0) return kRealTime;
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), -10) == 0) return "nice -10";
  return "default priority";
}

}  // namespace pgwaitprof::base
