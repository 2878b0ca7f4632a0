// The kernel's view of a server on this host (/proc): whether a backend without a PostgreSQL
// wait event runs ('R'), sleeps in the kernel ('D') or sleeps elsewhere ('S'), read per
// snapshot for those backends only; and every backend's time on a CPU and on the run queue
// (/proc/<pid>/schedstat), read once a second, so that "CPU" means running and the run-queue
// time hidden in LWLock and IO waits (a woken backend keeps its wait event until it gets a
// core) is measured instead of guessed. Parsing is split from reading, for tests on strings.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/time.h"
#include "collectors/collector.h"
#include "collectors/kernel_round.h"
#include "collectors/sampler_options.h"
#include "collectors/server_processes.h"

namespace pgwaitprof::collectors {

// "1234567 89012 345\n" (ns on a CPU, ns waiting on the run queue, timeslices).
std::optional<Schedstat> parse_schedstat(std::string_view text);
// The state letter (field 3) of /proc/<pid>/stat; the command name may hold spaces and ')'.
std::optional<char> parse_process_state(std::string_view stat);
// The parent pid (field 4) of /proc/<pid>/stat.
std::optional<pid_t> parse_parent_pid(std::string_view stat);
// The CPU time of the children a process has reaped (cutime + cstime, fields 16 and 17 of
// /proc/<pid>/stat), in clock ticks of `ticks_per_second`: a postmaster's grows by a backend's
// whole life when it exits.
std::optional<base::Seconds> parse_reaped_children_cpu(std::string_view stat,
                                                       long ticks_per_second);

std::optional<Schedstat> read_schedstat(pid_t pid);
// The sum over every thread of a process (a multi-threaded pgbench).
std::optional<Schedstat> read_process_schedstat(pid_t pid);
std::optional<char> read_process_state(pid_t pid);
std::optional<pid_t> read_parent_pid(pid_t pid);
std::optional<base::Seconds> read_reaped_children_cpu(pid_t pid);

// The CPU time of backends that exited between two readings of the kernel times, which no
// reading of their own schedstat saw: the postmaster's reaped children's time grew by their
// whole lives, of which the part before the previous reading was counted then (each backend's
// schedstat counts from its fork). A backend gone from a reading may not be reaped yet: what
// is owed for it waits one reading more, never longer (a process whose schedstat could not be
// read is not owed forever). Pure, for tests.
class ExitedTime {
 public:
  // `reaped`: the postmaster's reaped children's CPU now; `counted_before`: the CPU that earlier
  // readings counted of the backends gone since the previous reading. The first call returns 0.
  base::Seconds next(base::Seconds reaped, base::Seconds counted_before);
  void reset() { *this = ExitedTime(); }

 private:
  std::optional<base::Seconds> reaped_;
  base::Seconds owed_{0};
};

// One process's schedstat in a reading of the kernel times: a backend of the snapshot (its
// pid, backend start and pg_stat_activity's backend_type) or, with backend_start -1 and no
// type, the sampler's own backend (which the snapshot leaves out).
struct KernelReading {
  int32_t pid = 0;
  int64_t backend_start = -1;
  std::string backend_type;
  Schedstat stat;
};
using KernelReadingId = std::pair<int32_t, int64_t>;  // (pid, backend start)

// Adds one reading's times to `times` (pure, for tests): each process's time since `previous`
// (the reading before, whose wall-clock time is `previous_epoch_us`, as backend_start counts);
// a process missing from it counts from its start when it started after that reading (its whole
// life is in this one), else not at all (merely new to us). Each time goes to its group:
// pgwaitprof's own backends (the sampler's, and those in `own`: a run's connection) to the
// sampler's, for they are not the load; other client backends to theirs; the rest to background
// processes; and, for backends not pgwaitprof's own, to their backend type.
void add_kernel_times(const std::vector<KernelReading>& readings,
                      const std::map<KernelReadingId, Schedstat>& previous,
                      int64_t previous_epoch_us, const std::set<int32_t>& own,
                      model::KernelTimes& times);

// pgwaitprof's own sessions besides a sampler's (a run's connection, which queries the server
// several times a second): registered for the object's life, each is looked up by the server it
// is connected to now (host and port as libpq names them: it reconnects after a restart) and
// the pid of its backend there, so that the kernel view counts that backend as pgwaitprof's,
// beside the sampler's, not as a client backend of the load (on a loaded host each of its
// queries waits for a CPU: 0.1 AAS of run queue for a run's connection was counted as the
// load's). Process-wide; sessions are used on the I/O thread that reads the kernel times.
class OwnSession {
 public:
  explicit OwnSession(const PgSession& session);
  ~OwnSession();
  OwnSession(const OwnSession&) = delete;
  OwnSession& operator=(const OwnSession&) = delete;
  // The backends of the registered sessions connected to host:port, as that server names them.
  static std::set<int32_t> backends_on(const std::string& host, const std::string& port);

