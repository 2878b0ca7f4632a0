// The traced source's BPF programs: every switch of a process of the traced server accounted
// to the wait event it had when it left its CPU. Loaded by trace_programs.cc through the
// skeleton bpftool generates from this file's object (collectors/CMakeLists.txt).
//
// A tracked process (the postmaster and every descendant, followed from fork to its last switch)
// is at any time in one phase: on a CPU, blocked (switched out not runnable: it waits to be
// woken), or runnable and not running (preempted, or woken and not yet on a CPU). At each
// change the interval of the phase it leaves is charged, in this CPU's slot of a per-CPU hash, to
// the key read from the process's own memory as it left its CPU: backend type, state,
// wait_event_info and query id. A blocked interval ended by a wake-up is one wait, with its length
// in a log-linear histogram; the run-queue time after it stays on the same key. The wake-up is
// not traced: the kernel stamps a woken process's enqueue (sched_info), and its switch-in splits
// the interval there (runq_since_out), so no program runs at the machine's wake-ups; each stretch
// on a CPU and each wait for one is as long as the kernel itself counts it. On-CPU time is
// charged exactly to (backend type, state, query id) as the process leaves its CPU; user space
// spreads it over wait events by the samples a perf-event program takes of the process on its
// CPU, those of its backend type and query id whatever their state (trace_source.cc). Nothing is
// sent per event, except one record at each tracked process's exit (the exits ring): user space
// reads the maps.
//
// The process's memory is only ever read (bpf_probe_read_user, which does not fault: a failed
// read is counted, and that charge goes to nobody).
#include "trace_vmlinux.h"
/* clang-format off */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
/* clang-format on */

#include "trace_shared.h"

char LICENSE[] SEC("license") = "GPL";

// Where a server process keeps what is read, the same in every process of the server (children
// of one postmaster share its executable's load address). Set by user space before loading.
const volatile __u64 wait_pointer = 0;      // &my_wait_event_info (14+) or &MyProc (13)
const volatile __u64 wait_offset = 0;       // 0, or PGPROC's wait_event_info offset (13)
const volatile __u64 backend_type_at = 0;   // &MyBackendType
const volatile __u64 status_pointer = 0;    // &MyBEEntry, 0 when the binary does not export it
const volatile __u64 state_offset = 0;      // PgBackendStatus.st_state
const volatile __u64 query_offset = ~0ull;  // PgBackendStatus.st_query_id, ~0 before 14
// Whether on_wakeup is attached to end blocked intervals (a kernel whose run queue's clock no
// program can reach, trace_programs.cc); otherwise a switch-in splits the interval since the
// switch-out at the wake-up the kernel itself stamped (runq_since_out), and no program runs at
// a wake-up.
const volatile __u32 wakeups_traced = 0;

// Which of a process's recent slots (trace_task.recent) a charge uses.
enum recent { kRecentOnCpu = 0, kRecentWait, kRecentSample };

enum phase {
  kUnknown = kTracePhaseUnknown,
  kOnCpu = kTracePhaseOnCpu,
  kBlocked = kTracePhaseBlocked,
  kRunnable = kTracePhaseRunnable
};

// The tracked processes' own state, kept by the kernel with each task_struct: a switch of an
// untracked process costs a pointer read, not a hash lookup. Bounded by tracked_count.
struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct trace_task);
} tasks SEC(".maps");

// Processes tracked now (user space adds those that existed at load, with their count); a
// fork beyond TRACE_MAX_TRACKED is not followed, and counted.
__u64 tracked_count = 0;

// Every key charged so far and its slot: the index of its values in `totals`, given once (from
// slots_used) and never taken back. User space reads the keys here and their values there.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, TRACE_MAX_KEYS);
  __type(key, struct trace_key);
  __type(value, __u32);
} slots SEC(".maps");

__u64 slots_used = 0;

// Each CPU's values of each slot. A per-CPU array: the verifier inlines its lookup, where a hash
// lookup hashes the key and walks a bucket (three of them a switch-out and wake-up cycle).
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, TRACE_MAX_KEYS);
  __type(key, __u32);
  __type(value, struct trace_value);
} totals SEC(".maps");

