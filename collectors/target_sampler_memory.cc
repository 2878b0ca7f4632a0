// The target sampler's loop for the memory source: the reader thread's snapshots delivered as
// they arrive, the target's collectors between them, and the session watched while it is idle.
#include <algorithm>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>

#include "collectors/target_sampler.h"

namespace pgwaitprof::collectors {
namespace {

// Snapshots delivered before the I/O thread's other handlers get a turn.
constexpr int kMemorySnapshotsPerTurn = 64;

}  // namespace

// The memory source reads on its own thread; here its snapshots are named and delivered as
// they arrive, the target's collectors run between them, and the names of new databases and
// background workers are looked up once a second when there are any.
asio::awaitable<void> TargetSampler::sample_memory() {
  using namespace std::chrono_literals;
  memory_->start(executor_, options_.hz, options_.local != config::LocalMode::kNo);
  std::vector<model::SteadyClock::time_point> due;
  const auto start = model::SteadyClock::now();
  for (const auto& entry : collectors_) due.push_back(start + entry.period);
  auto names_due = start + 1s;
  while (state_ == SamplerState::kSampling && !lost_) {
    auto wake_at = names_due;
    for (const auto at : due) wake_at = std::min(wake_at, at);
    // The session is idle meanwhile: a server that ends it (a terminated backend, a shutdown)
    // is seen at once, not at a collector's next query, which may be seconds away or never
    // come; until then the sampler would neither reconnect nor show the outage.
    if (auto closed = co_await idle_until_woken(wake_at)) {
      connection_lost(closed->message);
      break;
    }
    if (auto failure = memory_->failure()) {
      connection_lost(*failure);
      break;
    }
    count_missed(memory_->take_missed());
    // At most 64 snapshots of one batch, then the other handlers of the I/O thread (signals,
    // the control socket, other targets) get their turn: under a reader faster than the sinks
    // the loop never waits.
    for (int taken = 0; taken < kMemorySnapshotsPerTurn && state_ == SamplerState::kSampling &&
                        memory_->next(snapshot_, taken == 0);
         ++taken) {
      fanout_.on_collector_status(memory_->name(), snapshot_.query_duration, true);
      co_await deliver_stages();
    }
    co_await asio::post(executor_, asio::use_awaitable);
    auto now = model::SteadyClock::now();
    for (size_t index = 0; index < collectors_.size() && !lost_; ++index) {
      if (due[index] > now) continue;
      due[index] = now + collectors_[index].period;
      CollectContext context{&session_, &fanout_, nullptr, delivered_ ? &snapshot_ : nullptr, now};
      if (auto error = co_await collect_timed(*collectors_[index].collector, context);
          error && error->connection_lost) {
        connection_lost(error->message);
      }
      now = model::SteadyClock::now();
    }
    if (now >= names_due && !lost_) {
      names_due = now + 1s;
      CollectContext context{&session_, &fanout_, nullptr, nullptr, now};
      if (auto error = co_await memory_->collect(context); error && error->connection_lost) {
        connection_lost(error->message);
      }
    }
  }
  memory_->stop();
}

asio::awaitable<std::optional<PgError>> TargetSampler::idle_until_woken(
    model::SteadyClock::time_point until) {
  using namespace asio::experimental::awaitable_operators;
  auto woke = co_await (memory_->wait(until) || session_.wait_closed());
  if (woke.index() == 0) co_return std::nullopt;
  co_return std::get<1>(std::move(woke));
}

}  // namespace pgwaitprof::collectors
