// The live checks of an attachment, each against the server's own view of the same backends.
#include "collectors/memory/memory_live_check.h"

#include <fmt/format.h>

#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "collectors/memory/attach_fields.h"
#include "collectors/memory/memory_refusal.h"

namespace pgwaitprof::collectors::memory {
namespace {

constexpr int kVerifyAttempts = 10;

// The value of a constant of the layout (WAIT_EVENT_CLIENT_READ, STATE_RUNNING, ...).
uint32_t constant(const std::vector<NamedValue>& table, std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return UINT32_MAX;
}

using Row = std::tuple<std::string, std::string, std::string, std::string>;  // type state waits

Row memory_row(const Attachment& attachment, const RawBackend& backend) {
  const auto wait = attachment.names->wait_event(backend.wait_event_info);
  return {std::string(attachment.names->backend_type(backend.backend_type)),
          std::string(attachment.names->state(backend.state)), std::string(wait.type),
          std::string(wait.name)};
}

std::string row_text(const Row& row) {
  return fmt::format("\"{}\" \"{}\" \"{} {}\"", std::get<0>(row), std::get<1>(row),
                     std::get<2>(row), std::get<3>(row));
}

// The session's own backend as one snapshot shows it, or nullopt when it is not in it.
std::optional<RawBackend> session_backend(const Attachment& attachment, base::Status& failed) {
  std::vector<RawBackend> backends;
  ReadCounts counts;
  failed = attachment.reader->read(backends, counts);
  for (const auto& backend : backends) {
    if (backend.pid == attachment.session_pid) return backend;
  }
  return std::nullopt;
}

// Reads the session's backend every 10 ms (the sleeps last 200 ms and more; hundreds of
// targets attach at once on one I/O thread) until it shows `wait` in `state` or `done` is set;
// "" when it did, else what it showed last.
asio::awaitable<std::string> watch_session(const Attachment& attachment, uint32_t wait,
                                           uint32_t state, const bool& done) {
  asio::steady_timer pause(co_await asio::this_coro::executor);
  std::string seen = "nothing";
  while (!done) {
    base::Status failed;
    if (const auto backend = session_backend(attachment, failed)) {
      if (backend->wait_event_info == wait && backend->state == state) co_return std::string();
      seen = row_text(memory_row(attachment, *backend));
    }
    if (failed) co_return failed->message;
    pause.expires_after(std::chrono::milliseconds(10));
    co_await pause.async_wait(asio::use_awaitable);
  }
  co_return seen;
}

// A read in which our own session has settled into its wait for the next command: between a
// result and that wait it is idle without a wait event for some microseconds. At most 50 reads,
// 1 ms apart (at attach time only), waiting on a timer: hundreds of targets attach at once on
// one I/O thread.
asio::awaitable<base::Status> read_settled(const Attachment& attachment,
                                           std::vector<RawBackend>& backends) {
  const uint32_t client_read = constant(attachment.layout->wait_events, "WAIT_EVENT_CLIENT_READ");
  ReadCounts counts;
  asio::steady_timer pause(co_await asio::this_coro::executor);
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (auto error = attachment.reader->read(backends, counts)) co_return error;
    for (const auto& backend : backends) {
      if (backend.pid == attachment.session_pid && backend.wait_event_info == client_read) {
        co_return std::nullopt;
      }
    }
    pause.expires_after(std::chrono::milliseconds(1));
    co_await pause.async_wait(asio::use_awaitable);
  }
  co_return std::nullopt;  // the comparison says what it read
}

// Two reads of memory with one pg_stat_activity query between them: the backends that read
// the same in both (a backend that changed meanwhile cannot be compared), and the pids seen.
struct Bracket {
  std::map<int32_t, Row> first;                        // the read before
  std::map<int32_t, std::pair<Row, uint32_t>> stable;  // row and backend type code
  std::set<int32_t> seen;                              // in the read after
  PgResult activity;
};
asio::awaitable<base::Expected<Bracket>> bracket(PgSession& session, const Attachment& attachment) {
  std::vector<RawBackend> before;
  std::vector<RawBackend> after;
  if (auto error = co_await read_settled(attachment, before)) co_return unreadable(*error);
  auto outcome = co_await session.execute(
      "SELECT pid, backend_type, coalesce(state, ''), coalesce(wait_event_type, ''),"
      " coalesce(wait_event, '') FROM pg_stat_activity");
  if (!outcome.ok()) co_return refused(outcome.error->message, kUseActivity);
  if (auto error = co_await read_settled(attachment, after)) co_return unreadable(*error);
  Bracket result;
  result.activity = std::move(outcome.result);
  for (const auto& backend : before) result.first[backend.pid] = memory_row(attachment, backend);
  for (const auto& backend : after) {
    result.seen.insert(backend.pid);
    const auto row = memory_row(attachment, backend);
    if (const auto it = result.first.find(backend.pid);
        it != result.first.end() && it->second == row) {
      result.stable[backend.pid] = {row, backend.backend_type};
    }
  }
  co_return result;
}

// One backend of pg_stat_activity against memory; "" when they agree. A background worker's
// type is learnt from pg_stat_activity (memory holds only "background worker"); the session ran
// the query, so only its type can be compared.
std::string compare_row(Attachment& attachment, int32_t pid, const Row& activity, Row row,
                        uint32_t code) {
  if (code == attachment.names->backend_type_code("B_BG_WORKER") &&
      std::get<0>(row) != std::get<0>(activity)) {
    attachment.worker_types[pid] = std::get<0>(activity);
    std::get<0>(row) = std::get<0>(activity);
  }
  if (pid == attachment.session_pid) {
    std::get<1>(row) = std::get<1>(activity);
    std::get<2>(row) = std::get<2>(activity);
    std::get<3>(row) = std::get<3>(activity);
  }
  if (row == activity) return "";
  return fmt::format("pid {}: memory says {}, pg_stat_activity {}", pid, row_text(row),
                     row_text(activity));
}

// One comparison of memory with pg_stat_activity; "" when they agree, else the first
// difference. What cannot change for a pid (its backend type, that it exists) must agree, and
// our own idle session must read exactly as idle in ClientRead. Another backend's state or wait
// event that differs may have changed between the reads and back: a pid that agreed in full in
// this or an earlier comparison (`agreed`) passes, and the comparison passes when such pids are
// no more than a quarter of those that agree now. (With 300 targets attaching to one server at
// once, some of their sessions ran a query between every pair of reads: 49 of 300 targets fell
// back to pg_stat_activity in ten comparisons each when any one such pid failed a comparison.) A
// wrong layout agrees for none.
asio::awaitable<base::Expected<std::string>> compare_once(PgSession& session,
                                                          Attachment& attachment,
                                                          std::set<int32_t>& agreed) {
  auto taken = co_await bracket(session, attachment);
  if (!taken) co_return taken.error();
  // Our own session is idle and waits for us in both reads: a state or wait-event offset that
  // is off shows here even when no other client is connected.
  const Row ours{"client backend", "idle", "Client", "ClientRead"};
  const auto own = taken->stable.find(attachment.session_pid);
  if (own == taken->stable.end() || own->second.first != ours) {
    const auto it = taken->first.find(attachment.session_pid);
    co_return fmt::format("the sampler's own idle session reads as {} in memory",
                          row_text(it == taken->first.end() ? Row{} : it->second));
  }
  const PGresult* result = taken->activity.get();
  size_t matched = 0;
  size_t changes = 0;   // pids never agreed whose state or wait event differed
  std::string changed;  // the first of them
  std::set<int32_t> listed;
  for (int index = 0; index < PQntuples(result); ++index) {
    int32_t pid = 0;
    parse_integer(cell(result, index, 0), pid);
    listed.insert(pid);
    const Row activity{cell(result, index, 1), cell(result, index, 2), cell(result, index, 3),
                       cell(result, index, 4)};
    const auto it = taken->stable.find(pid);
    if (it == taken->stable.end()) {
      if (!taken->first.contains(pid) && !taken->seen.contains(pid)) {
        co_return fmt::format("pid {} ({}) is in pg_stat_activity but not in memory", pid,
                              std::get<0>(activity));
      }
      continue;  // it changed while we looked
    }
    const auto [row, code] = it->second;
    auto difference = compare_row(attachment, pid, activity, row, code);
    if (difference.empty()) {
      agreed.insert(pid);
      ++matched;
    } else if (std::get<0>(row) != std::get<0>(activity) &&
               code != attachment.names->backend_type_code("B_BG_WORKER")) {
      co_return difference;  // a backend type never changes
    } else if (!agreed.contains(pid)) {
      if (changes++ == 0) changed = std::move(difference);
    }
  }
  for (const auto& [pid, entry] : taken->stable) {
    if (!listed.contains(pid))
      co_return fmt::format("pid {} is in memory but not in pg_stat_activity", pid);
  }
  if (changes > 0 && changes * 4 > matched) co_return changed;
  if (matched < 2) co_return fmt::format("only {} backends could be compared", matched);
  co_return std::string();
}

}  // namespace

