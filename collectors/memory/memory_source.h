// The memory source: snapshots of every backend read from the server's shared memory (the
// arrays pg_stat_activity reads) on a thread of its own, at up to 10 kHz, with no query and no
// server CPU. prepare() attaches and verifies (memory_attach.h); the sampler then start()s the
// reader thread and takes the snapshots on its I/O thread with next(). collect() runs beside it
// on the sampler's session and looks up the names the arrays hold only as numbers (database oids,
// background workers' types), and only when an unknown one appeared.
#pragma once

#include <algorithm>
#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "base/async_event.h"
#include "collectors/collector.h"
#include "collectors/kernel.h"
#include "collectors/memory/memory_attach.h"
#include "model/sample.h"

namespace pgwaitprof::collectors::memory {

class MemorySource : public Collector {
 public:
  MemorySource() = default;
  ~MemorySource() override { stop(); }
  MemorySource(const MemorySource&) = delete;
  MemorySource& operator=(const MemorySource&) = delete;

  std::string_view name() const override { return "memory"; }
  asio::awaitable<CollectResult> prepare(PgSession& session) override;
  // The names refresh (see above); a no-op when every number has its name.
  asio::awaitable<CollectResult> collect(CollectContext& context) override;

  // Starts reading at `hz` on the reader thread; stop() ends and joins it. With `kernel_states`
  // (the kernel view), a backend without a wait event gets its /proc state as it is read, not
  // when the I/O thread takes the batch up to 10 ms later; and every 50 ms or more (some 20,000
  // reads a second over every reader of the process at most), a snapshot gets every client
  // backend's state, waiting or not (Snapshot::all_states), for the kernel check's like with
  // like count.
  void start(asio::any_io_executor executor, double hz, bool kernel_states);
  void stop();
  // Asks the reader to end without waiting for it (a sleeping reader wakes at once): a daemon
  // stopping many targets asks all of them first, so that their ends overlap.
  void request_stop() { reader_.request_stop(); }
  // Waits until snapshots are ready, wake() is called or `until` passes. I/O thread only.
  asio::awaitable<void> wait(model::SteadyClock::time_point until);
  void wake();
  // The oldest snapshot read and not yet taken, named into `snapshot`; false when none. With
  // `refill` false, only from the batch already taken over, so that a caller that yields now and
  // then is not kept busy for ever by a reader faster than its sinks.
  bool next(model::Snapshot& snapshot, bool refill = true);
  // Ticks missed by the reader since the last call (late, or the I/O thread 100 ms behind).
  uint64_t take_missed();
  // Why the reader stopped reading (the server's memory is gone), if it did.
  std::optional<std::string> failure();
  const Attachment& attachment() const { return attachment_; }

 private:
  struct Raw {
    model::SystemClock::time_point taken_at;
    model::SteadyClock::time_point taken_at_steady;
    std::chrono::nanoseconds duration{0};
    std::vector<RawBackend> backends;
    bool all_states = false;  // every client backend's kernel state was read (read_states)
  };
  // Shared by the reader thread and the I/O thread; `pulse` is touched on the I/O thread only.
  // The mutex is taken once per tick by the reader (to hand over a snapshot and take a spare
  // one) and once per batch by the I/O thread; nothing waits on it for long.
  struct Channel {
    explicit Channel(asio::any_io_executor executor) : executor(executor), pulse(executor) {}
    asio::any_io_executor executor;
    base::AsyncPulse pulse;
    std::mutex mutex;
    std::vector<Raw> ready;
    std::vector<Raw> spare;
    std::atomic<uint64_t> missed = 0;
    // Snapshots read and not yet named by the I/O thread (in `ready` or in its batch).
    std::atomic<size_t> backlog = 0;
    bool wake_posted = false;
    std::optional<std::string> failure;
  };

  // The snapshots waiting for the I/O thread: at most 100 ms of them (beyond, a read is dropped
  // and counted as a missed tick, so that taken + missed stays the ticks asked for); above
  // 100 Hz the I/O thread is woken once per batch of 10 ms or 64 snapshots.
  struct Batch {
    explicit Batch(double rate)
        : hz(rate), capacity(std::max<size_t>(100, static_cast<size_t>(rate / 10))) {}
    double hz;
    size_t capacity;
    model::SteadyClock::time_point start{};
  };

  // The reader thread's loop and its steps.
  void read_loop(std::stop_token stop, double hz, bool kernel_states);
  // False when the read failed: the failure is handed over and the reader ends.
  bool read_arrays(Raw& raw, ReadCounts& counts);
  // The kernel states of backends without a wait event; with `all`, of every client backend.
  // `processes`: this thread's map of the server's pids to this host's.
  void read_states(Raw& raw, ProcessStates& states, ServerProcesses& processes, bool all) const;
  // Hands `raw` over (or drops it when the I/O thread is behind) and takes a spare one.
  void hand_over(Raw& raw, Batch& batch);
  // Under channel_->mutex: hands `raw` over
  // and wakes the I/O thread when `wake` and no wake is on its way.
  void publish(Raw&& raw, bool wake);
  void name(const Raw& raw, model::Snapshot& snapshot);

  Attachment attachment_;
  std::shared_ptr<Channel> channel_;
  std::jthread reader_;
  std::vector<Raw> taking_;  // I/O thread: the batch being named, oldest first
  size_t taken_ = 0;
  std::set<uint32_t> unknown_databases_;
  std::set<int32_t> unknown_workers_;
  uint32_t worker_code_ = UINT32_MAX;
  uint32_t client_code_ = UINT32_MAX;
};

}  // namespace pgwaitprof::collectors::memory
