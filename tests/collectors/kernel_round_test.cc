// The kernel times' rounds (issue 47 item 11): the kernel stages of a daemon's targets on one
// server share each second's /proc readings instead of each reading every backend, and a new
// second reads again. With readers that count their calls.
#include "collectors/kernel_round.h"

#include <gtest/gtest.h>

#include <chrono>

namespace pgwaitprof::collectors {
namespace {

using namespace std::chrono_literals;

int schedstat_reads = 0;
int reaped_reads = 0;
std::optional<Schedstat> fake_schedstat(pid_t process) {
  ++schedstat_reads;
  if (process == 0) return std::nullopt;  // gone
  return Schedstat{static_cast<uint64_t>(process) * 1000 + schedstat_reads, 7};
}
std::optional<base::Seconds> fake_reaped(pid_t) {
  ++reaped_reads;
  return base::Seconds(reaped_reads);
}

// A time `after` into the round after the process's current one (which an earlier test may
// have moved ahead of the clock).
model::SteadyClock::time_point next_round(model::SteadyClock::duration after) {
  int64_t current = 0;
  {
    const KernelRound round(model::SteadyClock::now());
    current = round.number();
  }
  return model::SteadyClock::time_point(std::chrono::seconds(current + 1)) + after;
}

TEST(KernelRound, StagesOfOneSecondShareItsReadings) {
  const auto first = next_round(100ms);
  schedstat_reads = reaped_reads = 0;
  model::SteadyClock::time_point taken;
  int64_t taken_us = 0;
  std::optional<Schedstat> stat;
  {
    KernelRound round(first);
    taken = round.taken_at();
    taken_us = round.taken_at_epoch_us();
    stat = round.schedstat(42, fake_schedstat);
    ASSERT_TRUE(stat.has_value());
    EXPECT_EQ(round.reaped_children_cpu(1, fake_reaped), base::Seconds(1));
  }
  // Other stages later in the same second: the same figures and time, and no read.
  for (const auto later : {first + 500ms, first + 899ms}) {
    KernelRound round(later);
    EXPECT_EQ(round.number(), KernelRound::number(first));
    EXPECT_EQ(round.taken_at(), taken);
    EXPECT_EQ(round.taken_at_epoch_us(), taken_us);
    const auto again = round.schedstat(42, fake_schedstat);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->on_cpu_ns, stat->on_cpu_ns);
    EXPECT_EQ(round.reaped_children_cpu(1, fake_reaped), base::Seconds(1));
  }
  EXPECT_EQ(schedstat_reads, 1);
  EXPECT_EQ(reaped_reads, 1);
  // A process gone is remembered as gone: not read again by each stage.
  for (const auto later : {first + 600ms, first + 700ms}) {
    KernelRound round(later);
    EXPECT_FALSE(round.schedstat(0, fake_schedstat).has_value());
  }
  EXPECT_EQ(schedstat_reads, 2);
}

TEST(KernelRound, ANewSecondReadsAgainAndAnOldOneTakesTheCurrent) {
  const auto first = next_round(100ms);
  schedstat_reads = 0;
  int64_t number = 0;
  {
    KernelRound round(first);
    number = round.number();
    (void)round.schedstat(42, fake_schedstat);
  }
  {
    KernelRound round(first + 1s);
    EXPECT_EQ(round.number(), number + 1);
    (void)round.schedstat(42, fake_schedstat);
  }
  EXPECT_EQ(schedstat_reads, 2);
  // A stage whose time is from before it waited: the current round, not the old one again.
  {
    KernelRound round(first + 200ms);
    EXPECT_EQ(round.number(), number + 1);
    (void)round.schedstat(42, fake_schedstat);
  }
  EXPECT_EQ(schedstat_reads, 2);
}

}  // namespace
}  // namespace pgwaitprof::collectors