// The live check of the PGPROC stride: the live processes' pids (pg_stat_activity) are found in
// the array's bytes, and the spacing of their places (the greatest common divisor of their
// distances: the auxiliary processes sit side by side) must be the layout's sizeof(PGPROC),
// each place at the pid's offset of its PGPROC.
asio::awaitable<base::Status> check_stride(PgSession& session, const PgLayout& shape,
                                           const ArrayPlaces& places, const RemoteMemory& shm) {
  auto outcome = co_await session.execute("SELECT pid FROM pg_stat_activity");
  if (!outcome.ok()) co_return refused(outcome.error->message, kUseActivity);
  std::vector<char> procs(size_t{places.proc_count} * shape.proc_size);
  if (auto error = shm.read(places.procs, procs.data(), procs.size())) {
    co_return unreadable(*error);
  }
  std::set<int32_t> pids;
  for (int row = 0; row < PQntuples(outcome.result.get()); ++row) {
    int32_t pid = 0;
    if (parse_integer(cell(outcome.result.get(), row, 0), pid) && pid > 0) pids.insert(pid);
  }
  const auto measured = measure_stride(procs, shape, pids);
  if (measured.found < 3 || measured.stride != static_cast<int64_t>(shape.proc_size) ||
      !measured.aligned) {
    co_return refused(
        fmt::format("the PGPROC layout of PostgreSQL {} does not match this server ({} live "
                    "processes found in PGPROCs, {} bytes apart; the layout says {})",
                    shape.major, measured.found, measured.stride, shape.proc_size),
        kUseActivity);
  }
  co_return std::nullopt;
}

