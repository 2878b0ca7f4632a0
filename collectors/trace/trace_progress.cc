#include "collectors/trace/trace_progress.h"

#include <algorithm>
#include <map>
#include <utility>

namespace pgwaitprof::collectors::trace {
namespace {

// The interval of `phase` in progress at the record, in ns (0 in another phase). A blocked
// process woken since (`woken`) has two: blocked up to its wake-up, and waiting for a CPU since.
uint64_t in_progress(const trace_progress& task, uint32_t phase) {
  const bool woken = task.phase == kTracePhaseBlocked && task.woken != 0;
  if (phase == kTracePhaseRunnable && woken) {
    return task.now > task.woken ? task.now - task.woken : 0;
  }
  if (task.phase != phase) return 0;
  const uint64_t end = woken ? std::min(task.woken, task.now) : task.now;
  return end > task.since ? end - task.since : 0;
}

struct Charged {
  uint64_t on_cpu = 0;
  uint64_t runq = 0;
  uint64_t kernel_on_cpu = 0;
  uint64_t kernel_runq = 0;
};

// As the kernel counts (witness_between): the time on a CPU up to the record, the waits for a
// CPU that have ended.
Charged charged(const trace_progress& task) {
  return {task.oncpu_ns + in_progress(task, kTracePhaseOnCpu), task.runq_ns, task.kernel_oncpu_ns,
          task.kernel_runq_ns};
}

bool is_client(const trace_progress& task, uint32_t client_type) {
  return task.key.backend_type == client_type && !(task.key.flags & TRACE_KEY_NO_STATUS);
}

double seconds_between(uint64_t before, uint64_t now) {
  return (static_cast<double>(now) - static_cast<double>(before)) * 1e-9;
}

using ProcessId = std::pair<uint32_t, uint64_t>;  // pid, start time

// The read's moment (its records' earliest): a process started after it has all its time since
// the read in its counters, since its fork.
uint64_t read_at(const std::vector<trace_progress>& records) {
  uint64_t at = UINT64_MAX;
  for (const auto& record : records) at = std::min<uint64_t>(at, record.now);
  return at;
}

void add_between(const Charged& from, const Charged& to, model::TraceWitness& witness) {
  witness.on_cpu_s += seconds_between(from.on_cpu, to.on_cpu);
  witness.runqueue_s += seconds_between(from.runq, to.runq);
  witness.kernel_on_cpu_s += seconds_between(from.kernel_on_cpu, to.kernel_on_cpu);
  witness.kernel_runqueue_s += seconds_between(from.kernel_runq, to.kernel_runq);
}

}  // namespace

TraceTotals with_progress(TraceTotals totals, const std::vector<trace_progress>& tasks) {
  for (const auto& task : tasks) {
    if (!task.has_key) continue;
    if (const auto ns = in_progress(task, kTracePhaseBlocked); ns > 0) {
      auto& value = totals.values[task.key];
      totals.ended_blocked_ns.try_emplace(task.key, value.blocked_ns);
      value.blocked_ns += ns;
    }
    if (const auto queued = in_progress(task, kTracePhaseRunnable); queued > 0) {
      totals.values[task.key].runq_ns += queued;
    }
  }
  return totals;
}

void raise_to(TraceTotals& delivered, const TraceTotals& now) {
  for (const auto& [key, value] : now.values) {
    const auto ended = std::max(delivered.ended_blocked(key), now.ended_blocked(key));
    delivered.ended_blocked_ns[key] = ended;
    auto& kept = delivered.values[key];
    kept.blocked_ns = std::max(kept.blocked_ns, value.blocked_ns);
    kept.runq_ns = std::max(kept.runq_ns, value.runq_ns);
    kept.oncpu_ns = std::max(kept.oncpu_ns, value.oncpu_ns);
    kept.waits = std::max(kept.waits, value.waits);
    kept.samples = std::max(kept.samples, value.samples);
    kept.min_ns = value.min_ns;
    kept.max_ns = value.max_ns;
    for (int index = 0; index < TRACE_HIST_BUCKETS; ++index) {
      kept.hist[index] = std::max(kept.hist[index], value.hist[index]);
    }
  }
  delivered.counters = now.counters;
}

model::TraceWitness witness_between(const std::vector<trace_progress>& before,
                                    const std::vector<trace_progress>& now, uint32_t client_type,
                                    bool any_phase) {
  std::map<ProcessId, const trace_progress*> earlier;
  for (const auto& task : before) {
    if (any_phase || task.phase != kTracePhaseUnknown) earlier[{task.pid, task.start_time}] = &task;
  }
  const uint64_t before_at = read_at(before);
  model::TraceWitness witness;
  for (const auto& task : now) {
    if (!is_client(task, client_type)) continue;
    const auto found = earlier.find({task.pid, task.start_time});
    if (found != earlier.end()) {
      add_between(charged(*found->second), charged(task), witness);
    } else if (any_phase && task.start_time >= before_at) {
      add_between(Charged{}, charged(task), witness);
    }
  }
  return witness;
}

model::TraceWitness exited_between(const std::vector<trace_progress>& before,
                                   const std::vector<trace_progress>& now,
                                   const std::vector<trace_progress>& exits, uint32_t client_type) {
  std::map<ProcessId, const trace_progress*> earlier, latest;
  for (const auto& task : before) earlier[{task.pid, task.start_time}] = &task;
  for (const auto& task : now) latest[{task.pid, task.start_time}] = &task;
  const uint64_t before_at = read_at(before);
  model::TraceWitness witness;
  for (const auto& last : exits) {
    if (!is_client(last, client_type)) continue;
    const ProcessId id{last.pid, last.start_time};
    if (const auto found = latest.find(id); found != latest.end()) {
      add_between(charged(*found->second), charged(last), witness);
    } else if (const auto was = earlier.find(id); was != earlier.end()) {
      add_between(charged(*was->second), charged(last), witness);
    } else if (last.start_time >= before_at) {
      add_between(Charged{}, charged(last), witness);
    }
  }
  return witness;
}

InProgress clients_in_progress(const std::vector<trace_progress>& tasks, uint32_t client_type) {
  InProgress progress;
  for (const auto& task : tasks) {
    if (!is_client(task, client_type)) continue;
    progress.on_cpu_s += static_cast<double>(in_progress(task, kTracePhaseOnCpu)) * 1e-9;
    progress.runqueue_s += static_cast<double>(in_progress(task, kTracePhaseRunnable)) * 1e-9;
  }
  return progress;
}

std::vector<int32_t> blocked_on_locks(const std::vector<trace_progress>& tasks) {
  static constexpr uint32_t kLockClass = 0x03000000u;  // PG_WAIT_LOCK, the same in every major
  std::vector<int32_t> pids;
  for (const auto& task : tasks) {
    if (task.has_key && task.phase == kTracePhaseBlocked && task.woken == 0 &&
        (task.key.wait_event_info & 0xff000000u) == kLockClass) {
      pids.push_back(static_cast<int32_t>(task.pid));
    }
  }
  return pids;
}

}  // namespace pgwaitprof::collectors::trace
