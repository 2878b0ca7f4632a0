/* The floor of the memory source's cost (tests/perf/suite.sh): a loop that only wakes at a rate,
 * as the source's reader does, and does nothing else. In real time (SCHED_FIFO 1, as the reader
 * runs where it may) with 1 ns of timer slack, it sleeps with clock_nanosleep(TIMER_ABSTIME) to
 * each tick of a fixed grid for the given seconds, then prints its CPU per tick as one JSON line.
 * Whatever a benchmark loses to this loop, no sampler that runs once a tick can avoid.
 *
 *   wakeup_floor HZ SECONDS
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

static double seconds_of(struct timeval time) { return time.tv_sec + time.tv_usec / 1e6; }

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: wakeup_floor HZ SECONDS\n");
    return 2;
  }
  const double hz = atof(argv[1]);
  const double seconds = atof(argv[2]);
  if (!(hz >= 1 && hz <= 100000) || !(seconds > 0)) {
    fprintf(stderr, "wakeup_floor: invalid rate or duration\n");
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const struct sched_param real_time = {.sched_priority = 1};
  const int scheduled = sched_setscheduler(0, SCHED_FIFO, &real_time) == 0;
  const long period_ns = (long)(1e9 / hz);
  const long long ticks = (long long)(hz * seconds);
  struct timespec at;
  clock_gettime(CLOCK_MONOTONIC, &at);
  struct rusage before;
  getrusage(RUSAGE_SELF, &before);
  for (long long tick = 0; tick < ticks; ++tick) {
    at.tv_nsec += period_ns;
    at.tv_sec += at.tv_nsec / 1000000000L;
    at.tv_nsec %= 1000000000L;
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
  }
  struct rusage after;
  getrusage(RUSAGE_SELF, &after);
  const double cpu = seconds_of(after.ru_utime) - seconds_of(before.ru_utime) +
                     seconds_of(after.ru_stime) - seconds_of(before.ru_stime);
  printf("{\"hz\":%.0f,\"ticks\":%lld,\"cpu_us_per_tick\":%.2f,\"real_time\":%s}\n", hz, ticks,
         cpu * 1e6 / (double)ticks, scheduled ? "true" : "false");
  return 0;
}