// The live check of the wait event's and the state's offsets and values: while the session
// runs pg_sleep, its PGPROC must read PG_WAIT_TIMEOUT | WAIT_EVENT_PG_SLEEP (class 0x09 in every
// major) and its status entry STATE_RUNNING ("active"). Longer sleeps on a busy host, where
// the backend may start sleeping late and the I/O thread watch late.
asio::awaitable<base::Status> check_sleeping_session(PgSession& session,
                                                     const Attachment& attachment) {
  using namespace asio::experimental::awaitable_operators;
  const auto& shape = *attachment.layout;
  const uint32_t sleep = constant(shape.wait_events, "WAIT_EVENT_PG_SLEEP");
  const uint32_t running = constant(shape.states, "STATE_RUNNING");
  std::string seen;
  // 3 s and 10 s last: with hundreds of targets attaching at once the watch can be late by
  // seconds (in CI, one of 300 targets saw its session idle before and after a 3 s sleep and
  // never during it, and sampled pg_stat_activity for the rest of the daemon's life).
  for (const char* seconds : {"0.2", "0.5", "1", "3", "10"}) {
    bool done = false;
    auto sleeping = [&]() -> asio::awaitable<PgOutcome> {
      auto outcome = co_await session.execute(fmt::format("SELECT pg_sleep({})", seconds));
      done = true;
      co_return outcome;
    };
    auto [outcome, watched] =
        co_await (sleeping() && watch_session(attachment, sleep, running, done));
    if (!outcome.ok()) co_return refused(outcome.error->message, kUseActivity);
    if (watched.empty()) co_return std::nullopt;
    seen = watched;
  }
  co_return refused(fmt::format("the shared-memory layout of PostgreSQL {} does not match this "
                                "server (the sampler's session in pg_sleep reads as {} in memory)",
                                shape.major, seen),
                    kUseActivity);
}

// The live check against pg_stat_activity, up to kVerifyAttempts times 20 ms apart: a backend
// can change state between the two reads of an attempt and back (a background writer woken
// for a moment under load, seen in CI on 16 in three attempts in a row); a wrong layout fails
// every one of them.
asio::awaitable<base::Status> verify_against_activity(PgSession& session, Attachment& attachment) {
  std::string mismatch;
  std::set<int32_t> agreed;
  asio::steady_timer pause(co_await asio::this_coro::executor);
  for (int attempt = 0; attempt < kVerifyAttempts; ++attempt) {
    if (attempt > 0) {
      pause.expires_after(std::chrono::milliseconds(20));
      co_await pause.async_wait(asio::use_awaitable);
    }
    auto compared = co_await compare_once(session, attachment, agreed);
    if (!compared) co_return compared.error();
    mismatch = *compared;
    if (mismatch.empty()) co_return std::nullopt;
  }
  co_return refused(
      fmt::format("the shared-memory layout of PostgreSQL {} does not match this server ({})",
                  attachment.layout->major, mismatch),
      kUseActivity);
}

StrideCheck measure_stride(const std::vector<char>& procs, const PgLayout& layout,
                           const std::set<int32_t>& pids) {
  const int64_t to_owner =
      static_cast<int64_t>(layout.proc_latch_owner) - static_cast<int64_t>(layout.proc_pid);
  std::map<int32_t, int64_t> places;  // -1: in more than one place
  for (size_t at = 0; at + sizeof(int32_t) <= procs.size(); at += sizeof(int32_t)) {
    const auto pid = field_at<int32_t>(procs, at);
    const int64_t owner = static_cast<int64_t>(at) + to_owner;
    if (!pids.contains(pid) || owner < 0 ||
        static_cast<size_t>(owner) + sizeof(int32_t) > procs.size() ||
        field_at<int32_t>(procs, static_cast<size_t>(owner)) != pid) {
      continue;
    }
    const auto [it, first] = places.try_emplace(pid, static_cast<int64_t>(at));
    if (!first) it->second = -1;
  }
  StrideCheck check;
  int64_t first_place = -1;
  for (const auto& [pid, at] : places) {
    if (at < 0) continue;
    ++check.found;
    if (first_place < 0) first_place = at;
    check.stride = std::gcd(check.stride, at - first_place);
    check.aligned &= static_cast<size_t>(at) % layout.proc_size == layout.proc_pid;
  }
  return check;
}

}  // namespace pgwaitprof::collectors::memory
