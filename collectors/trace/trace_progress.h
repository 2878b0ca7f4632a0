// What the task iterator (waits.bpf.c's dump_tasks) gives at each read of the maps: every
// tracked process's phase and key, and the time charged to it beside the kernel's own
// accounting of it. From it, a wait or a wait for a CPU still in progress at a read is charged up
// to the read (the rest when it ends: a row lock held over several intervals shows in each, and
// one still held when a run ends is in its report), and the witness compares the charged time
// with the kernel's. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "collectors/trace/trace_programs.h"
#include "model/sampler_source.h"

namespace pgwaitprof::collectors::trace {

// `totals` with each tracked process's blocked or run-queue interval in progress added, up to
// the record's time, on the key it will be charged to when it ends. (An on-CPU interval is not:
// its key is read as it ends.)
TraceTotals with_progress(TraceTotals totals, const std::vector<trace_progress>& tasks);

// Raises `delivered` to `now` field by field: what has been delivered never falls. A wait charged
// in progress up to one read and ended before the next is charged in full by the programs; the
// part delivered already is not delivered again.
void raise_to(TraceTotals& delivered, const TraceTotals& now);

// The witness from one read to the next, over the processes of backend type `client_type` (with a
// status entry) in both (the same pid and start time) whose phase was known at the first: each
// side's growth, counted as the kernel counts it: an interval on a CPU in progress at a read is
// included (the kernel's sum_exec_runtime grows while a process runs, at each tick), a wait for a
// CPU in progress is not (the kernel's run_delay grows only when the wait ends: with processes
// queued at one read and not at the other, the two would differ by their waits so far, 57 ms of
// 2.1 s in a loaded CI run). With `any_phase`, the
// processes whose phase was not known yet too, and those started since the first read, from
// their fork (what the traced side missed of them is no concern of the kernel's side, which the
// kernel view shows: a pgbench client's backend that connected after the run's first read lost
// its first second, a third of a 3 s run).
model::TraceWitness witness_between(const std::vector<trace_progress>& before,
                                    const std::vector<trace_progress>& now, uint32_t client_type,
                                    bool any_phase = false);

// The kernel's and the traced time of the client backends that exited (`exits`: their last
// records, taken after the read `now`) since the part of their lives that witness_between counted:
// from their record in `now` (they exited after the read), else in `before`, else from their
// fork when they started since the read `before` (pgbench -C's backends, most of them shorter
// than a read, whose time would be in no window otherwise).
model::TraceWitness exited_between(const std::vector<trace_progress>& before,
                                   const std::vector<trace_progress>& now,
                                   const std::vector<trace_progress>& exits, uint32_t client_type);

// The intervals of client backends (`client_type`, with a status entry) in progress at the read:
// on a CPU, and waiting for one. The profile of a read has the second, which the kernel's
// run_delay counts only once the wait ends; it has not the first, which the kernel's
// sum_exec_runtime has up to its last tick.
struct InProgress {
  double on_cpu_s = 0;
  double runqueue_s = 0;
};
InProgress clients_in_progress(const std::vector<trace_progress>& tasks, uint32_t client_type);

// The processes blocked on a heavyweight lock at the read (wait event class Lock): whose
// blockers the sampler looks up, as it does for the Lock waits of a snapshot.
std::vector<int32_t> blocked_on_locks(const std::vector<trace_progress>& tasks);

}  // namespace pgwaitprof::collectors::trace
