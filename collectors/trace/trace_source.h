// The traced source (`--source trace`): the BPF programs of trace_programs.h attached for one
// server, their maps read once per period into profile deltas. prepare() finds the server's
// processes and the addresses the programs read through the memory source's attach (the same
// derived and verified layout, postmaster and names: collectors/memory/memory_attach.h), then
// the exported globals of the server's executable: my_wait_event_info (14+; MyProc and the
// layout's PGPROC offset for 13), MyBackendType and MyBEEntry. collect() delivers the time since
// the previous read (model::Profile::add_traced; its counts are microseconds).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "collectors/collector.h"
#include "collectors/memory/memory_attach.h"
#include "collectors/trace/trace_programs.h"
#include "collectors/trace/trace_progress.h"
#include "model/profile.h"
#include "model/sample_sink.h"

namespace pgwaitprof::collectors::trace {

// The addresses the programs read, from the server's executable (pure but for reading the
// process's maps and executable); an error names what is missing.
base::Expected<TraceConfig> trace_config(pid_t postmaster, const memory::PgLayout& layout);

// What one read of the maps gives: the profile, and the same time per statement (query id).
struct TracedDelta {
  model::Profile profile;
  model::StatementDelta statements;
  // The window read (from the previous read to this one), and the kernel's own times of the
  // client backends tracked over all of it (the witness's kernel side); none on the first read.
  model::SteadyClock::time_point from;
  model::SteadyClock::time_point to;
  std::optional<model::KernelTimes> kernel;
};

// The profile of `delta` (the maps' growth between two reads) over `wall_us` microseconds:
// each key's blocked and run-queue time, and the exact on-CPU time of each (backend type, state,
// query id) spread over the wait events its samples showed (to CPU when none were taken). Keys
// of processes without a status entry (the postmaster, the logger) are left out. Pure.
model::Profile traced_profile(const TraceTotals& delta, uint64_t wall_us,
                              const memory::PgNames& names);
// The same, with the time of processes that had a query id per statement and wait key.
TracedDelta traced_delta(const TraceTotals& delta, uint64_t wall_us, const memory::PgNames& names);
// `now` - `before`, key by key and counter by counter (both cumulative).
TraceTotals totals_delta(const TraceTotals& now, const TraceTotals& before);

class TraceSource : public Collector {
 public:
  TraceSource() = default;
  ~TraceSource() override;
  TraceSource(const TraceSource&) = delete;
  TraceSource& operator=(const TraceSource&) = delete;
  std::string_view name() const override { return "trace"; }
  // Attaches and loads (the programs of an earlier prepare() are detached first); a refusal (no
  // BTF, no right to load BPF, a verifier rejection, a server elsewhere) is one line naming the
  // cause.
  asio::awaitable<CollectResult> prepare(PgSession& session) override;
  // The time since the previous read (since the load on the first) to context.sink. Once the
  // postmaster has exited (the server restarted), that last delivery is followed by a lost
  // connection: the sampler connects again, and prepare() attaches to the new postmaster.
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

  // For the tests and the sampler line: the profile since the previous read, and the counters.
  base::Expected<model::Profile> read(model::SteadyClock::time_point now);
  base::Expected<TracedDelta> read_delta(model::SteadyClock::time_point now);
  // Delivered so far: the maps' totals and the intervals in progress at the last read.
  const TraceTotals& totals() const { return previous_; }
  // The client backends' intervals in progress at the last read (for the tests' witness
  // against /proc/<pid>/schedstat, which counts them as the kernel does).
  InProgress clients_in_progress() const {
    return trace::clients_in_progress(progress_, client_type_);
  }
  // Its own counts since the load (the last read's), for the report's sampler line.
  model::TraceCounts counts() const;
  // The tracked processes as the last read found them, as rows of `snapshot` for the collectors
  // that look at the latest snapshot: pid, backend type and query id (the statement texts are
  // looked up while new ids appear), and wait event type Lock for those blocked on a heavyweight
  // lock (their blockers are looked up).
  void latest_backends(model::Snapshot& snapshot) const;
  const memory::Attachment& attachment() const { return attachment_; }
  const std::string& description() const { return description_; }
  void set_sample_hz(int hz) { sample_hz_ = hz; }
  int sample_hz() const { return sample_hz_; }
  // Auto's source: refuses a server that another source of this process traces already (a
  // daemon with hundreds of targets on one server loads the programs once), and a server past
  // the kMaxServersOnce-th.
  void set_once_per_server(bool once) { once_per_server_ = once; }
  static constexpr size_t kMaxServersOnce = 8;
  // Why a source traced once per server would be refused for `postmaster` now (another source of
  // this process traces it, or kMaxServersOnce servers are traced), before any attach; none when
  // it would not.
  std::optional<std::string> once_per_server_refusal(pid_t postmaster) const;

 private:
  // A lost connection, so that the sampler attaches again.
  CollectorError postmaster_exited() const;
  // Loads the programs for the attached server (under the lock of the servers traced).
  base::Status load(const TraceConfig& config);
  // Detaches the programs, and the server from the ones this process traces.
  void unload();

  memory::Attachment attachment_;
  std::unique_ptr<TracePrograms> programs_;
  TraceTotals previous_;  // delivered so far: the maps' totals with the intervals in progress
  std::vector<trace_progress> progress_;  // the tracked processes at the last read
  model::TraceWitness witness_;
  uint32_t client_type_ = 0;  // B_BACKEND's value in this major
  model::SteadyClock::time_point previous_at_{};
  std::array<uint64_t, kTraceCounters> warned_{};
  std::string description_;
  int sample_hz_ = 1000;
  bool once_per_server_ = false;
  int postmaster_fd_ = -1;  // a pidfd of attachment_.postmaster: readable once it has exited
};

}  // namespace pgwaitprof::collectors::trace
