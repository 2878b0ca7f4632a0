// What the collectors produce: one snapshot of every backend of a server at one instant.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/time.h"

namespace pgwaitprof::model {

using SteadyClock = std::chrono::steady_clock;
using SystemClock = std::chrono::system_clock;

struct WaitKey;  // wait_key.h

// One row of pg_stat_activity. Empty strings stand for SQL NULL.
struct BackendSample {
  int32_t pid = 0;
  std::string backend_type;
  std::string state;
  std::string wait_event_type;
  std::string wait_event;
  std::optional<int64_t> query_id;
  std::string datname;
  std::string application_name;
  // pid is reused by the server; (pid, backend_start) names one backend for its lifetime.
  std::chrono::microseconds backend_start{0};
  // The sampling role may not see this backend's state and wait event (not pg_read_all_stats).
  bool hidden = false;
  // The process state the kernel reported for a backend without a wait event ('R' running or
  // runnable, 'D' uninterruptible, 'S' sleeping), when the server runs on this host; 0 unknown.
  char kernel_state = 0;
  // The backend's wait key (intern_key() in wait_key.h), filed by the sampler once every stage
  // has amended the snapshot; null until then. Sinks read it with key_of().
  const WaitKey* key = nullptr;
};

struct Snapshot {
  SystemClock::time_point taken_at;
  SteadyClock::time_point taken_at_steady;
  std::chrono::nanoseconds query_duration{0};
  std::vector<BackendSample> backends;
  int hidden_backends = 0;  // of `backends`, those the sampling role may not see
  // Every client backend's kernel_state was read as it was sampled, waiting or not (the memory
  // source, some snapshots a second): the kernel check counts the running ones in these.
  bool all_states = false;
};

// Client backends in state R (on a CPU or waiting for one) with or without a wait event, over
// the snapshots that read every client backend's state (Snapshot::all_states): what a true
// sampler finds equal to the kernel's on-CPU + run-queue time of the same backends, where the
// CPU samples (no wait event) miss the CPU spent inside waits (the kernel part of fdatasync or
// recv, a woken backend that has not cleared its wait event yet).
struct RunningSamples {
  uint64_t snapshots = 0;
  uint64_t running = 0;
  void add(const Snapshot& snapshot) {
    if (!snapshot.all_states) return;
    ++snapshots;
    for (const auto& backend : snapshot.backends) {
      if (backend.kernel_state == 'R' && !backend.hidden &&
          backend.backend_type == "client backend") {
        ++running;
      }
    }
  }
  void add(const RunningSamples& other) {
    snapshots += other.snapshots;
    running += other.running;
  }
};

// The host's CPU over one timeline interval, from /proc/stat and the load generator's
// /proc/<pid>/stat.
struct HostCpu {
  double user_pct = 0;
  double system_pct = 0;
  double iowait_pct = 0;
  double idle_pct = 0;
  double loadgen_cores = 0;  // CPU time of the load generator's threads / interval (in cores)
};

// Time on a CPU and waiting for one (the run queue), from /proc/<pid>/schedstat: exact sums
// over the processes of a group, not samples.
struct KernelTime {
  base::Seconds on_cpu{0};
  base::Seconds runqueue{0};
  // The wall-clock time the readings summed here cover: the AAS is on_cpu / covered.
  base::Seconds covered{0};
  void add(const KernelTime& other) {
    on_cpu += other.on_cpu;
    runqueue += other.runqueue;
    covered += other.covered;
  }
  // This reading's share of `fraction` of its interval.
  KernelTime part(double fraction) const {
    return {on_cpu * fraction, runqueue * fraction, covered * fraction};
  }
  double on_cpu_aas() const { return covered > base::Seconds(0) ? on_cpu / covered : 0; }
  double runqueue_aas() const { return covered > base::Seconds(0) ? runqueue / covered : 0; }
};

// The groups kernel times are reported for.
inline constexpr const char* kClientBackends = "client backends";
inline constexpr const char* kBackgroundProcesses = "background processes";
inline constexpr const char* kLoadGenerator = "load generator";
inline constexpr const char* kSamplerBackend = "sampler";
// Processes of the server that exited between two readings: the CPU of their lives after the
// reading before (the postmaster's reaped children's time), and a run-queue time estimated in
// the live client backends' proportion (the kernel keeps none of a reaped process).
inline constexpr const char* kExitedProcesses = "exited processes";

// Kernel times of the processes of a target (and a run's load generator) between two readings.
// Transactions the server counted (pg_stat_database: xact_commit + xact_rollback of every
// database) between two readings, pgwaitprof's own statements taken out, and the statements
// pg_stat_statements counted (calls) when it is installed. Server-side throughput for load
// generators that report none, and beside those that do.
struct ServerThroughput {
  SteadyClock::time_point from;
  SteadyClock::time_point to;
  double transactions = 0;
  std::optional<double> calls;
};

struct KernelTimes {
  SteadyClock::time_point from;
  SteadyClock::time_point to;
  std::map<std::string, KernelTime> by_group;         // the groups above
  std::map<std::string, KernelTime> by_backend_type;  // pg_stat_activity.backend_type
};

// One backend waiting on a heavyweight lock and one backend that blocks it
// (pg_blocking_pids), as seen by one lookup.
struct LockWait {
  int32_t pid = 0;        // the blocked backend
  std::string lock_type;  // relation, extend, tuple, transactionid, advisory, ...
  std::string mode;       // the mode it asked for
  std::string object;     // "pgbench_accounts", "transaction 7123", ...
  int32_t blocker_pid = 0;
  std::string blocker_backend_type;
  std::string blocker_application;
  std::string blocker_state;           // idle in transaction, active, ...
  base::Seconds blocker_xact_age{-1};  // -1 outside a transaction
  std::string blocker_statement;       // its statement, literals replaced, at most 200 characters
  bool blocker_blocked = false;        // the blocker itself waits on a lock: a chain
  // A prepared transaction (blocker_pid 0, no backend): its name (the GID) and the role that
  // prepared it; blocker_xact_age is then the time since PREPARE TRANSACTION.
  std::string blocker_prepared;
  std::string blocker_owner;
};

struct LockLookup {
  SteadyClock::time_point at;
  std::vector<LockWait> waits;
};

// Background activity of the server seen during an interval.
struct Background {
  bool autovacuum = false;     // an autovacuum worker was present ("av")
  bool checkpoint = false;     // the checkpointer was not sleeping in its main loop ("ch")
  bool manual_vacuum = false;  // a client backend ran VACUUM ("vac")
  std::string flags() const;   // "av ch vac" style, empty when nothing ran
  void merge(const Background& other);
};

}  // namespace pgwaitprof::model