// Each tracked process's record at its last switch, its final times in it: what it did since the
// last read would be in no read otherwise (pgbench -C: most backends live less than a read).
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, TRACE_EXIT_RING_BYTES);
} exits SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, kTraceCounters);
  __type(key, __u32);
  __type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which) {
  __u64* value = bpf_map_lookup_elem(&counters, &which);
  if (value) *value += 1;
}

static __always_inline struct trace_task* tracked(struct task_struct* p) {
  // A process with no local storage of any map is not tracked: no helper is called for it (the
  // idle task, pgbench's threads, every other process on the host), which costs a switch as much
  // as a read of the process's memory.
  if (bpf_core_field_exists(p->bpf_storage) && !p->bpf_storage) return 0;
  return bpf_task_storage_get(&tasks, p, 0, 0);
}

// Follows `p` no further (it exited, or exec'd another program).
static __always_inline void untrack(struct task_struct* p) {
  if (bpf_task_storage_delete(&tasks, p) == 0) __sync_fetch_and_sub(&tracked_count, 1);
}

// The most bytes from PgBackendStatus.st_state to the end of st_query_id read at once (200 in
// 14 to 19), on the stack: hardened usercopy checks a stack destination fast.
#define STATUS_SPAN 256

// The key of the current process (`task`), read from its memory; 0 when a read failed. Two
// reads a switch once the process has its status entry (the wait event; the entry's state and
// query id, in one read where they are near enough, in two otherwise); until then also the wait
// event's pointer, the backend type and the entry's address.
static __always_inline int read_key(struct trace_task* task, struct trace_key* key) {
  __u64 pointer = 0;
  __u64 wait_at = task->wait_at;
  __u32 wait = 0;
  __s32 type = 0;
  __builtin_memset(key, 0, sizeof(*key));
  if (!wait_at) {
    if (bpf_probe_read_user(&pointer, sizeof(pointer), (const void*)wait_pointer)) goto failed;
    wait_at = pointer ? pointer + wait_offset : 0;
  }
  if (wait_at && bpf_probe_read_user(&wait, sizeof(wait), (const void*)wait_at)) goto failed;
  key->wait_event_info = wait == TRACE_ON_CPU_WAIT ? 0 : wait;
  pointer = task->status_entry;
  if (pointer) {
    key->backend_type = task->backend_type;
  } else {
    if (bpf_probe_read_user(&type, sizeof(type), (const void*)backend_type_at)) goto failed;
    key->backend_type = (__u32)type;
    if (!status_pointer) {
      if (type == 0) key->flags = TRACE_KEY_NO_STATUS;
      return 1;
    }
    if (bpf_probe_read_user(&pointer, sizeof(pointer), (const void*)status_pointer)) goto failed;
    if (!pointer) {
      key->flags = TRACE_KEY_NO_STATUS;
      return 1;
    }
    // The status entry is set after the PGPROC (InitProcess): the wait event's word is in it
    // from now on.
    task->status_entry = pointer;
    task->backend_type = (__u32)type;
    task->wait_at = wait_at;
  }
  if (query_offset != ~0ull && query_offset >= state_offset + sizeof(key->state) &&
      query_offset + sizeof(key->query_id) - state_offset <= STATUS_SPAN) {
    // The state and the query id in one read (each read costs more than the bytes between).
    __u8 span[STATUS_SPAN];
    __u64 query_at = query_offset - state_offset;
    if (bpf_probe_read_user(span, query_at + sizeof(key->query_id),
                            (const void*)(pointer + state_offset)))
      goto failed;
    __builtin_memcpy(&key->state, span, sizeof(key->state));
    if (query_at <= STATUS_SPAN - sizeof(key->query_id))
      __builtin_memcpy(&key->query_id, span + query_at, sizeof(key->query_id));
    return 1;
  }
  if (bpf_probe_read_user(&key->state, sizeof(key->state), (const void*)(pointer + state_offset)))
    goto failed;
  if (query_offset != ~0ull && bpf_probe_read_user(&key->query_id, sizeof(key->query_id),
                                                   (const void*)(pointer + query_offset)))
    goto failed;
  return 1;
failed:
  count(kTraceReadFailures);
  return 0;
}

static __always_inline __u32 log2_32(__u32 v) {
  __u32 r, shift;
  r = (v > 0xFFFF) << 4;
  v >>= r;
  shift = (v > 0xFF) << 3;
  v >>= shift;
  r |= shift;
  shift = (v > 0xF) << 2;
  v >>= shift;
  r |= shift;
  shift = (v > 0x3) << 1;
  v >>= shift;
  r |= shift;
  r |= (v >> 1);
  return r;
}

