// The task iterator's records at a read: waits in progress charged up to the read and not again
// when they end, what was delivered never falling, and the witness over the processes tracked
// from one read to the next.
#include "collectors/trace/trace_progress.h"

#include <gtest/gtest.h>

#include "collectors/memory/pg_layout.h"
#include "collectors/memory/pg_names.h"
#include "collectors/trace/trace_source.h"
#include "model/profile.h"

namespace pgwaitprof::collectors::trace {
namespace {

constexpr uint32_t kClient = 3;  // B_BACKEND of 15
constexpr uint32_t kWalSync = 167772203u;
constexpr uint64_t kMs = 1'000'000;

trace_key key_of(uint32_t wait) { return trace_key{kClient, wait, 2, 0, 0}; }

trace_progress task(uint32_t pid, uint32_t phase, uint64_t since, uint64_t now,
                    uint32_t wait = kWalSync) {
  trace_progress record{};
  record.pid = pid;
  record.start_time = 1000 + pid;
  record.phase = phase;
  record.since = since;
  record.now = now;
  record.key = key_of(wait);
  record.has_key = 1;
  return record;
}

TEST(TraceProgress, AWaitInProgressIsChargedUpToTheReadAndItsRestWhenItEnds) {
  TraceTotals delivered;
  // Read 1 at 300 ms: a wait since 100 ms is in progress (200 ms so far).
  auto first = with_progress(TraceTotals{}, {task(7, kTracePhaseBlocked, 100 * kMs, 300 * kMs)});
  auto delta = totals_delta(first, delivered);
  raise_to(delivered, first);
  EXPECT_EQ(delta.values[key_of(kWalSync)].blocked_ns, 200 * kMs);
  EXPECT_EQ(delta.values[key_of(kWalSync)].waits, 0u);
  // Read 2 at 1,000 ms: it ended at 700 ms (600 ms, one wait, charged by the programs).
  TraceTotals maps;
  maps.values[key_of(kWalSync)].blocked_ns = 600 * kMs;
  maps.values[key_of(kWalSync)].waits = 1;
  auto second = with_progress(maps, {task(7, kTracePhaseOnCpu, 700 * kMs, 1000 * kMs)});
  delta = totals_delta(second, delivered);
  raise_to(delivered, second);
  EXPECT_EQ(delta.values[key_of(kWalSync)].blocked_ns, 400 * kMs);  // the rest only
  EXPECT_EQ(delta.values[key_of(kWalSync)].waits, 1u);
  EXPECT_EQ(delivered.values[key_of(kWalSync)].blocked_ns, 600 * kMs);
}

// A wait in progress is time, not yet a wait: the waits' mean and the histogram's sum (the
// Prometheus _sum) are of the ended waits only. Before, a 6 s lock wait in progress beside 1,000
// ended 1 ms waits made their mean 7 ms.
TEST(TraceProgress, TheMeanOfTheWaitsIsOfTheEndedOnesAlone) {
  const auto* layout = memory::find_pg_layout(15);
  ASSERT_NE(layout, nullptr);
  const memory::PgNames names(*layout);
  TraceTotals delivered;
  // Read 1 at 7 s: 1,000 ended waits of 1 ms each; a wait since 1 s still in progress (6 s).
  TraceTotals maps;
  maps.values[key_of(kWalSync)].blocked_ns = 1000 * kMs;
  maps.values[key_of(kWalSync)].waits = 1000;
  auto first = with_progress(maps, {task(7, kTracePhaseBlocked, 1000 * kMs, 7000 * kMs)});
  auto delta = totals_delta(first, delivered);
  raise_to(delivered, first);
  auto profile = traced_profile(delta, 7'000'000, names);
  ASSERT_EQ(profile.traced().size(), 1u);
  const auto wal_sync = profile.traced().begin()->first;  // its name does not matter here
  EXPECT_DOUBLE_EQ(profile.traced().at(wal_sync).blocked_s, 7.0);
  EXPECT_DOUBLE_EQ(profile.traced().at(wal_sync).mean_s(), 0.001);
  EXPECT_DOUBLE_EQ(model::traced_duration_histogram(profile.traced().at(wal_sync)).sum.count(),
                   1.0);
  // Read 2 at 8 s: it ended at 7.5 s (6.5 s): charged 0.5 s more, and now a wait.
  maps.values[key_of(kWalSync)].blocked_ns = 7500 * kMs;
  maps.values[key_of(kWalSync)].waits = 1001;
  auto second = with_progress(maps, {task(7, kTracePhaseOnCpu, 7500 * kMs, 8000 * kMs)});
  delta = totals_delta(second, delivered);
  raise_to(delivered, second);
  profile = traced_profile(delta, 1'000'000, names);
  const auto& ended = profile.traced().at(wal_sync);
  EXPECT_DOUBLE_EQ(ended.blocked_s, 0.5);
  EXPECT_EQ(ended.waits, 1u);
  EXPECT_DOUBLE_EQ(ended.mean_s(), 6.5);
  EXPECT_EQ(delivered.ended_blocked(key_of(kWalSync)), 7500 * kMs);
}

TEST(TraceProgress, RunQueueTimeInProgressGoesToTheWaitItFollowsAndOnCpuTimeWaits) {
  const auto totals = with_progress(
      TraceTotals{}, {task(1, kTracePhaseRunnable, 10 * kMs, 15 * kMs),
                      task(2, kTracePhaseOnCpu, 0, 50 * kMs), task(3, kTracePhaseUnknown, 0, 9)});
  ASSERT_EQ(totals.values.size(), 1u);
  EXPECT_EQ(totals.values.at(key_of(kWalSync)).runq_ns, 5 * kMs);
  EXPECT_EQ(totals.values.at(key_of(kWalSync)).blocked_ns, 0u);
}

// A blocked process the kernel has woken (queued) and not yet run: its wait ends at the wake-up
// (the programs charge it at its switch-in) and what follows is a wait for a CPU; it is no longer
// blocked on its lock.
TEST(TraceProgress, AWokenProcessNotYetOnACpuHasItsWaitEndedAtTheWakeUp) {
  constexpr uint32_t kLockTuple = 0x03000003u;  // Lock | tuple
  auto woken = task(6, kTracePhaseBlocked, 100 * kMs, 400 * kMs, kLockTuple);
  woken.woken = 350 * kMs;
  const auto blocked = task(8, kTracePhaseBlocked, 200 * kMs, 400 * kMs, kLockTuple);
  const auto totals = with_progress(TraceTotals{}, {woken, blocked});
  EXPECT_EQ(totals.values.at(key_of(kLockTuple)).blocked_ns, (250 + 200) * kMs);
  EXPECT_EQ(totals.values.at(key_of(kLockTuple)).runq_ns, 50 * kMs);
  EXPECT_EQ(totals.values.at(key_of(kLockTuple)).waits, 0u);
  EXPECT_EQ(blocked_on_locks({woken, blocked}), std::vector<int32_t>{8});
  const auto progress = clients_in_progress({woken, blocked}, kClient);
  EXPECT_DOUBLE_EQ(progress.runqueue_s, 0.05);
  EXPECT_DOUBLE_EQ(progress.on_cpu_s, 0);
}

TEST(TraceProgress, AProcessWhoseKeyWasNotReadIsChargedNothing) {
  auto unread = task(4, kTracePhaseBlocked, 0, 10 * kMs);
  unread.has_key = 0;
  EXPECT_TRUE(with_progress(TraceTotals{}, {unread}).values.empty());
}

TEST(TraceProgress, WhatWasDeliveredNeverFallsAndIsNotDeliveredTwice) {
  // A wait seen in progress (300 ms) whose end the next read of the maps just missed: the next
  // read has neither the progress nor the charge, so nothing is delivered; then the charge.
  TraceTotals delivered;
  const auto first = with_progress(TraceTotals{}, {task(5, kTracePhaseBlocked, 0, 300 * kMs)});
  raise_to(delivered, first);
  const TraceTotals nothing;
  EXPECT_EQ(totals_delta(nothing, delivered).values.size(), 0u);
  raise_to(delivered, nothing);
  TraceTotals ended;
  ended.values[key_of(kWalSync)].blocked_ns = 320 * kMs;
  EXPECT_EQ(totals_delta(ended, delivered).values.at(key_of(kWalSync)).blocked_ns, 20 * kMs);
}

TEST(TraceProgress, TheWitnessComparesTheSameProcessesOverTheSameReads) {
  auto at = [](uint32_t pid, uint32_t phase, uint64_t since, uint64_t now, uint64_t on_cpu,
               uint64_t runq, uint64_t kernel_on_cpu, uint64_t kernel_runq) {
    auto record = task(pid, phase, since, now);
    record.oncpu_ns = on_cpu;
    record.runq_ns = runq;
    record.kernel_oncpu_ns = kernel_on_cpu;
    record.kernel_runq_ns = kernel_runq;
    return record;
  };
  const std::vector<trace_progress> before = {
      at(10, kTracePhaseBlocked, 0, 1000 * kMs, 100 * kMs, 10 * kMs, 100 * kMs, 10 * kMs),
      at(11, kTracePhaseUnknown, 0, 1000 * kMs, 0, 0, 50 * kMs, 0),  // phase not known yet
      at(12, kTracePhaseOnCpu, 900 * kMs, 1000 * kMs, 0, 0, 100 * kMs, 0)};
  auto other_type = at(13, kTracePhaseBlocked, 0, 2000 * kMs, 0, 0, 900 * kMs, 0);
  other_type.key.backend_type = kClient + 1;
  auto reused = at(10, kTracePhaseBlocked, 0, 2000 * kMs, 0, 0, 5 * kMs, 0);
  reused.start_time = 99;  // another process with pid 10
  const std::vector<trace_progress> now = {
      at(10, kTracePhaseRunnable, 1900 * kMs, 2000 * kMs, 300 * kMs, 20 * kMs, 300 * kMs,
         20 * kMs),  // + 100 ms queued now: in neither side until the wait ends
      at(11, kTracePhaseBlocked, 0, 2000 * kMs, 10 * kMs, 0, 60 * kMs, 0),
      at(12, kTracePhaseBlocked, 0, 2000 * kMs, 400 * kMs, 0, 400 * kMs, 0), other_type, reused};
  const auto witness = witness_between(before, now, kClient);
  // pid 10: on CPU +200 ms, queue +10 ms (the 100 ms in progress are not counted: the kernel's
  // run_delay has them once the wait ends); pid 12: on CPU 400 - 100 (in progress before).
  EXPECT_NEAR(witness.on_cpu_s, 0.2 + 0.3, 1e-9);
  EXPECT_NEAR(witness.runqueue_s, 0.01, 1e-9);
  EXPECT_NEAR(witness.kernel_on_cpu_s, 0.2 + 0.3, 1e-9);
  EXPECT_NEAR(witness.kernel_runqueue_s, 0.01, 1e-9);
  // The kernel's side of every client process in both reads, pid 11 included.
  const auto kernel = witness_between(before, now, kClient, true);
  EXPECT_NEAR(kernel.kernel_on_cpu_s, 0.2 + 0.01 + 0.3, 1e-9);
}

// A backend forked after the first read (a client that connected after it) has its whole life in
// the kernel view's window; one missing from the first read that started before it is merely new
// to the programs (not tracked then), and counts from the next read on.
TEST(TraceProgress, TheKernelViewCountsABackendStartedSinceTheFirstReadFromItsFork) {
  auto at = [](uint32_t pid, uint64_t start, uint64_t now, uint64_t kernel_on_cpu,
               uint64_t kernel_runq) {
    auto record = task(pid, kTracePhaseOnCpu, now - kMs, now);
    record.start_time = start;
    record.oncpu_ns = kernel_on_cpu - kMs;
    record.kernel_oncpu_ns = kernel_on_cpu;
    record.kernel_runq_ns = kernel_runq;
    return record;
  };
  const std::vector<trace_progress> before = {at(10, 0, 1000 * kMs, 100 * kMs, 0)};
  const std::vector<trace_progress> now = {at(10, 0, 2000 * kMs, 300 * kMs, 0),
                                           at(14, 1500 * kMs, 2000 * kMs, 450 * kMs, 20 * kMs),
                                           at(15, 500 * kMs, 2000 * kMs, 900 * kMs, 0)};
  const auto kernel = witness_between(before, now, kClient, true);
  EXPECT_NEAR(kernel.kernel_on_cpu_s, 0.2 + 0.45, 1e-9);
  EXPECT_NEAR(kernel.kernel_runqueue_s, 0.02, 1e-9);
  // The witness proper compares processes whose phase both sides knew at both reads.
  const auto witness = witness_between(before, now, kClient);
  EXPECT_NEAR(witness.kernel_on_cpu_s, 0.2, 1e-9);
  EXPECT_NEAR(witness.on_cpu_s, 0.2, 1e-9);
}

// The last records of exited backends: each counted from where the reads left it — its record in
// the read just taken (it exited after it), in the read before, or its fork (it started and ended
// between the reads); not a process the reads never saw that started before them, nor another
// backend type's.
TEST(TraceProgress, ExitedBackendsCountFromWhereTheReadsLeftThem) {
  auto at = [](uint32_t pid, uint64_t start, uint64_t now, uint64_t kernel_on_cpu,
               uint64_t kernel_runq) {
    auto record = task(pid, kTracePhaseBlocked, now - kMs, now);
    record.start_time = start;
    record.oncpu_ns = kernel_on_cpu;
    record.runq_ns = kernel_runq;
    record.kernel_oncpu_ns = kernel_on_cpu;
    record.kernel_runq_ns = kernel_runq;
    return record;
  };
  const std::vector<trace_progress> before = {at(10, 0, 1000 * kMs, 100 * kMs, 10 * kMs),
                                              at(11, 0, 1000 * kMs, 50 * kMs, 0)};
  const std::vector<trace_progress> now = {at(11, 0, 2000 * kMs, 70 * kMs, 0)};
  auto other_type = at(13, 1500 * kMs, 1900 * kMs, 500 * kMs, 0);
  other_type.key.backend_type = kClient + 1;
  const std::vector<trace_progress> exits = {
      at(10, 0, 1800 * kMs, 160 * kMs, 30 * kMs),         // + 60 ms, + 20 ms queued
      at(11, 0, 2001 * kMs, 75 * kMs, 0),                 // + 5 ms after the read just taken
      at(12, 1200 * kMs, 1600 * kMs, 40 * kMs, 8 * kMs),  // its whole life
      at(14, 500 * kMs, 1700 * kMs, 900 * kMs, 0),        // never read, started before
      other_type};
  const auto gone = exited_between(before, now, exits, kClient);
  EXPECT_NEAR(gone.kernel_on_cpu_s, 0.06 + 0.005 + 0.04, 1e-9);
  EXPECT_NEAR(gone.kernel_runqueue_s, 0.02 + 0.008, 1e-9);
  EXPECT_NEAR(gone.on_cpu_s, 0.06 + 0.005 + 0.04, 1e-9);
}

TEST(TraceProgress, TheClientsIntervalsInProgressAreTheirsAlone) {
  auto queued = task(20, kTracePhaseRunnable, 900 * kMs, 1000 * kMs);
  auto running = task(21, kTracePhaseOnCpu, 970 * kMs, 1000 * kMs);
  auto blocked = task(22, kTracePhaseBlocked, 0, 1000 * kMs);
  auto starting = task(23, kTracePhaseRunnable, 0, 1000 * kMs);
  starting.key.flags |= TRACE_KEY_NO_STATUS;  // not a client backend yet
  auto other_type = task(24, kTracePhaseOnCpu, 0, 1000 * kMs);
  other_type.key.backend_type = kClient + 1;
  const auto progress =
      clients_in_progress({queued, running, blocked, starting, other_type}, kClient);
  EXPECT_NEAR(progress.runqueue_s, 0.1, 1e-9);
  EXPECT_NEAR(progress.on_cpu_s, 0.03, 1e-9);
}

TEST(TraceProgress, TheProcessesBlockedOnHeavyweightLocksAreTheOnesWhoseBlockersAreLookedUp) {
  constexpr uint32_t kTransactionId = 0x03000004u;                     // Lock | transactionid
  constexpr uint32_t kLockManager = 0x01000000u | 42;                  // an LWLock
  auto runnable = task(3, kTracePhaseRunnable, 0, 1, kTransactionId);  // woken, lock granted
  auto unread = task(4, kTracePhaseBlocked, 0, 1, kTransactionId);
  unread.has_key = 0;
  const auto pids = blocked_on_locks({task(1, kTracePhaseBlocked, 0, 1, kTransactionId),
                                      task(2, kTracePhaseBlocked, 0, 1, kLockManager), runnable,
                                      unread, task(5, kTracePhaseBlocked, 0, 1, kWalSync)});
  EXPECT_EQ(pids, std::vector<int32_t>{1});
}

}  // namespace
}  // namespace pgwaitprof::collectors::trace
