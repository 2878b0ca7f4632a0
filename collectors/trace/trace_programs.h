// The traced source's BPF programs (waits.bpf.c) loaded and attached through their skeleton:
// the scheduler's tracepoints for one server, a perf event on every online CPU that samples
// the tracked process on it, and the maps read back summed over the CPUs. Every program is
// attached by a BPF link held as a file descriptor of this process, so that nothing stays
// attached after it exits, however it exits (kill -9 included).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/expected.h"
#include "collectors/trace/trace_shared.h"

struct waits;  // the skeleton (waits.skel.h)
struct bpf_link;
struct ring_buffer;  // libbpf's reader of a BPF ring buffer

namespace pgwaitprof::collectors::trace {

// What every refusal of the traced source starts with (the sampler's reason drops it).
inline constexpr std::string_view kTraceRefused = "trace source refused: ";

// The children of each process from /proc/*/stat's parent pids: `root` and its descendants.
std::vector<pid_t> process_tree(pid_t root);

// Where the server's processes keep what the programs read (addresses in the processes, the
// same in every process of one postmaster), and how often to sample the one on a CPU.
struct TraceConfig {
  uint64_t wait_pointer = 0;  // &my_wait_event_info, or &MyProc with wait_offset
  uint64_t wait_offset = 0;
  uint64_t backend_type_at = 0;  // &MyBackendType
  uint64_t status_pointer = 0;   // &MyBEEntry, 0 when unknown
  uint64_t state_offset = 0;
  uint64_t query_offset = ~uint64_t{0};  // ~0: no query id (13)
  int sample_hz = 1000;                  // perf-event samples per second and CPU, 1 to 10,000
};

struct KeyLess {
  bool operator()(const trace_key& a, const trace_key& b) const {
    return std::tie(a.backend_type, a.wait_event_info, a.state, a.flags, a.query_id) <
           std::tie(b.backend_type, b.wait_event_info, b.state, b.flags, b.query_id);
  }
};

// What the maps hold, summed over the CPUs: cumulative since load.
struct TraceTotals {
  std::map<trace_key, trace_value, KeyLess> values;
  std::array<uint64_t, kTraceCounters> counters{};
  // Of a key whose values[key].blocked_ns has a wait in progress in it (with_progress), the
  // blocked time of its ended waits alone: what `waits` and the histogram count. A key not here
  // has no wait in progress in it.
  std::map<trace_key, uint64_t, KeyLess> ended_blocked_ns;

  uint64_t ended_blocked(const trace_key& key) const {
    if (const auto it = ended_blocked_ns.find(key); it != ended_blocked_ns.end()) return it->second;
    const auto value = values.find(key);
    return value == values.end() ? 0 : value->second.blocked_ns;
  }
};

class TracePrograms {
 public:
  // Checks the kernel (BTF, the right to load BPF), loads, and attaches; the error is one line
  // naming the cause (a verifier rejection with the last lines of its log).
  static base::Expected<std::unique_ptr<TracePrograms>> open(const TraceConfig& config);
  // Whether this kernel and this process can trace at all (BTF, the right to load tracing
  // programs), before anything about the server is looked up: the refusal names the cause.
  static base::Status check_kernel();
  ~TracePrograms();
  TracePrograms(const TracePrograms&) = delete;
  TracePrograms& operator=(const TracePrograms&) = delete;

  // Follows `pid` (and from now on every child it forks); false when the map is full.
  bool track(pid_t pid);
  // `root` and every live descendant of it: the root first, so that from then on every child it
  // forks is followed in the kernel, then the processes `tree` lists (read after: those forked
  // before). How many were added. (Read before, a child forked between the reading and the
  // root's tracking was in neither: pgbench's connections made while a traced run loaded, seen
  // in the version matrix.) `tree` is for the tests.
  size_t track_tree(pid_t root,
                    const std::function<std::vector<pid_t>(pid_t)>& tree = process_tree);
  // Whether `pid` is followed now.
  bool tracks(pid_t pid) const;
  base::Status read(TraceTotals& into) const;
  // Every tracked process now, from the task iterator (waits.bpf.c's dump_tasks).
  base::Status read_progress(std::vector<trace_progress>& into) const;
  // The last records of the processes that exited since the previous call (the exits ring),
  // each read once.
  base::Status read_exits(std::vector<trace_progress>& into);
  // How many processes are tracked now.
  size_t tracked() const;
  int sample_hz() const { return sample_hz_; }
  // Whether a program runs at every wake-up to end the blocked intervals (a kernel whose run
  // queue's clock the switch program cannot reach) instead of the switch-in splitting them at
  // the kernel's own enqueue stamp.
  bool wakeups_traced() const { return wakeups_traced_; }
  // The switch program's own time per run where the kernel keeps BPF statistics
  // (kernel.bpf_stats_enabled), 0 where it does not.
  double switch_ns() const;

 private:
  TracePrograms() = default;
  // open()'s steps: the programs loaded with the server's addresses (libbpf's messages into
  // `log`), the ring of exited processes, the on-CPU sampling program on every online CPU.
  base::Status load(const TraceConfig& config, std::string& log);
  base::Status open_exits_ring();
  base::Status attach_sampling(int sample_hz);
  waits* skeleton_ = nullptr;
  ::ring_buffer* exits_ = nullptr;
  std::vector<trace_progress>* exits_into_ = nullptr;  // read_exits()'s, while it consumes
  std::vector<::bpf_link*> perf_links_;
  std::vector<int> perf_fds_;
  int sample_hz_ = 0;
  int cpus_ = 0;
  bool wakeups_traced_ = false;
};

// The verifier's own words in libbpf's messages of a failed load: the program it rejected and
// the last `count` non-empty lines of its log (what it refused and where), joined with " / ";
// nothing when the messages hold no verifier log (the load failed before the verifier ran).
// Pure.
struct VerifierRejection {
  std::string program;
  std::string tail;
};
std::optional<VerifierRejection> verifier_rejection(std::string_view messages, size_t count = 3);

}  // namespace pgwaitprof::collectors::trace
