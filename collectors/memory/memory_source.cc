// The reader thread and the hand-over of its snapshots to the I/O thread.
#include "collectors/memory/memory_source.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <asio/post.hpp>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "base/logging.h"
#include "base/same_text.h"
#include "base/thread_priority.h"
#include "collectors/kernel.h"
#include "collectors/pg_session.h"

namespace pgwaitprof::collectors::memory {
namespace {

// PostgreSQL's timestamps count from 2000-01-01, pg_stat_activity's backend_start from 1970.
constexpr int64_t kPostgresEpochMicros = 946'684'800'000'000;

// Most rows keep their names from one snapshot to the next (the samples are reused): a compare
// costs less than a copy.
void set_name(std::string& name, std::string_view value) {
  if (!base::same_text(name, value)) name.assign(value);
}

// The last number looked up and its name: rows of one kind follow each other (a thousand
// sessions of one type in one state), so most rows need no hash look-up.
template <typename Name>
struct Memo {
  bool filled = false;
  uint32_t number = 0;
  Name name{};
  template <typename Find>
  const Name& operator()(uint32_t wanted, Find&& find) {
    if (!filled || wanted != number) {
      filled = true;
      number = wanted;
      name = find(wanted);
    }
    return name;
  }
};

auto memory_source_log() {
  static auto logger = base::component_logger("sampler");
  return logger;
}

// Makes `mutex` (unlocked, not yet used) inherit priorities (PTHREAD_PRIO_INHERIT): while the
// real-time reader waits on it, the I/O thread that holds it runs at the reader's priority, so a
// benchmark process that preempted the I/O thread cannot keep the reader waiting (priority
// inversion). std::mutex offers no such option, but it is a pthread mutex (native_handle()),
// which POSIX lets one destroy and initialise again with other attributes while it is unlocked.
// Measured at 1 kHz under pgbench -c 8 -j 2 on 2 cores: 99.93-99.99 % of ticks taken, against
// 98.95-99.63 % when the reader skipped a busy hand-over instead of waiting.
void inherit_priorities(std::mutex& mutex) {
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_setprotocol(&attributes, PTHREAD_PRIO_INHERIT);
  pthread_mutex_destroy(mutex.native_handle());
  pthread_mutex_init(mutex.native_handle(), &attributes);
  pthread_mutexattr_destroy(&attributes);
}

// The reader's ticks: tick k's window is [start + k * period, start + (k + 1) * period).
class TickPacer {
 public:
  TickPacer(double hz, bool real_time)
      : period_(std::chrono::duration_cast<model::SteadyClock::duration>(
            std::chrono::duration<double>(1.0 / hz))),
        real_time_(real_time),
        window_(model::SteadyClock::now()),
        rested_(window_) {}

  // The windows that passed entirely since the last read (missed ticks) once a read is due;
  // nothing when `stop` was requested first. Until then the thread sleeps to the absolute time
  // of the window on a condition variable that a stop request wakes (a futex wait on
  // CLOCK_MONOTONIC, with this thread's 1 ns timer slack): a reader at 10 Hz wakes 10 times a
  // second, and stop() is prompt all the same. (It slept at most 10 ms at a time before: 300
  // targets' readers woke 30,000 times a second, and a daemon with them took 2.5-3.3 s to stop
  // beside two busy loops.)
  std::optional<uint64_t> wait_for_window(std::stop_token stop) {
    const auto due = std::max(window_, rested_);
    if (model::SteadyClock::now() < due) {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, stop, due, [] { return false; }) || stop.stop_requested()) {
        return std::nullopt;
      }
    }
    const auto now = model::SteadyClock::now();
    const auto passed = now < window_ ? 0 : (now - window_) / period_;
    window_ += (passed + 1) * period_;
    return static_cast<uint64_t>(passed);
  }

  // A real-time reader, which nothing else on its CPU can interrupt, rests after each read at
  // least as long as the read took.
  void rest_after(model::SteadyClock::time_point start, model::SteadyClock::duration took) {
    if (real_time_) rested_ = start + 2 * took;
  }

 private:
  model::SteadyClock::duration period_;
  bool real_time_;
  model::SteadyClock::time_point window_;
  model::SteadyClock::time_point rested_;  // a real-time reader's next read starts no earlier
  std::mutex mutex_;                       // the condition variable's; nothing else takes it
  std::condition_variable_any wake_;       // notified by nothing but a stop request
};

}  // namespace