static __always_inline __u32 log2_64(__u64 v) {
  __u32 high = v >> 32;
  return high ? log2_32(high) + 32 : log2_32((__u32)v);
}

static __always_inline __u32 bucket(__u64 ns) {
  if (ns < (1ull << TRACE_HIST_FIRST_POWER)) return 0;
  __u32 power = log2_64(ns);
  if (power > TRACE_HIST_LAST_POWER) return TRACE_HIST_BUCKETS - 1;
  __u32 quarter = (ns >> (power - 2)) & 3;
  return 1 + (power - TRACE_HIST_FIRST_POWER) * TRACE_HIST_SUB + quarter;
}

// The slot of `key`, given one when new; -1 with the slots full.
static __always_inline __s64 slot_of(const struct trace_key* key) {
  __u32* slot = bpf_map_lookup_elem(&slots, key);
  if (slot) return *slot;
  if (slots_used >= TRACE_MAX_KEYS) return -1;
  __u32 fresh = (__u32)__sync_fetch_and_add(&slots_used, 1);
  if (fresh < TRACE_MAX_KEYS) bpf_map_update_elem(&slots, key, &fresh, BPF_NOEXIST);
  // Another CPU's, where it gave the key a slot first (`fresh` stays unused then).
  slot = bpf_map_lookup_elem(&slots, key);
  return slot ? *slot : -1;
}

// This CPU's values of `key`; with the slots full, those of the same key with query id 0 (`key`
// says which). `recent`: the slot the process charged last of this kind (enum recent), used when
// it is the same key's, and remembered otherwise.
static __always_inline struct trace_value* value_of(struct trace_key* key,
                                                    struct trace_slot* recent) {
  __u32 index;
  if (recent->valid && recent->key.query_id == key->query_id &&
      recent->key.wait_event_info == key->wait_event_info && recent->key.state == key->state &&
      recent->key.backend_type == key->backend_type && recent->key.flags == key->flags) {
    index = recent->index;
  } else {
    __s64 slot = slot_of(key);
    if (slot < 0) {
      count(kTraceKeysFull);
      key->query_id = 0;
      slot = slot_of(key);
    }
    if (slot < 0) {
      count(kTraceLost);
      return 0;
    }
    index = (__u32)slot;
    recent->key = *key;
    recent->index = index;
    recent->valid = 1;
  }
  return bpf_map_lookup_elem(&totals, &index);
}

static __always_inline void charge_on_cpu(struct trace_task* task, struct trace_key key, __u64 ns) {
  key.wait_event_info = TRACE_ON_CPU_WAIT;
  struct trace_value* value = value_of(&key, &task->recent[kRecentOnCpu]);
  if (value) value->oncpu_ns += ns;
}

// The phase the task leaves, `ns` long; `woken`: a wake-up ends a blocked phase.
static __always_inline void charge_phase(struct trace_task* task, __u64 ns, int woken) {
  if (!task->has_key || task->phase == kUnknown) return;
  struct trace_key key = task->key;
  if (task->phase == kOnCpu) {
    charge_on_cpu(task, key, ns);
    task->oncpu_ns += ns;
    return;
  }
  struct trace_value* value = value_of(&key, &task->recent[kRecentWait]);
  if (!value) return;
  if (task->phase == kRunnable) {
    value->runq_ns += ns;
    task->runq_ns += ns;
    return;
  }
  value->blocked_ns += ns;
  value->waits += 1;
  if (value->min_ns == 0 || ns < value->min_ns) value->min_ns = ns;
  if (ns > value->max_ns) value->max_ns = ns;
  // One register for the check and the index (clang would check a copy otherwise).
  __u64 b = bucket(ns);
  barrier_var(b);
  if (b < TRACE_HIST_BUCKETS) value->hist[b] += 1;
  if (woken) count(kTraceWakeups);
}

// The phase the task leaves, charged up to `now` (bpf_ktime_get_ns).
static __always_inline void close_phase(struct trace_task* task, __u64 now, int woken) {
  if (now >= task->since) charge_phase(task, now - task->since, woken);
}

