// The CPU profile of a run (--cpu-profile), a run collector: on-CPU samples of the server's
// processes (the postmaster and its children) from perf_event_open's software clock on every
// CPU (collectors/cpu/perf_events.h), their frames named (collectors/cpu/symbolizer.h), each
// sample filed under its process's backend type: from the latest snapshot the sampler
// delivered, else from the process's command line ("postgres: walwriter"). Its buffers are
// drained every kPeriod and the samples delivered to the sink (on_cpu_samples).
//
// It works only for a server on this host, with perf events open to pgwaitprof's user
// (perf_event_paranoid <= 0, CAP_PERFMON or root) and the server's processes readable to it;
// open_cpu_profile() says which is missing, in one line, and the run goes on without it.
#pragma once

#include <sys/types.h>

#include <asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/expected.h"
#include "collectors/collector.h"
#include "collectors/cpu/perf_events.h"
#include "collectors/cpu/symbolizer.h"
#include "collectors/sampler_options.h"
#include "collectors/server_processes.h"

namespace pgwaitprof::collectors {

// The group of pgwaitprof's own backends: the sampler's and the run's connections, and any
// with application_name "pgwaitprof".
inline constexpr std::string_view kCpuOwnBackends = "pgwaitprof";

// A server process's backend type from its command line ("postgres: walwriter ",
// "postgres: main: checkpointer", NULs as separators); "client backend" for any other.
std::string backend_type_from_cmdline(std::string_view cmdline);
// Whether this process may read the memory maps of the server's postmaster `pid` (what naming
// the frames of its processes needs); the error says what to do.
base::Status check_process_readable(pid_t pid);

class CpuProfileCollector : public Collector {
 public:
  static constexpr auto kPeriod = std::chrono::milliseconds(200);
  // `postmaster`: this host's pid; `own_pids`: the server's; `processes` maps between them.
  CpuProfileCollector(std::unique_ptr<cpu::PerfEvents> events, int hz, pid_t postmaster,
                      std::vector<pid_t> own_pids, ServerProcesses processes = {})
      : events_(std::move(events)),
        hz_(hz),
        postmaster_(postmaster),
        own_pids_(std::move(own_pids)),
        processes_(std::move(processes)) {}
  std::string_view name() const override { return "cpu_profile"; }
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

 private:
  void read_types(const model::Snapshot* latest);
  // The sample's group, or "" when its process is not the server's.
  const std::string& group_of(pid_t pid);
  void add(const cpu::PerfSample& raw, model::CpuSampleBatch& batch);

  std::unique_ptr<cpu::PerfEvents> events_;
  int hz_;
  pid_t postmaster_;
  std::vector<pid_t> own_pids_;
  ServerProcesses processes_;
  cpu::Symbolizer symbolizer_;
  model::SteadyClock::time_point types_of_{};      // the snapshot read_types() read
  std::unordered_map<pid_t, std::string> types_;   // from that snapshot
  std::unordered_map<pid_t, std::string> groups_;  // every pid seen ("" not the server's)
  uint64_t collections_ = 0;
};

// The CPU profile of the server `session` is connected to, at `hz` per CPU, with the backends
// of `own_pids` (pgwaitprof's other connections) as its own; the error says why there is none
// ("the server is not on this host", the perf_event_paranoid level, ...).
asio::awaitable<base::Expected<std::unique_ptr<Collector>>> open_cpu_profile(
    PgSession& session, config::LocalMode local, int hz, std::vector<pid_t> own_pids = {});

}  // namespace pgwaitprof::collectors
