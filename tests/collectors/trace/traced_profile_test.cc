// The traced source's maps turned into a profile: blocked and run-queue time per key, the exact
// on-CPU time spread by the samples, sleeps without a wait event told from CPU, the postmaster
// left out, and the growth between two reads.
#include <gtest/gtest.h>

#include "collectors/memory/pg_layout.h"
#include "collectors/memory/pg_names.h"
#include "collectors/trace/trace_source.h"
#include "model/wait_key.h"

namespace pgwaitprof::collectors::trace {
namespace {

constexpr uint32_t kClientBackend = 3;  // B_BACKEND of 15
constexpr uint32_t kIdle = 1, kActive = 2;
constexpr uint32_t kClientRead = 100663296u;

trace_key key(uint32_t state, uint32_t wait, uint32_t flags = 0) {
  return trace_key{kClientBackend, wait, state, flags, 0};
}

TEST(TracedProfile, ChargesEachPartToItsWaitKey) {
  const auto* layout = memory::find_pg_layout(15);
  ASSERT_NE(layout, nullptr);
  const memory::PgNames names(*layout);
  TraceTotals delta;
  auto& read = delta.values[key(kIdle, kClientRead)];
  read.blocked_ns = 600'000'000;
  read.runq_ns = 50'000'000;
  read.waits = 3;
  read.hist[5] = 3;
  read.samples = 1;
  delta.values[key(kActive, 0)].samples = 3;                 // running, no wait event
  delta.values[key(kActive, 0)].runq_ns = 10'000'000;        // preempted
  delta.values[key(kActive, 0, 2)].blocked_ns = 20'000'000;  // asleep, uninterruptible
  delta.values[key(kActive, TRACE_ON_CPU_WAIT)].oncpu_ns = 400'000'000;
  delta.values[key(kIdle, TRACE_ON_CPU_WAIT)].oncpu_ns = 100'000'000;
  delta.values[trace_key{0, 0, 0, TRACE_KEY_NO_STATUS, 0}].blocked_ns = 999'000'000;  // postmaster
  const auto profile = traced_profile(delta, 1'000'000, names);
  EXPECT_EQ(profile.snapshots(), 1'000'000u);
  const model::WaitKey client_read{"client backend", "idle", "Client", "ClientRead"};
  const model::WaitKey cpu{"client backend", "active", "CPU", "CPU"};
  const model::WaitKey asleep{"client backend", "active", "Kernel", "uninterruptible"};
  ASSERT_TRUE(profile.traced().contains(client_read));
  const auto& waits = profile.traced().at(client_read);
  EXPECT_EQ(waits.waits, 3u);
  EXPECT_DOUBLE_EQ(waits.blocked_s, 0.6);
  EXPECT_DOUBLE_EQ(waits.runqueue_s, 0.05);
  // The on-CPU time of the type and query (500 ms, whatever state each stretch ended in) spread
  // over its 4 samples: one of them in ClientRead.
  EXPECT_DOUBLE_EQ(waits.on_cpu_s, 0.125);
  EXPECT_EQ(profile.counts().at(client_read), 775'000u);
  EXPECT_DOUBLE_EQ(profile.traced().at(cpu).on_cpu_s, 0.375);
  EXPECT_DOUBLE_EQ(profile.traced().at(cpu).runqueue_s, 0.01);
  EXPECT_EQ(profile.counts().at(cpu), 385'000u);
  EXPECT_EQ(profile.counts().at(asleep), 20'000u);
  EXPECT_EQ(profile.counts().size(), 3u) << "the postmaster is left out";
}

// Issue 48 item 1: the query id read from the backend's status entry gives each statement its
// exact time per wait event, the on-CPU part included; time without a query id (0) is nobody's.
TEST(TracedProfile, StatementsGetTheTimeOfTheProcessesThatRanThem) {
  const auto* layout = memory::find_pg_layout(15);
  ASSERT_NE(layout, nullptr);
  const memory::PgNames names(*layout);
  constexpr uint64_t kQuery = 0x8000000000000007ull;  // a negative query id as PostgreSQL's int8
  constexpr uint32_t kWalWrite = 0x01000000u | 6u;    // any LWLock: its name does not matter here
  TraceTotals delta;
  auto& lock = delta.values[trace_key{kClientBackend, kWalWrite, kActive, 0, kQuery}];
  lock.blocked_ns = 30'000'000;
  lock.waits = 2;
  lock.samples = 1;
  delta.values[trace_key{kClientBackend, 0, kActive, 0, kQuery}].samples = 3;
  delta.values[trace_key{kClientBackend, TRACE_ON_CPU_WAIT, kActive, 0, kQuery}].oncpu_ns =
      80'000'000;
  delta.values[trace_key{kClientBackend, 0, kActive, 0, 0}].samples = 1;
  delta.values[trace_key{kClientBackend, TRACE_ON_CPU_WAIT, kActive, 0, 0}].oncpu_ns = 5'000'000;
  const auto traced = traced_delta(delta, 1'000'000, names);
  ASSERT_EQ(traced.statements.size(), 1u);
  const auto& waits = traced.statements.at(static_cast<int64_t>(kQuery));
  EXPECT_LT(static_cast<int64_t>(kQuery), 0);
  const model::WaitKey cpu{"client backend", "active", "CPU", "CPU"};
  // On-CPU 80 ms spread over the group's 4 samples: 60 ms CPU, 20 ms in the lock wait's key.
  EXPECT_EQ(waits.at(cpu), 60'000u);
  uint64_t total = 0;
  for (const auto& [key, us] : waits) total += us;
  EXPECT_EQ(total, 110'000u) << "blocked 30 ms + on a CPU 80 ms";
  // The profile has the query-less time too.
  EXPECT_EQ(traced.profile.counts().at(cpu), 65'000u);
}

// A statement's stretch on a CPU ends in ClientRead, after ReadyForQuery set "idle in
// transaction": the programs charge all of it to that state, whose samples are the moments
// around the ClientRead. Spread within the state, the statement's CPU went to ClientRead (0.6 to
// 0.7 s of a 9 s TPC-B window at 4 clients where the memory source saw 0.08 s); spread over the
// query's samples, whatever state they saw, ClientRead gets its own part.
TEST(TracedProfile, OnCpuTimeIsSpreadOverItsQuerysSamplesWhateverStateItEndedIn) {
  const auto* layout = memory::find_pg_layout(15);
  ASSERT_NE(layout, nullptr);
  const memory::PgNames names(*layout);
  constexpr uint32_t kIdleInTransaction = 3;
  constexpr uint64_t kQuery = 42;
  TraceTotals delta;
  delta.values[trace_key{kClientBackend, TRACE_ON_CPU_WAIT, kIdleInTransaction, 0, kQuery}]
      .oncpu_ns = 10'000'000;
  delta.values[trace_key{kClientBackend, 0, kActive, 0, kQuery}].samples = 9;
  delta.values[trace_key{kClientBackend, kClientRead, kIdleInTransaction, 0, kQuery}].samples = 1;
  const auto profile = traced_profile(delta, 1'000'000, names);
  const model::WaitKey client_read{"client backend", "idle in transaction", "Client", "ClientRead"};
  const model::WaitKey cpu{"client backend", "active", "CPU", "CPU"};
  ASSERT_TRUE(profile.traced().contains(client_read));
  ASSERT_TRUE(profile.traced().contains(cpu));
  EXPECT_DOUBLE_EQ(profile.traced().at(client_read).on_cpu_s, 0.001);
  EXPECT_DOUBLE_EQ(profile.traced().at(cpu).on_cpu_s, 0.009);
}

// A group without a sample (on a CPU for less than a sampling period) keeps its time as CPU, in
// the state it ended in.
TEST(TracedProfile, OnCpuTimeNoSampleSawIsCpu) {
  const auto* layout = memory::find_pg_layout(15);
  ASSERT_NE(layout, nullptr);
  const memory::PgNames names(*layout);
  TraceTotals delta;
  delta.values[key(kIdle, TRACE_ON_CPU_WAIT)].oncpu_ns = 300'000;
  const auto profile = traced_profile(delta, 1'000'000, names);
  const model::WaitKey cpu{"client backend", "idle", "CPU", "CPU"};
  ASSERT_TRUE(profile.traced().contains(cpu));
  EXPECT_DOUBLE_EQ(profile.traced().at(cpu).on_cpu_s, 0.0003);
  EXPECT_EQ(profile.counts().size(), 1u);
}

TEST(TracedProfile, TheDeltaIsTheGrowthAndTheExtremesOfTheInterval) {
  TraceTotals before, now;
  before.values[key(kIdle, kClientRead)].waits = 5;
  before.values[key(kIdle, kClientRead)].max_ns = 900;
  before.values[key(kIdle, kClientRead)].min_ns = 100;
  now.values[key(kIdle, kClientRead)].waits = 8;
  now.values[key(kIdle, kClientRead)].max_ns = 1500;
  now.values[key(kIdle, kClientRead)].min_ns = 100;
  before.counters[kTraceReadFailures] = 2;
  now.counters[kTraceReadFailures] = 7;
  const auto delta = totals_delta(now, before);
  const auto& value = delta.values.at(key(kIdle, kClientRead));
  EXPECT_EQ(value.waits, 3u);
  EXPECT_EQ(value.max_ns, 1500u);
  EXPECT_EQ(value.min_ns, 0u) << "the shortest since the load is not this interval's";
  EXPECT_EQ(delta.counters[kTraceReadFailures], 5u);
}

}  // namespace
}  // namespace pgwaitprof::collectors::trace
