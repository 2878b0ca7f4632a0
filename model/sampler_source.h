// The sampling source of a target: what its sampler reads wait events from. By default (auto) the
// memory source where the server is on this host and its memory can be read, else activity; a
// source the user names is never replaced behind their back (DESIGN.md). This is the one registry
// of source names that config validation and the CLI read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pgwaitprof::model {

enum class SamplerSource {
  // Snapshots of pg_stat_activity taken by pgwaitprof at its own rate: every backend's state,
  // wait event and query id, CPU for an active backend without a wait event.
  kActivity,
  // The cumulative profile of the pg_wait_sampling extension, read as deltas at a low rate: its
  // own sampling period, no session state, no CPU samples, no wait lengths.
  kPgWaitSampling,
  // The arrays pg_stat_activity reads, copied from the server's shared memory by pgwaitprof on
  // the same host (root, the server's OS user or CAP_SYS_PTRACE): the same snapshots as
  // activity, without a query and without server CPU, at up to 10 kHz.
  kMemory,
  // Every switch of the server's processes traced in the kernel by BPF programs
  // (collectors/trace/): exact blocked, run-queue and on-CPU time per wait event, the number of
  // blocking waits and their durations; on-CPU time by wait event sampled in the kernel. Root
  // (or CAP_BPF and CAP_PERFMON), a kernel with BTF, the server on this host.
  kTrace,
  // A request, never a source in use: memory where the server is local and readable, else
  // activity; the sampler decides at each connection and says which and why.
  kAuto,
};

std::string_view to_string(SamplerSource source);
std::optional<SamplerSource> parse_sampler_source(std::string_view name);
const std::vector<std::string>& sampler_source_names();

// Whether the source delivers snapshots of every backend at the sampler's rate (activity,
// memory, and so auto), rather than a profile at its own period (pg_wait_sampling).
bool takes_snapshots(SamplerSource source);

// What a source cannot show, one line for logs and reports; "" when it shows everything.
std::string_view sampler_source_limits(SamplerSource source);

// The traced source's own counts over the run (collectors/trace/): how much it saw, and what
// it could not read or keep (a failed read of a process's memory is charged to nobody; a
// process or a key that did not fit its map is counted, never guessed).
// The traced source's witness (the kernel check of a traced run): the client backends' time the
// programs charged on a CPU and waiting for one, against the kernel's own accounting of the same
// processes (the fields /proc/<pid>/schedstat shows: se.sum_exec_runtime, sched_info.run_delay)
// over the same reads, summed over the processes tracked from one read to the next. Each side
// counts the interval in progress at a read (the kernel's a tick late at most).
struct TraceWitness {
  double on_cpu_s = 0;
  double runqueue_s = 0;
  double kernel_on_cpu_s = 0;
  double kernel_runqueue_s = 0;
  double traced_s() const { return on_cpu_s + runqueue_s; }
  double kernel_s() const { return kernel_on_cpu_s + kernel_runqueue_s; }
  void add(const TraceWitness& other);
};

struct TraceCounts {
  uint64_t switches = 0;      // context switches of the server's processes, in or out
  uint64_t wakeups = 0;       // wake-ups that ended a blocking wait
  uint64_t samples = 0;       // in-kernel on-CPU samples of the server's processes
  uint64_t failed_reads = 0;  // reads of a process's memory that failed
  uint64_t tracked_full = 0;  // forks not followed: the tracked processes' map was full
  uint64_t keys_full = 0;     // keys that did not fit (charged with query id 0)
  uint64_t lost = 0;          // charges lost altogether
  uint64_t tracked = 0;       // processes tracked at the end
  // The switch program's own time per event where the kernel's BPF statistics are on
  // (kernel.bpf_stats_enabled), else 0.
  double switch_ns = 0;
  TraceWitness witness;
};

}  // namespace pgwaitprof::model