asio::awaitable<CollectResult> MemorySource::prepare(PgSession& session) {
  stop();
  auto attached = co_await attach(session);
  if (!attached) co_return CollectorError{attached.error().message, "", false, true};
  attachment_ = std::move(*attached);
  worker_code_ = attachment_.names->backend_type_code("B_BG_WORKER");
  client_code_ = attachment_.names->backend_type_code("B_BACKEND");
  unknown_databases_.clear();
  unknown_workers_.clear();
  co_return std::nullopt;
}

asio::awaitable<CollectResult> MemorySource::collect(CollectContext& context) {
  if (!unknown_databases_.empty()) {
    if (auto error = co_await read_database_names(*context.session, attachment_.databases)) {
      co_return collector_error(*error, *context.session);
    }
    unknown_databases_.clear();
  }
  if (!unknown_workers_.empty()) {
    auto outcome = co_await context.session->execute(
        "SELECT pid, backend_type FROM pg_stat_activity WHERE backend_type <> 'client backend'");
    if (!outcome.ok()) co_return collector_error(*outcome.error, *context.session);
    for (int row = 0; row < PQntuples(outcome.result.get()); ++row) {
      const auto pid = static_cast<int32_t>(std::stol(cell(outcome.result.get(), row, 0)));
      if (unknown_workers_.contains(pid)) {
        attachment_.worker_types[pid] = cell(outcome.result.get(), row, 1);
      }
    }
    // A worker that exited before the look-up keeps the generic name.
    for (const auto pid : unknown_workers_) attachment_.worker_types.try_emplace(pid);
    unknown_workers_.clear();
  }
  co_return std::nullopt;
}

void MemorySource::start(asio::any_io_executor executor, double hz, bool kernel_states) {
  stop();
  channel_ = std::make_shared<Channel>(executor);
  inherit_priorities(channel_->mutex);
  taking_.clear();
  taken_ = 0;
  reader_ = std::jthread(
      [this, hz, kernel_states](std::stop_token stop) { read_loop(stop, hz, kernel_states); });
}

void MemorySource::stop() {
  if (reader_.joinable()) {
    reader_.request_stop();
    reader_.join();
  }
}

void MemorySource::wake() {
  if (channel_) channel_->pulse.notify();
}

asio::awaitable<void> MemorySource::wait(model::SteadyClock::time_point until) {
  const auto now = model::SteadyClock::now();
  if (until <= now) co_return;
  {
    std::lock_guard lock(channel_->mutex);
    if (!channel_->ready.empty() || channel_->failure) co_return;
  }
  co_await channel_->pulse.wait_for(until - now);
}

namespace {

// The snapshots that read every client backend's state: every 50 ms at most, and no more
// than some 20,000 such reads a second over all the readers of the process (a daemon with
// hundreds of targets on one server has each of them read every backend). Every 10 ms was
// tried on 2026-12-06 and taken back: a daemon with 300 targets on one server then had a target
// fall back to activity and took 3.3 s to stop (ManyTargets, in CI).
std::atomic<size_t> state_readers{0};
struct StateReader {
  explicit StateReader(bool counted) : counted_(counted) {
    if (counted_) ++state_readers;
  }
  ~StateReader() {
    if (counted_) --state_readers;
  }
  StateReader(const StateReader&) = delete;
  StateReader& operator=(const StateReader&) = delete;
  bool counted_;
};
// The readers in real time, at most one per CPU.
std::atomic<unsigned> real_time_readers{0};
constexpr std::string_view kNoRealTimeSlot =
    "default priority (a real-time reader per CPU already)";
class RealTimeSlot {
 public:
  RealTimeSlot() {
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    taken_ = real_time_readers.fetch_add(1) < cpus;
    if (!taken_) real_time_readers.fetch_sub(1);
  }
  ~RealTimeSlot() {
    if (taken_) real_time_readers.fetch_sub(1);
  }
  RealTimeSlot(const RealTimeSlot&) = delete;
  RealTimeSlot& operator=(const RealTimeSlot&) = delete;
  bool taken() const { return taken_; }

 private:
  bool taken_ = false;
};

model::SteadyClock::duration all_states_period(size_t backends) {
  using namespace std::chrono_literals;
  const auto reads = backends * std::max<size_t>(1, state_readers.load());
  return std::max<model::SteadyClock::duration>(50ms, reads * 50us);
}

}  // namespace

