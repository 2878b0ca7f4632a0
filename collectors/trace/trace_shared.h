// What the BPF programs (waits.bpf.c) and the user-space side (trace_maps.cc) both read: the
// maps' keys and values, their bounds and the histogram's buckets. Plain C, no kernel headers.
#ifndef PGWAITPROF_TRACE_SHARED_H
#define PGWAITPROF_TRACE_SHARED_H

#include <linux/types.h>

// Bounds of the maps, stated (docs/architecture.md): processes tracked at once (the postmaster
// and every descendant: 1,000 backends and their parallel workers fit many times over), and
// aggregation keys (backend type, state, wait event, query id) per CPU. Beyond them an insert
// fails and is counted (kTraceTrackedFull, kTraceKeysFull); a key that does not fit is charged
// to the same key with query id 0.
#define TRACE_MAX_TRACKED 16384
#define TRACE_MAX_KEYS 4096
// The ring of exited processes' last records (waits.bpf.c's exits), in bytes: about 9,000
// records of 112 bytes, read once a second (pgbench -C on 2 cores ends a few hundred backends a
// second). A record that does not fit is counted (kTraceExitsLost).
#define TRACE_EXIT_RING_BYTES (1u << 20)

// Log-linear duration buckets of blocking waits, in nanoseconds: bucket 0 below 2^10 ns (about
// 1 us); then 4 buckets per power of two from 2^10 to 2^36 ns (about 69 s): bucket
// 1 + 4 * (p - 10) + q holds [2^p + q * 2^(p-2), 2^p + (q+1) * 2^(p-2)); the last one all above.
#define TRACE_HIST_FIRST_POWER 10
#define TRACE_HIST_LAST_POWER 35
#define TRACE_HIST_SUB 4
#define TRACE_HIST_BUCKETS \
  (2 + (TRACE_HIST_LAST_POWER - TRACE_HIST_FIRST_POWER + 1) * TRACE_HIST_SUB)

// A tracked process's wait_event_info cannot be the all-ones word: it marks the exact on-CPU
// time of a (backend type, state, query id), which user space spreads over the wait events the
// perf-event samples saw on a CPU.
#define TRACE_ON_CPU_WAIT 0xffffffffu

// Key flags.
#define TRACE_KEY_NO_STATUS 1u  // the process has no status entry (postmaster, logger, a child)

struct trace_key {
  __u32 backend_type;
  __u32 wait_event_info;
  __u32 state;
  __u32 flags;
  __u64 query_id;
};

struct trace_value {
  __u64 blocked_ns;  // from switched out not runnable to woken
  __u64 runq_ns;     // from woken or preempted to running again
  __u64 oncpu_ns;    // exact, on the TRACE_ON_CPU_WAIT key only
  __u64 waits;       // blocking waits ended by a wake-up
  __u64 samples;     // perf-event samples of the process on a CPU
  __u64 min_ns;      // the shortest and longest blocking wait (0: none yet)
  __u64 max_ns;
  __u32 hist[TRACE_HIST_BUCKETS];
};

// A key and the index of its values (slots map; valid set once the index is known).
struct trace_slot {
  struct trace_key key;
  __u32 index;
  __u32 valid;
};

// A tracked process (the tasks map's value; user space adds the processes that exist at load
// with all zeros): its phase since `since`, and the key it had when it last left a CPU.
struct trace_task {
  __u64 since;
  struct trace_key key;  // as last read when the process left a CPU
  __u32 phase;           // waits.bpf.c's enum phase; 0 until its first switch
  __u32 has_key;
  // The process's status entry (MyBEEntry), backend type and the address of its wait event's
  // word (in its PGPROC) once the entry is set: none changes afterwards (pgstat_bestart runs
  // after the type is known and the PGPROC taken), so they are read once. At exit MyBEEntry and
  // the wait event's pointer are reset before the process gives up its PGPROC, so until then
  // both are still its own; after that it switches a few times at most on its way out.
  __u64 status_entry;
  __u64 wait_at;
  __u32 backend_type;
  __u32 unused;
  // The time charged to the process since it was tracked: the witness's traced side
  // (trace_progress), beside the kernel's own accounting of it.
  __u64 oncpu_ns;
  __u64 runq_ns;
  // The kernel's own account of the process at its last switches: sched_info.run_delay as it
  // left its CPU (its wait for a CPU since then is what the kernel adds to it: waits.bpf.c's
  // runq_since_out) and se.sum_exec_runtime as it got one (its time on it is the growth).
  __u64 delay_out;
  __u64 sum_in;
  // The slots (the index of a key's values in the programs' totals) of the last key of each
  // kind it was charged to: on CPU, blocked or waiting for a CPU, sampled on a CPU. A process
  // charges the same few keys switch after switch, and a key compared here costs less than one
  // looked up in the slots' hash.
  struct trace_slot recent[3];
};

// One tracked process as the task iterator (waits.bpf.c's dump_tasks) writes it at a read, or as
// it left its CPU for the last time (the exits ring): its
// phase and the key it has in it, so that a wait in progress is charged up to the read (and the
// rest when it ends), and the witness: the time charged to it against the kernel's own
// accounting of the same process (/proc/<pid>/schedstat's first two fields).
struct trace_progress {
  __u64 now;       // when it was written (bpf_ktime_get_ns)
  __u64 since;     // when the phase began
  __u64 woken;     // blocked, and woken since at this time, not on a CPU yet (0 otherwise)
  __u64 oncpu_ns;  // charged to the process since it was tracked (trace_task)
  __u64 runq_ns;
  __u64 kernel_oncpu_ns;  // the kernel's: se.sum_exec_runtime
  __u64 kernel_runq_ns;   // sched_info.run_delay
  __u64 start_time;       // with pid, the process (a pid may be reused)
  struct trace_key key;
  __u32 pid;
  __u32 phase;  // waits.bpf.c's enum phase
  __u32 has_key;
  __u32 unused;
};

// waits.bpf.c's phases of a tracked process.
enum trace_phase {
  kTracePhaseUnknown = 0,
  kTracePhaseOnCpu,
  kTracePhaseBlocked,
  kTracePhaseRunnable
};

// Counters, one per-CPU array slot each.
enum trace_counter {
  kTraceSwitches = 0,  // switches of tracked processes (in or out)
  kTraceReadFailures,  // bpf_probe_read_user failed (a page not resident, an exec'd child)
  kTraceTrackedFull,   // a child not tracked: TRACE_MAX_TRACKED processes already are
  kTraceKeysFull,      // a key not added: TRACE_MAX_KEYS already; charged with query id 0
  kTraceLost,          // a charge lost altogether (the query-id-0 key did not fit either)
  kTraceSamples,       // perf-event samples of tracked processes
  kTraceWakeups,       // wake-ups that ended a blocking wait
  kTraceExitsLost,     // an exited process's last record not written: the exits ring was full
  kTraceCounters
};

#endif