// How long `p` has waited for a CPU since it last left one, as the kernel's sched_info counts
// it (the same figures /proc/<pid>/schedstat's run_delay sums): the waits that have ended
// (run_delay's growth since the switch-out: a process moved between queues while it waited) and
// the one in progress, from its enqueue (last_queued) to its run queue's clock. At a switch-in
// the clock is this CPU's, just updated by the scheduler, and the sum is exactly what the kernel
// adds to run_delay right after the tracepoint; read of another CPU's queue (dump_tasks) it may be
// a tick old, which counts the wait short.
static __always_inline __u64 runq_since_out(struct task_struct* p, struct trace_task* task) {
  __u64 delay = p->sched_info.run_delay;
  __u64 queued = p->sched_info.last_queued;
  __u64 ns = delay > task->delay_out ? delay - task->delay_out : 0;
  if (queued) {
    struct cfs_rq* cfs = p->se.cfs_rq;
    struct rq* rq = cfs ? cfs->rq : 0;
    __u64 clock = rq ? rq->clock : 0;
    if (clock > queued) ns += clock - queued;
  }
  return ns;
}

// `p`'s record: its phase and key, the time charged to it and the kernel's own account of it.
static __always_inline void fill_record(struct task_struct* p, struct trace_task* task,
                                        struct trace_progress* record) {
  __builtin_memset(record, 0, sizeof(*record));
  record->now = bpf_ktime_get_ns();
  record->since = task->since;
  if (task->phase == kBlocked && !wakeups_traced) {
    // Woken and waiting for a CPU (the kernel has queued it since): the wait for the CPU is
    // charged when it runs; until then the record says since when.
    __u64 queued = runq_since_out(p, task);
    if (queued) {
      __u64 at = record->now > queued ? record->now - queued : 0;
      record->woken = at > task->since ? at : task->since;
    }
  }
  record->oncpu_ns = task->oncpu_ns;
  record->runq_ns = task->runq_ns;
  record->kernel_oncpu_ns = p->se.sum_exec_runtime;
  record->kernel_runq_ns = p->sched_info.run_delay;
  record->start_time = p->start_time;
  record->key = task->key;
  record->pid = (__u32)p->pid;
  record->phase = task->phase;
  record->has_key = task->has_key;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct* prev, struct task_struct* next,
             unsigned int prev_state) {
  struct trace_task* task = tracked(prev);
  struct trace_task* next_task = tracked(next);
  // The clock is read only for a switch of a tracked process.
  __u64 now = 0;
  if (task) {
    now = bpf_ktime_get_ns();
    count(kTraceSwitches);
    // On-CPU time goes to the process's type, state and query as it leaves the CPU. An exiting
    // process has no memory of its own to read any more (exit_mm): its intervals up to its last
    // switch, the teardown of its memory included, go to the key it had.
    struct trace_key key = task->key;
    int read = (prev->flags & PF_EXITING) ? task->has_key : read_key(task, &key);
    if (task->phase == kOnCpu && read) {
      task->key.backend_type = key.backend_type;
      task->key.state = key.state;
      task->key.query_id = key.query_id;
      task->key.flags = key.flags;
      task->has_key = 1;
    }
    if (task->phase == kOnCpu && !wakeups_traced) {
      // As long as the kernel counts it (se.sum_exec_runtime, brought up to date for `prev` by
      // the scheduler before the tracepoint): where the scheduler's clock stood when it
      // decided to switch, which after a waking process preempted this one is the wake-up's
      // time; from there on the kernel counts this process waiting for a CPU (below).
      __u64 ran = prev->se.sum_exec_runtime;
      charge_phase(task, ran > task->sum_in ? ran - task->sum_in : 0, 0);
    } else {
      close_phase(task, now, 0);
    }
    task->since = now;
    task->delay_out = prev->sched_info.run_delay;
    task->phase = (!preempt && prev_state != 0) ? kBlocked : kRunnable;
    task->has_key = read;
    // Asleep without a wait event, uninterruptibly (TASK_UNINTERRUPTIBLE): kernel I/O, a page
    // fault; the sampler's kernel view tells it from an interruptible sleep the same way.
    if (task->phase == kBlocked && key.wait_event_info == 0 && (prev_state & 2)) key.flags |= 2;
    if (read) task->key = key;
    // Its last switch: its record with its final times, and followed no further (the kernel's
    // account of it ends here too).
    if (prev_state & TASK_DEAD) {
      struct trace_progress* last = bpf_ringbuf_reserve(&exits, sizeof(*last), 0);
      if (last) {
        fill_record(prev, task, last);
        bpf_ringbuf_submit(last, 0);
      } else {
        count(kTraceExitsLost);
      }
      untrack(prev);
    }
  }
  if (next_task) {
    if (!task) now = bpf_ktime_get_ns();
    count(kTraceSwitches);
    if (!wakeups_traced && (next_task->phase == kBlocked || next_task->phase == kRunnable)) {
      // Its wait for this CPU as the kernel counts it (runq_since_out); a blocked process was
      // woken where the kernel queued it: the interval before is its wait.
      __u64 total = now > next_task->since ? now - next_task->since : 0;
      __u64 queued = runq_since_out(next, next_task);
      if (next_task->phase == kBlocked) {
        charge_phase(next_task, total > queued ? total - queued : 0, 1);
        next_task->phase = kRunnable;
      }
      charge_phase(next_task, queued, 0);
    } else if (next_task->phase != kOnCpu) {
      close_phase(next_task, now, 0);
    }
    next_task->since = now;
    next_task->sum_in = next->se.sum_exec_runtime;
    next_task->phase = kOnCpu;
  }
  return 0;
}

