// The traced source: attach, load, and the maps' growth turned into profiles.
#include "collectors/trace/trace_source.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>

#include "base/logging.h"
#include "collectors/memory/remote_process.h"
#include "model/wait_key.h"

namespace pgwaitprof::collectors::trace {
namespace {

static_assert(TRACE_HIST_BUCKETS == model::kTracedBuckets);
static_assert(TRACE_HIST_FIRST_POWER == model::kTracedFirstPower);
static_assert(TRACE_HIST_SUB == model::kTracedPerPower);
static_assert(sizeof(trace_value) % 8 == 0, "per-CPU values are read 8-byte aligned");

constexpr uint32_t kUninterruptible = 2;  // trace_key.flags: blocked in TASK_UNINTERRUPTIBLE

auto trace_source_log() {
  static auto logger = base::component_logger("trace");
  return logger;
}

constexpr std::string_view kSymbols[] = {"my_wait_event_info", "MyProc", "MyBackendType",
                                         "MyBEEntry"};

// What the exact on-CPU time is spread over by the samples: a backend type and query id, not
// the state. The programs charge a stretch on a CPU to the key the process has as it leaves it:
// a statement's whole execution goes to "idle in transaction" (it blocks in ClientRead after
// ReadyForQuery), whose samples are the moments around that ClientRead, so grouped by state a
// statement's CPU went to ClientRead (0.6 to 0.7 s of a 9 s TPC-B window at 4 clients, where the
// memory source at 1 kHz saw 0.08 s: TraceSourceTest.BlockedWaitSharesAgree...). The state a
// stretch ends in is not the state of its time; the query id is, but for the few microseconds
// before the next statement's id is set.
struct Group {
  uint32_t backend_type, flags;
  uint64_t query_id;
  auto operator<=>(const Group&) const = default;
};
Group group_of(const trace_key& key) {
  return {key.backend_type, key.flags & ~kUninterruptible, key.query_id};
}

model::WaitKey wait_key(const trace_key& key, const memory::PgNames& names, char kernel_state) {
  model::BackendSample sample;
  sample.backend_type = std::string(names.backend_type(key.backend_type));
  sample.state = std::string(names.state(key.state));
  const auto wait = names.wait_event(key.wait_event_info);
  sample.wait_event_type = std::string(wait.type);
  sample.wait_event = std::string(wait.name);
  sample.kernel_state = kernel_state;
  return *model::classify(sample);
}

uint64_t microseconds(double seconds) {
  return static_cast<uint64_t>(std::llround(std::max(0.0, seconds) * 1e6));
}

// Nothing for a part without time or waits (a key's blocked part when it never blocked); the
// time also goes to the statement the process ran, where it had a query id.
void add(TracedDelta& delta, const model::WaitKey& key, uint64_t query_id,
         const model::TracedTime& time) {
  if (time.time_s() <= 0 && time.waits == 0) return;
  const auto us = microseconds(time.time_s());
  delta.profile.add(key, us);
  delta.profile.add_traced(key, time);
  if (query_id != 0 && us > 0) delta.statements[static_cast<int64_t>(query_id)][key] += us;
}

}  // namespace

base::Expected<TraceConfig> trace_config(pid_t postmaster, const memory::PgLayout& layout) {
  auto image = memory::read_executable(postmaster, kSymbols);
  if (!image) return base::Error{std::string(kTraceRefused) + image.error().message};
  auto maps = memory::read_maps(postmaster);
  if (!maps) return base::Error{std::string(kTraceRefused) + maps.error().message};
  std::error_code error;
  const auto path =
      std::filesystem::read_symlink(fmt::format("/proc/{}/exe", postmaster), error).string();
  const auto address = [&](std::string_view name, uint64_t length) -> base::Expected<uint64_t> {
    if (!image->symbols.contains(name)) {
      return base::Error{
          fmt::format("{}the server's executable does not export {}", kTraceRefused, name)};
    }
    auto found = memory::symbol_address(*image, *maps, path, name, length);
    if (!found) return base::Error{std::string(kTraceRefused) + found.error().message};
    return *found;
  };
  TraceConfig config;
  if (auto wait = address("my_wait_event_info", 8)) {
    config.wait_pointer = *wait;
  } else if (auto proc = address("MyProc", 8)) {
    config.wait_pointer = *proc;
    config.wait_offset = layout.proc_wait_event_info;
  } else {
    return proc.error();
  }
  auto type = address("MyBackendType", 4);
  if (!type) return type.error();
  config.backend_type_at = *type;
  if (auto status = address("MyBEEntry", 8)) {
    config.status_pointer = *status;
    config.state_offset = layout.status_state;
    if (layout.status_query_id) config.query_offset = *layout.status_query_id;
  }
  return config;
}

TraceTotals totals_delta(const TraceTotals& now, const TraceTotals& before) {
  TraceTotals delta;
  for (const auto& [key, value] : now.values) {
    trace_value grown = value;
    if (const auto it = before.values.find(key); it != before.values.end()) {
      const auto& old = it->second;
      grown.blocked_ns -= std::min(old.blocked_ns, grown.blocked_ns);
      grown.runq_ns -= std::min(old.runq_ns, grown.runq_ns);
      grown.oncpu_ns -= std::min(old.oncpu_ns, grown.oncpu_ns);
      grown.waits -= std::min(old.waits, grown.waits);
      grown.samples -= std::min(old.samples, grown.samples);
      for (int index = 0; index < TRACE_HIST_BUCKETS; ++index) {
        grown.hist[index] -= std::min(old.hist[index], grown.hist[index]);
      }
      // The extremes are kept since the load: those of this interval are known exactly when
      // they moved in it; otherwise 0 (the histogram bounds them).
      grown.min_ns = grown.min_ns != old.min_ns ? grown.min_ns : 0;
      grown.max_ns = grown.max_ns != old.max_ns ? grown.max_ns : 0;
    }
    delta.values[key] = grown;
    const auto ended = now.ended_blocked(key);
    delta.ended_blocked_ns[key] = ended - std::min(before.ended_blocked(key), ended);
  }
  for (int index = 0; index < kTraceCounters; ++index) {
    delta.counters[index] =
        now.counters[index] - std::min(now.counters[index], before.counters[index]);
  }
  return delta;
}

model::Profile traced_profile(const TraceTotals& delta, uint64_t wall_us,
                              const memory::PgNames& names) {
  return traced_delta(delta, wall_us, names).profile;
}

TracedDelta traced_delta(const TraceTotals& delta, uint64_t wall_us, const memory::PgNames& names) {
  TracedDelta traced;
  traced.profile.add_snapshots(wall_us);
  std::map<Group, uint64_t> on_cpu_ns;
  std::map<Group, uint64_t> samples;
  for (const auto& [key, value] : delta.values) {
    if (key.flags & TRACE_KEY_NO_STATUS) continue;
    if (key.wait_event_info == TRACE_ON_CPU_WAIT) {
      on_cpu_ns[group_of(key)] += value.oncpu_ns;
    } else {
      samples[group_of(key)] += value.samples;
    }
  }
  for (const auto& [key, value] : delta.values) {
    if ((key.flags & TRACE_KEY_NO_STATUS) || key.wait_event_info == TRACE_ON_CPU_WAIT) continue;
    const auto group = group_of(key);
    model::TracedTime time;
    time.runqueue_s = static_cast<double>(value.runq_ns) * 1e-9;
    if (const auto total = samples[group]; total > 0 && value.samples > 0) {
      time.on_cpu_s = static_cast<double>(on_cpu_ns[group]) * 1e-9 *
                      static_cast<double>(value.samples) / static_cast<double>(total);
    }
    model::TracedTime blocked;
    blocked.blocked_s = static_cast<double>(value.blocked_ns) * 1e-9;
    blocked.waits = value.waits;
    blocked.ended_blocked_s = static_cast<double>(delta.ended_blocked(key)) * 1e-9;
    blocked.min_s = static_cast<double>(value.min_ns) * 1e-9;
    blocked.max_s = static_cast<double>(value.max_ns) * 1e-9;
    std::copy(std::begin(value.hist), std::end(value.hist), blocked.histogram.begin());
    if (key.wait_event_info == 0) {
      // Blocked without a wait event: asleep where PostgreSQL names no wait (the kernel's
      // view of a sampler); runnable or running: CPU.
      add(traced, wait_key(key, names, (key.flags & kUninterruptible) ? 'D' : 'S'), key.query_id,
          blocked);
      add(traced, wait_key(key, names, 'R'), key.query_id, time);
    } else {
      time.merge(blocked);
      add(traced, wait_key(key, names, 0), key.query_id, time);
    }
  }
  // On-CPU time of a group no sample saw (shorter than a sampling period): CPU, in the state
  // it ended in.
  for (const auto& [key, value] : delta.values) {
    if ((key.flags & TRACE_KEY_NO_STATUS) || key.wait_event_info != TRACE_ON_CPU_WAIT) continue;
    if (samples[group_of(key)] > 0 || value.oncpu_ns == 0) continue;
    trace_key cpu = key;
    cpu.wait_event_info = 0;
    model::TracedTime time;
    time.on_cpu_s = static_cast<double>(value.oncpu_ns) * 1e-9;
    add(traced, wait_key(cpu, names, 'R'), key.query_id, time);
  }
  return traced;
}

namespace {

// The servers (postmaster pids) the traced sources of this process trace now, how many each.
std::mutex traced_mutex;
std::map<pid_t, int> traced_servers;

}  // namespace

TraceSource::~TraceSource() {
  unload();
  if (postmaster_fd_ >= 0) ::close(postmaster_fd_);
}

void TraceSource::unload() {
  if (!programs_) return;
  programs_.reset();
  std::lock_guard lock(traced_mutex);
  if (const auto it = traced_servers.find(attachment_.postmaster);
      it != traced_servers.end() && --it->second == 0) {
    traced_servers.erase(it);
  }
}

namespace {

// Under traced_mutex.
std::optional<std::string> refusal_of(pid_t postmaster, pid_t own) {
  const auto found = traced_servers.find(postmaster);
  if (found != traced_servers.end() && found->second - (own == postmaster ? 1 : 0) > 0) {
    return "another target of this process traces this server already";
  }
  const size_t others = traced_servers.size() - (traced_servers.contains(own) ? 1 : 0);
  if (found == traced_servers.end() && others >= TraceSource::kMaxServersOnce) {
    return fmt::format("this process traces {} servers already", others);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> TraceSource::once_per_server_refusal(pid_t postmaster) const {
  if (!once_per_server_) return std::nullopt;
  std::lock_guard lock(traced_mutex);
  return refusal_of(postmaster, programs_ ? attachment_.postmaster : 0);
}

base::Status TraceSource::load(const TraceConfig& config) {
  std::lock_guard lock(traced_mutex);
  if (once_per_server_) {
    if (auto refused = refusal_of(attachment_.postmaster, 0)) {
      return base::Error{fmt::format("{}{}", kTraceRefused, *refused)};
    }
  }
  auto programs = TracePrograms::open(config);
  if (!programs) return programs.error();
  programs_ = std::move(*programs);
  if (programs_->track_tree(attachment_.postmaster) == 0) {
    programs_.reset();
    return base::Error{
        fmt::format("{}could not add the postmaster (pid {}) to the traced processes",
                    kTraceRefused, attachment_.postmaster)};
  }
  ++traced_servers[attachment_.postmaster];
  return std::nullopt;
}

asio::awaitable<CollectResult> TraceSource::prepare(PgSession& session) {
  unload();
  if (postmaster_fd_ >= 0) ::close(std::exchange(postmaster_fd_, -1));
  if (auto error = TracePrograms::check_kernel()) {
    co_return CollectorError{error->message, "", false, true};
  }
  auto attached = co_await memory::attach(session);
  if (!attached) {
    co_return CollectorError{
        fmt::format("{}{}", kTraceRefused, memory::refusal_reason(attached.error().message)), "",
        false, true};
  }
  attachment_ = std::move(*attached);
  postmaster_fd_ = static_cast<int>(::syscall(SYS_pidfd_open, attachment_.postmaster, 0));
  if (postmaster_fd_ < 0) co_return postmaster_exited();  // between the look-up and now
  auto config = trace_config(attachment_.postmaster, *attachment_.layout);
  if (!config) co_return CollectorError{config.error().message, "", false, true};
  config->sample_hz = sample_hz_;
  if (auto error = load(*config)) co_return CollectorError{error->message, "", false, true};
  // The memory source's reader is not needed: the programs read each process's own memory.
  attachment_.reader.reset();
  previous_ = TraceTotals{};
  previous_at_ = model::SteadyClock::now();
  // The processes at the load: the kernel's times of the first window are read against them.
  if (auto error = programs_->read_progress(progress_)) progress_.clear();
  // Exits before this first read are no window's.
  std::vector<trace_progress> exits;
  if (auto error = programs_->read_exits(exits)) progress_.clear();
  witness_ = {};
  client_type_ = attachment_.names->backend_type_code("B_BACKEND");
  warned_.fill(0);
  description_ = fmt::format(
      "postmaster={} tracked={} sample_hz={} layout={} wait={} status={} woken={}",
      attachment_.postmaster, programs_->tracked(), programs_->sample_hz(),
      attachment_.layout->version, config->wait_offset == 0 ? "my_wait_event_info" : "MyProc",
      config->status_pointer != 0 ? "MyBEEntry" : "none",
      programs_->wakeups_traced() ? "sched_wakeup" : "enqueue-stamp");
  co_return std::nullopt;
}

base::Expected<model::Profile> TraceSource::read(model::SteadyClock::time_point now) {
  auto traced = read_delta(now);
  if (!traced) return traced.error();
  return std::move(traced->profile);
}

base::Expected<TracedDelta> TraceSource::read_delta(model::SteadyClock::time_point now) {
  if (!programs_) return base::Error{"the trace source is not loaded"};
  TraceTotals totals;
  if (auto error = programs_->read(totals)) return *error;
  std::vector<trace_progress> progress;
  if (auto error = programs_->read_progress(progress)) return *error;
  // After the processes: one that exits after the iteration is in both, and exited_between
  // counts it from its record in the iteration.
  std::vector<trace_progress> exits;
  if (auto error = programs_->read_exits(exits)) return *error;
  std::optional<model::KernelTimes> kernel;
  if (!progress_.empty()) {
    witness_.add(witness_between(progress_, progress, client_type_));
    const auto live = witness_between(progress_, progress, client_type_, true);
    const auto gone = exited_between(progress_, progress, exits, client_type_);
    kernel.emplace();
    kernel->from = previous_at_;
    kernel->to = now;
    kernel->by_group[model::kClientBackends] = {base::Seconds(live.kernel_on_cpu_s),
                                                base::Seconds(live.kernel_runqueue_s),
                                                now - previous_at_};
    // As the sampled sources' kernel view counts them (collectors/kernel.cc), but the
    // run-queue time the kernel's own, not estimated, and of client backends alone.
    if (gone.kernel_on_cpu_s + gone.kernel_runqueue_s > 0) {
      kernel->by_group[model::kExitedProcesses] = {base::Seconds(gone.kernel_on_cpu_s),
                                                   base::Seconds(gone.kernel_runqueue_s),
                                                   now - previous_at_};
    }
  }
  progress_ = std::move(progress);
  const auto cumulative = with_progress(std::move(totals), progress_);
  const auto delta = totals_delta(cumulative, previous_);
  const auto from = previous_at_;
  const auto wall = std::chrono::duration_cast<std::chrono::microseconds>(now - from);
  raise_to(previous_, cumulative);
  previous_at_ = now;
  static constexpr std::array<std::string_view, kTraceCounters> kNames = {
      "switches", "failed_reads", "tracked_full", "keys_full",
      "lost",     "samples",      "wakeups",      "exits_lost"};
  for (const int counter :
       {kTraceReadFailures, kTraceTrackedFull, kTraceKeysFull, kTraceLost, kTraceExitsLost}) {
    if (previous_.counters[counter] > warned_[counter]) {
      warned_[counter] = previous_.counters[counter];
      trace_source_log()->warn("trace {}={} target_postmaster={}", kNames[counter],
                               warned_[counter], attachment_.postmaster);
    }
  }
  auto traced = traced_delta(delta, static_cast<uint64_t>(std::max<int64_t>(0, wall.count())),
                             *attachment_.names);
  traced.from = from;
  traced.to = now;
  traced.kernel = std::move(kernel);
  return traced;
}

void TraceSource::latest_backends(model::Snapshot& snapshot) const {
  snapshot.backends.clear();
  if (!attachment_.names) return;
  const auto locked = blocked_on_locks(progress_);
  for (const auto& task : progress_) {
    if (!task.has_key || (task.key.flags & TRACE_KEY_NO_STATUS)) continue;
    model::BackendSample backend;
    backend.pid = static_cast<int32_t>(task.pid);
    backend.backend_type = std::string(attachment_.names->backend_type(task.key.backend_type));
    if (task.key.query_id != 0) backend.query_id = static_cast<int64_t>(task.key.query_id);
    if (std::find(locked.begin(), locked.end(), backend.pid) != locked.end()) {
      backend.wait_event_type = "Lock";
    }
    snapshot.backends.push_back(std::move(backend));
  }
}

model::TraceCounts TraceSource::counts() const {
  model::TraceCounts counts;
  const auto& total = previous_.counters;
  counts.switches = total[kTraceSwitches];
  counts.wakeups = total[kTraceWakeups];
  counts.samples = total[kTraceSamples];
  counts.failed_reads = total[kTraceReadFailures];
  counts.tracked_full = total[kTraceTrackedFull];
  counts.keys_full = total[kTraceKeysFull];
  counts.lost = total[kTraceLost];
  if (programs_) {
    counts.tracked = programs_->tracked();
    counts.switch_ns = programs_->switch_ns();
  }
  counts.witness = witness_;
  return counts;
}

asio::awaitable<CollectResult> TraceSource::collect(CollectContext& context) {
  auto traced = read_delta(context.now);
  if (!traced) co_return CollectorError{traced.error().message, "", false, false};
  if (context.sink != nullptr) {
    // Placed in the middle of the window it covers, not at its end (a second's time charged
    // to the next interval); the kernel's times over the same window beside it.
    context.sink->on_profile_delta(
        traced->profile,
        model::SystemClock::now() -
            std::chrono::duration_cast<model::SystemClock::duration>(
                (model::SteadyClock::now() - traced->from) - (traced->to - traced->from) / 2));
    if (traced->kernel) context.sink->on_kernel_times(*traced->kernel);
    if (!traced->statements.empty()) context.sink->on_statement_delta(traced->statements);
    context.sink->on_trace_counts(counts());
  }
  // A restarted server's new postmaster is no child of a process the programs follow.
  if (pollfd exited{postmaster_fd_, POLLIN, 0}; ::poll(&exited, 1, 0) > 0) {
    co_return postmaster_exited();
  }
  co_return std::nullopt;
}

CollectorError TraceSource::postmaster_exited() const {
  return CollectorError{
      fmt::format("the server's postmaster (pid {}) has exited", attachment_.postmaster), "", true,
      false};
}

}  // namespace pgwaitprof::collectors::trace