// Tick k's window is [start + k * period, start + (k + 1) * period), as for the activity source:
// a read starts at the beginning of its window or, when the one before ran long, later in it; a
// window that passes entirely is a missed tick. The thread sleeps to an absolute time (1 ns timer
// slack instead of the default 50 µs) on a wait that stop() cuts short (TickPacer). Above 100 Hz
// the I/O thread is woken once per batch (every 10 ms, or 64 snapshots), not per snapshot: a
// wake-up costs more than reading the server's memory. A real-time reader, which nothing else on
// its CPU can interrupt, sleeps after each read at least as long as the read took: reads that
// outgrow half a period (thousands of backends at 10 kHz) cost missed ticks, never more than half
// of one CPU. The kernel view's state of a backend without a wait event is read here too, right
// after the arrays: read on the I/O thread, it would describe a moment up to 10 ms after the
// sample, and read once per snapshot of a batch, ten snapshots would get ten nearly simultaneous
// readings.
void MemorySource::read_loop(std::stop_token stop, double hz, bool kernel_states) {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const StateReader counted(kernel_states);
  // A reader that waits for a CPU behind the benchmark's processes misses its windows (at 10 kHz
  // a window is 100 µs); in real time a wake-up runs at once. Measured under pgbench -c 8 -j 2 on
  // 2 cores at 10 kHz: 98-99 % of ticks taken in real time, 65-79 % at nice -10
  // (docs/performance.md).
  // At most one real-time reader per CPU in the process: hundreds of targets' readers in real
  // time would together take every CPU from the I/O thread, which then stops nothing promptly
  // (a daemon with 300 targets took 36 s to stop at SIGTERM).
  const RealTimeSlot slot;
  const auto scheduling = slot.taken() ? base::raise_thread_priority() : kNoRealTimeSlot;
  ProcessStates states;  // this thread's /proc/<pid>/stat and wchan files
  ServerProcesses processes = attachment_.processes;
  const bool wchan = kernel_states && states.check_wchan(attachment_.postmaster);
  memory_source_log()->info(
      "memory reader postmaster={} hz={} scheduling=\"{}\" states_from=\"{}\"",
      attachment_.postmaster, hz, scheduling,
      !kernel_states ? "none"
      : wchan        ? "wchan, then stat"
                     : "stat");
  TickPacer pacer(hz, scheduling == base::kRealTime);
  Batch batch{hz};
  ReadCounts counts;
  Raw raw;
  model::SteadyClock::time_point next_all_states{};
  while (!stop.stop_requested()) {
    const auto missed = pacer.wait_for_window(stop);
    if (!missed) break;  // stopped while waiting for the window
    if (*missed > 0) channel_->missed += *missed;
    if (!read_arrays(raw, counts)) return;
    raw.all_states = kernel_states && raw.taken_at_steady >= next_all_states;
    if (raw.all_states)
      next_all_states = raw.taken_at_steady + all_states_period(raw.backends.size());
    if (kernel_states) read_states(raw, states, processes, raw.all_states);
    raw.duration = model::SteadyClock::now() - raw.taken_at_steady;
    pacer.rest_after(raw.taken_at_steady, raw.duration);
    hand_over(raw, batch);
  }
}

bool MemorySource::read_arrays(Raw& raw, ReadCounts& counts) {
  raw.taken_at = model::SystemClock::now();
  raw.taken_at_steady = model::SteadyClock::now();
  auto error = attachment_.reader->read(raw.backends, counts);
  if (!error) return true;
  attachment_.reader->release_memory();
  std::lock_guard lock(channel_->mutex);
  channel_->failure = error->message;
  publish(Raw{}, true);  // wakes the I/O thread, which sees the failure
  return false;
}

void MemorySource::read_states(Raw& raw, ProcessStates& states, ServerProcesses& processes,
                               bool all) const {
  states.next_reading();
  for (auto& backend : raw.backends) {
    // Memory names the backend by the server's pid; /proc by this host's.
    const pid_t process = processes.host_pid(backend.pid);
    if (process <= 0) continue;
    const bool wanted =
        backend.wait_event_info == 0 || (all && backend.backend_type == client_code_);
    if (!wanted || backend.pid == attachment_.session_pid) {
      states.seen(process, backend.proc_start);
      continue;
    }
    backend.kernel_state = states.state(process, backend.proc_start).value_or(0);
  }
}