static __always_inline int woken(struct task_struct* p) {
  struct trace_task* task = tracked(p);
  if (!task) return 0;
  __u64 now = bpf_ktime_get_ns();
  if (task->phase == kBlocked) {
    close_phase(task, now, 1);
    task->since = now;
    task->phase = kRunnable;
  } else if (task->phase == kUnknown) {
    task->since = now;
  }
  return 0;
}

// Loaded only with wakeups_traced. (A new process's first wake-up, sched_wakeup_new, ends no
// phase: its first phase starts on its first CPU.)
SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct* p) { return woken(p); }

// A child starts with its parent's key: until its first read succeeds (its copy of the
// parent's pages may not be mapped yet, and bpf_probe_read_user cannot fault them in), it is
// the parent's copy, without a status entry of its own.
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct* parent, struct task_struct* child) {
  struct trace_task* parent_task = tracked(parent);
  if (!parent_task) return 0;
  if (__sync_fetch_and_add(&tracked_count, 1) >= TRACE_MAX_TRACKED) {
    __sync_fetch_and_sub(&tracked_count, 1);
    count(kTraceTrackedFull);
    return 0;
  }
  struct trace_task* fresh = bpf_task_storage_get(&tasks, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!fresh) {
    __sync_fetch_and_sub(&tracked_count, 1);
    count(kTraceTrackedFull);
    return 0;
  }
  fresh->key = parent_task->key;
  fresh->key.flags |= TRACE_KEY_NO_STATUS;
  fresh->has_key = parent_task->has_key;
  return 0;
}

// An exec'd child (archive_command's shell, a COPY ... PROGRAM) runs another program: its memory
// holds nothing of the server's, and it is followed no further.
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct* p) {
  untrack(p);
  return 0;
}

// On-CPU time by wait event, sampled: the process on this CPU, if tracked, counted under the
// key it shows now.
SEC("perf_event")
int on_sample(struct bpf_perf_event_data* ctx) {
  struct task_struct* current = bpf_get_current_task_btf();
  struct trace_task* task = tracked(current);
  if (!task) return 0;
  // An exiting process has no memory of its own left to read.
  if (current->flags & PF_EXITING) return 0;
  struct trace_key key;
  if (!read_key(task, &key)) return 0;
  count(kTraceSamples);
  struct trace_value* value = value_of(&key, &task->recent[kRecentSample]);
  if (value) value->samples += 1;
  return 0;
}

// Every tracked process at a read (user space reads the iterator once per interval): its phase
// and key, and the time charged to it beside the kernel's own accounting of it. Only read: the
// tasks' storage is written by the programs above alone.
SEC("iter/task")
int dump_tasks(struct bpf_iter__task* ctx) {
  struct task_struct* p = ctx->task;
  if (!p) return 0;
  struct trace_task* task = tracked(p);
  if (!task) return 0;
  struct trace_progress record;
  fill_record(p, task, &record);
  bpf_seq_write(ctx->meta->seq, &record, sizeof(record));
  return 0;
}