 private:
  const PgSession* session_;
};

// Whether the server of backend `backend_pid` whose data directory is `data_directory` (both as
// the server names them) runs on this host and shares this process's files: its parent's
// working directory or command line is that data directory (the postmaster runs in it), under
// the same root (its pids may be those of a PID namespace of its own).
bool server_is_local(pid_t backend_pid, const std::string& data_directory);
// Whether the server of the session runs on this host, in a container or a chroot too
// (find_session_server()); false when the role may not read the data directory.
asio::awaitable<bool> session_is_local(PgSession& session);

// The state letters of backends, each from its /proc/<pid>/stat kept open between snapshots, so
// a reading is one pread() instead of an open, reads and a close. A reading gives every backend
// of its snapshot to state() or seen(); the files of backends missing from a reading (exited:
// pgbench -C makes hundreds a second) are closed at the next one. At most 256 backends' files
// are kept open per reader, and a quarter of the process's descriptor limit (RLIMIT_NOFILE)
// over all readers of all targets; the rest are read the long way, and the first shortage is
// logged once (a daemon with many targets must keep descriptors for /metrics and sessions).
// Where /proc/<pid>/wchan is known to work (check_wchan), a backend whose wchan reads "0" (it
// runs or waits for a CPU: the common case for a backend without a wait event) is 'R' without
// its stat file, which costs the kernel twice as much to write (2.7 against 6.5 µs a read of a
// running process, measured side by side); one that sleeps is read from stat for 'S' or 'D'.
class ProcessStates {
 public:
  ProcessStates() = default;
  ProcessStates(const ProcessStates&) = delete;
  ProcessStates& operator=(const ProcessStates&) = delete;
  ~ProcessStates() { clear(); }
  // `backend_start` tells a reused pid from the backend whose file is open.
  std::optional<char> state(int32_t pid, int64_t backend_start);
  // A backend of this reading whose state is not read (it waits): its file stays open.
  void seen(int32_t pid, int64_t backend_start);
  void next_reading();  // once per snapshot, before its states
  void clear();
  size_t open_files() const { return files_.size(); }
  // Descriptors open for backends' files over every ProcessStates of the process, and the cap.
  static size_t descriptors_open();
  static size_t descriptor_cap();
  // Whether wchan tells running from sleeping for processes of `sleeping_pid`'s owner: it reads
  // "0" for every process where the kernel has no symbols or the reader may not trace it, so it
  // is trusted only once a process that sleeps (a postmaster in epoll_wait) read as something
  // else. Three reads back to back; a postmaster that ran through all three leaves stat in use.
  bool check_wchan(pid_t sleeping_pid);
  bool uses_wchan() const { return wchan_; }

 private:
  static constexpr size_t kMaxOpen = 256;
  struct File {
    int64_t backend_start = 0;
    int fd = -1;
    int wchan_fd = -1;     // open when wchan_ is
    uint64_t seen_in = 0;  // the last reading whose snapshot had the backend
  };
  // The backend's open file, opened now if there is room; null when it is read the long way.
  File* file(int32_t pid, int64_t backend_start);
  void close_file(const File& file);
  std::unordered_map<int32_t, File> files_;
  uint64_t readings_ = 0;
  size_t seen_ = 0;  // files seen in the current reading
  bool wchan_ = false;
};

// The snapshot stage of a local target: sets each unwaiting backend's kernel_state that the
// source did not read as it sampled (the memory source does: read here, after the snapshot
// arrived, a state describes a later moment), and once a second delivers the target's kernel
// times (client backends, background processes, the sampler's own backend) to the sink. Does
// nothing for a target that is not on this host.
class KernelStage : public Collector {
 public:
  explicit KernelStage(config::LocalMode mode) : mode_(mode) {}
  std::string_view name() const override { return "kernel"; }
  asio::awaitable<CollectResult> prepare(PgSession& session) override;
  asio::awaitable<CollectResult> collect(CollectContext& context) override;
  bool local() const { return local_; }

 private:
  void read_states(model::Snapshot& snapshot);
  void read_times(const model::Snapshot& snapshot, model::SteadyClock::time_point now,
                  model::SampleSink& sink);

  config::LocalMode mode_;
  bool local_ = false;
  pid_t sampler_pid_ = -1;     // as the server names it
  std::string host_, port_;    // where the sampler's session is connected (OwnSession)
  ServerProcesses processes_;  // the server's pids to this host's
  std::optional<model::SteadyClock::time_point> last_reading_;
  std::optional<int64_t> last_round_;  // KernelRound::number() of the last reading
  int64_t last_reading_epoch_us_ = 0;  // the same moment as a backend_start
  // (pid, backend start) -> the previous reading, so a reused pid does not count twice.
  std::map<std::pair<int32_t, int64_t>, Schedstat> previous_;
  pid_t postmaster_ = -1;
  ExitedTime exited_;
  ProcessStates states_;
};

// A run collector: the load generator's threads' kernel times, once per interval.
class LoadgenKernelCollector : public Collector {
 public:
  // The first reading is taken now, at the load generator's start.
  explicit LoadgenKernelCollector(pid_t pid)
      : pid_(pid),
        previous_(read_process_schedstat(pid)),
        previous_at_(model::SteadyClock::now()) {}
  std::string_view name() const override { return "loadgen_kernel"; }
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

 private:
  pid_t pid_;
  std::optional<Schedstat> previous_;
  model::SteadyClock::time_point previous_at_{};
};

}  // namespace pgwaitprof::collectors