void MemorySource::hand_over(Raw& raw, Batch& batch) {
  using namespace std::chrono_literals;
  std::lock_guard lock(channel_->mutex);
  if (channel_->ready.empty()) batch.start = raw.taken_at_steady;
  if (channel_->backlog >= batch.capacity) {
    ++channel_->missed;  // the I/O thread is 100 ms behind: drop rather than queue
    return;
  }
  ++channel_->backlog;
  const bool wake = batch.hz <= 100 || channel_->ready.size() + 1 >= 64 ||
                    raw.taken_at_steady - batch.start >= 10ms;
  publish(std::move(raw), wake);
  raw = Raw{};
  if (!channel_->spare.empty()) {
    raw = std::move(channel_->spare.back());
    channel_->spare.pop_back();
  }
}

void MemorySource::publish(Raw&& raw, bool wake) {
  if (raw.taken_at_steady != model::SteadyClock::time_point{}) {
    channel_->ready.push_back(std::move(raw));
  }
  if (!wake || channel_->wake_posted) return;
  channel_->wake_posted = true;
  asio::post(channel_->executor, [channel = channel_] {
    {
      std::lock_guard lock(channel->mutex);
      channel->wake_posted = false;
    }
    channel->pulse.notify();
  });
}

bool MemorySource::next(model::Snapshot& snapshot, bool refill) {
  if (taken_ == taking_.size()) {
    if (!refill) return false;
    std::lock_guard lock(channel_->mutex);
    for (auto& done : taking_) channel_->spare.push_back(std::move(done));
    taking_.clear();
    taken_ = 0;
    std::swap(taking_, channel_->ready);
    if (taking_.empty()) return false;
  }
  name(taking_[taken_++], snapshot);
  --channel_->backlog;
  return true;
}

void MemorySource::name(const Raw& raw, model::Snapshot& snapshot) {
  snapshot.taken_at = raw.taken_at;
  snapshot.taken_at_steady = raw.taken_at_steady;
  snapshot.query_duration = raw.duration;
  snapshot.hidden_backends = 0;
  snapshot.all_states = raw.all_states;
  snapshot.backends.resize(raw.backends.size());
  size_t count = 0;
  const auto& names = *attachment_.names;
  Memo<std::string_view> backend_type;
  Memo<std::string_view> state;
  Memo<WaitName> wait;
  Memo<const std::string*> database;
  const auto type_name = [&names](uint32_t code) { return names.backend_type(code); };
  const auto state_name = [&names](uint32_t code) { return names.state(code); };
  const auto wait_name = [&names](uint32_t info) { return names.wait_event(info); };
  const auto datname = [this](uint32_t oid) -> const std::string* {
    const auto it = attachment_.databases.find(oid);
    if (it != attachment_.databases.end()) return &it->second;
    unknown_databases_.insert(oid);
    return nullptr;
  };
  for (const auto& backend : raw.backends) {
    if (backend.pid == attachment_.session_pid) continue;
    auto& sample = snapshot.backends[count++];
    sample.pid = backend.pid;
    if (backend.backend_type == worker_code_) {
      const auto it = attachment_.worker_types.find(backend.pid);
      if (it == attachment_.worker_types.end()) unknown_workers_.insert(backend.pid);
      set_name(sample.backend_type, it != attachment_.worker_types.end() && !it->second.empty()
                                        ? std::string_view(it->second)
                                        : names.backend_type(backend.backend_type));
    } else {
      set_name(sample.backend_type, backend_type(backend.backend_type, type_name));
    }
    set_name(sample.state, state(backend.state, state_name));
    const auto& waiting = wait(backend.wait_event_info, wait_name);
    set_name(sample.wait_event_type, waiting.type);
    set_name(sample.wait_event, waiting.name);
    sample.query_id.reset();
    if (backend.query_id != 0) sample.query_id = static_cast<int64_t>(backend.query_id);
    const std::string* database_name =
        backend.database_id != 0 ? database(backend.database_id, datname) : nullptr;
    set_name(sample.datname, database_name != nullptr ? std::string_view(*database_name) : "");
    sample.application_name.clear();
    sample.backend_start = std::chrono::microseconds(backend.proc_start + kPostgresEpochMicros);
    sample.hidden = false;
    sample.kernel_state = backend.kernel_state;
    sample.key = nullptr;
  }
  snapshot.backends.resize(count);
}

uint64_t MemorySource::take_missed() { return channel_->missed.exchange(0); }

std::optional<std::string> MemorySource::failure() {
  std::lock_guard lock(channel_->mutex);
  return channel_->failure;
}

}  // namespace pgwaitprof::collectors::memory
