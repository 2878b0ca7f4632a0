// The attach steps, in the order the checks depend on each other.
#include "collectors/memory/memory_attach.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "base/regular_file.h"
#include "collectors/kernel.h"
#include "collectors/memory/memory_refusal.h"

namespace pgwaitprof::collectors::memory {
namespace {

// MyBEEntry is static in 13 (the symbol table of a build that was not stripped has it);
// MyProcNumber is 17's.
constexpr std::string_view kSymbols[] = {"ProcGlobal", "MaxBackends", "MyBEEntry", "MyProcPid",
                                         "MyProcNumber"};
constexpr int kVerifyAttempts = 10;

struct ServerFacts {
  int32_t session_pid = 0;     // as the server names it
  pid_t session_process = 0;   // this host's pid of the same backend
  std::string data_directory;  // as the server names it
  int64_t start_epoch = 0;
  int version = 0;
  int max_connections = 0;
  uint32_t database_oid = 0;
  uint32_t role_oid = 0;
};

template <typename Integer>
bool parse_integer(std::string_view text, Integer& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

asio::awaitable<base::Expected<ServerFacts>> server_facts(PgSession& session) {
  auto outcome = co_await session.execute(
      "SELECT pg_backend_pid(), current_setting('data_directory'),"
      " extract(epoch FROM pg_postmaster_start_time())::bigint,"
      " current_setting('server_version_num')::int, current_setting('max_connections')::int,"
      " (SELECT oid FROM pg_database WHERE datname = current_database()),"
      " (SELECT oid FROM pg_roles WHERE rolname = current_user)");
  if (!outcome.ok()) {
    co_return refused(outcome.error->message, kNeedPgMonitor);
  }
  const PGresult* result = outcome.result.get();
  ServerFacts facts;
  facts.data_directory = cell(result, 0, 1);
  const bool parsed = parse_integer(cell(result, 0, 0), facts.session_pid) &&
                      parse_integer(cell(result, 0, 2), facts.start_epoch) &&
                      parse_integer(cell(result, 0, 3), facts.version) &&
                      parse_integer(cell(result, 0, 4), facts.max_connections) &&
                      parse_integer(cell(result, 0, 5), facts.database_oid) &&
                      parse_integer(cell(result, 0, 6), facts.role_oid);
  if (!parsed) co_return refused("the server's settings could not be read", kUseActivity);
  co_return facts;
}

std::string proc_stat(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text;
  std::getline(in, text);
  return text;
}

std::string proc_file(const std::string& path) { return base::read_proc_text(path); }

}  // namespace

int64_t process_start_epoch(std::string_view stat, std::string_view system_stat,
                            int64_t clock_ticks) {
  // The fields after the command name, which may hold spaces and parentheses: [19] is the
  // start time in clock ticks after boot.
  const size_t paren = stat.rfind(')');
  if (paren == std::string_view::npos || clock_ticks <= 0) return 0;
  std::istringstream rest{std::string(stat.substr(paren + 1))};
  std::vector<std::string> fields;
  for (std::string field; rest >> field;) fields.push_back(field);
  std::istringstream system{std::string(system_stat)};
  int64_t boot = 0;
  for (std::string key; system >> key;) {
    if (key == "btime") {
      system >> boot;
      break;
    }
  }
  int64_t ticks = 0;
  if (fields.size() < 20 || boot <= 0 || !parse_integer(fields[19], ticks)) return 0;
  return boot + ticks / clock_ticks;
}

namespace {

// The postmaster that serves our session: our backend's parent on this host, in this PID
// namespace or one below it (a container), whose working directory is the server's data
// directory under its root (a chroot) and whose start is the server's start. Nothing is read
// from the data directory itself but the lock file, so CAP_SYS_PTRACE is the only right this
// needs.
base::Expected<ServerProcesses> find_postmaster(const ServerFacts& facts,
                                                base::Expected<ServerProcesses> found) {
  const auto not_here = [&](std::string_view why) {
    return refused(fmt::format("the server does not run on this host ({})", why),
                   "the memory source reads a server on this host, in this PID namespace or one "
                   "below it; use --source activity for a remote target");
  };
  const auto parent = parse_parent_pid(proc_stat(facts.session_pid));
  std::error_code error;
  if (parent && *parent > 1) {
    const auto directory =
        std::filesystem::read_symlink(fmt::format("/proc/{}/cwd", *parent), error);
    (void)directory;
    if (error == std::errc::permission_denied) {
      return refused(fmt::format("could not read the working directory of process {}: {}", *parent,
                                 error.message()),
                     kNeedRights);
    }
  }
  if (!found) {
    // A server on this host that could not be mapped says so itself.
    const auto& why = found.error().message;
    return why.starts_with("the server runs") ? refused(why, kNeedNamespace) : not_here(why);
  }
  const pid_t postmaster = found->postmaster();
  // The server's own record of its postmaster; where the file cannot be read, the process's
  // start time from /proc, which a step of the wall clock since boot can move (seen here: 38 s
  // on a virtual machine).
  const auto lock_file = found->host_path(facts.data_directory + "/postmaster.pid");
  switch (check_lock_file(proc_file(lock_file), found->postmaster_in_server(), facts.start_epoch)) {
    case LockFile::kAgrees:
      break;
    case LockFile::kAnother:
      return not_here(fmt::format("\"{}/postmaster.pid\" names another postmaster than {}",
                                  facts.data_directory, found->postmaster_in_server()));
    case LockFile::kUnreadable:
      if (std::llabs(process_start_epoch(proc_stat(postmaster), proc_file("/proc/stat"),
                                         sysconf(_SC_CLK_TCK)) -
                     facts.start_epoch) > 2) {
        return not_here(fmt::format("process {} did not start when the server did", postmaster));
      }
  }
  return found;
}

base::Error unreadable(const base::Error& error) {
  return refused(error.message,
                 error.message.find("Permission denied") != std::string::npos ||
                         error.message.find("Operation not permitted") != std::string::npos
                     ? kNeedRights
                     : kUseActivity);
}

std::string executable_path(pid_t pid) {
  std::error_code error;
  auto path = std::filesystem::read_symlink(fmt::format("/proc/{}/exe", pid), error);
  return error ? std::string() : path.string();
}

// Reads the variables `names` of the executable in `pid`, each from its own verified address.
base::Status read_globals(pid_t pid, const ElfImage& image,
                          std::initializer_list<std::pair<std::string_view, void*>> names,
                          std::initializer_list<size_t> sizes) {
  auto maps = read_maps(pid);
  if (!maps) return unreadable(maps.error());
  const auto path = executable_path(pid);
  if (path.empty())
    return refused(fmt::format("could not read \"/proc/{}/exe\"", pid), kNeedRights);
  std::vector<RemoteRead> reads;
  std::vector<Mapping> allowed;
  auto size = sizes.begin();
  for (const auto& [name, into] : names) {
    auto address = symbol_address(image, *maps, path, name, *size);
    if (!address) return refused(address.error().message, kUseActivity);
    allowed.push_back(*find_mapping(*maps, *address, *size));
    reads.push_back({*address, into, *size});
    ++size;
  }
  if (auto error = RemoteMemory(pid, allowed).read(reads)) return unreadable(*error);
  return std::nullopt;
}

template <typename T>
T field(const std::vector<char>& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// The value of a constant of the layout (WAIT_EVENT_CLIENT_READ, STATE_RUNNING, ...).
uint32_t constant(const std::vector<NamedValue>& table, std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return UINT32_MAX;
}

// The PGPROC array, from the postmaster's ProcGlobal and MaxBackends: inside the shared
// mapping, and as long as allProcCount says (MaxBackends + the auxiliary PGPROCs; the prepared
// transactions' PGPROCs follow, outside the count).
struct SharedArrays {
  Mapping shared;
  ArrayPlaces places;
};
base::Expected<SharedArrays> locate_procs(pid_t postmaster, const ElfImage& image,
                                          const PgLayout& shape, const ServerFacts& facts) {
  uint64_t proc_global = 0;
  int32_t max_backends = 0;
  if (auto error = read_globals(postmaster, image,
                                {{"ProcGlobal", &proc_global}, {"MaxBackends", &max_backends}},
                                {sizeof proc_global, sizeof max_backends})) {
    return *error;
  }
  auto maps = read_maps(postmaster);
  if (!maps) return unreadable(maps.error());
  const Mapping* shared = find_mapping(*maps, proc_global, shape.proc_hdr_size);
  if (shared == nullptr || !shared->shared() || !shared->readable()) {
    return refused("ProcGlobal does not point into the server's shared memory", kUseActivity);
  }
  std::vector<char> header(shape.proc_hdr_size);
  if (auto error =
          RemoteMemory(postmaster, {*shared}).read(proc_global, header.data(), header.size())) {
    return unreadable(*error);
  }
  ArrayPlaces places;
  places.procs = field<uint64_t>(header, shape.proc_hdr_all_procs);
  places.proc_count = field<uint32_t>(header, shape.proc_hdr_all_proc_count);
  places.max_backends = static_cast<uint32_t>(max_backends);
  places.status_slots = places.max_backends + static_cast<uint32_t>(shape.status_extra_slots);
  if (max_backends < facts.max_connections ||
      places.proc_count != places.max_backends + static_cast<uint32_t>(shape.auxiliary_procs) ||
      !shared->contains(places.procs, uint64_t{places.proc_count} * shape.proc_size)) {
    return refused(fmt::format("the PGPROC array does not add up (MaxBackends {}, {} PGPROCs, "
                               "max_connections {})",
                               max_backends, places.proc_count, facts.max_connections),
                   kUseActivity);
  }
  return SharedArrays{*shared, places};
}

// The session backend's PGPROC number (17+: MyProcNumber, its PGPROC checked to be the
// session's) or, up to 16, its backendId (from the one PGPROC in use with the session's pid):
// what its status slot is indexed by.
base::Expected<uint32_t> session_slot(const ServerFacts& facts, const ElfImage& image,
                                      const PgLayout& shape, const ArrayPlaces& places,
                                      const RemoteMemory& shm) {
  const auto identity = proc_identity(shape);
  std::vector<char> ids(size_t{places.proc_count} * identity.length);
  std::vector<RemoteRead> reads;
  for (uint32_t proc = 0; proc < places.proc_count; ++proc) {
    const uint64_t at = places.procs + uint64_t{proc} * shape.proc_size + identity.offset;
    reads.push_back({at, ids.data() + size_t{proc} * identity.length, identity.length});
  }
  if (auto error = shm.read(reads)) return unreadable(*error);
  auto id = [&](uint32_t proc, size_t offset) {
    return field<int32_t>(ids, size_t{proc} * identity.length + (offset - identity.offset));
  };
  // A PGPROC keeps the pid of the last process that used it; the one in use has its latch
  // owned by that pid.
  auto is_session = [&](uint32_t proc) {
    return id(proc, shape.proc_pid) == facts.session_pid &&
           id(proc, shape.proc_latch_owner) == facts.session_pid;
  };
  if (shape.status_by_proc_number) {
    int32_t number = -1;
    if (auto error = read_globals(facts.session_process, image, {{"MyProcNumber", &number}},
                                  {sizeof number})) {
      return *error;
    }
    if (number < 0 || static_cast<uint32_t>(number) >= places.max_backends ||
        !is_session(static_cast<uint32_t>(number))) {
      return refused(fmt::format("PGPROC {} (MyProcNumber of backend {}) is not the session's",
                                 number, facts.session_pid),
                     kUseActivity);
    }
    return static_cast<uint32_t>(number);
  }
  int32_t backend_id = 0;
  for (uint32_t proc = 0; proc < places.max_backends; ++proc) {
    if (!is_session(proc)) continue;
    if (backend_id != 0) return refused("two PGPROCs carry the session's pid", kUseActivity);
    backend_id = id(proc, shape.proc_backend_id);
  }
  if (backend_id < 1 || static_cast<uint32_t>(backend_id) > places.max_backends) {
    return refused(fmt::format("the session's PGPROC has backend id {}", backend_id), kUseActivity);
  }
  return static_cast<uint32_t>(backend_id - 1);
}

// The status array, from the session backend's own entry (MyBEEntry, which is the array's slot
// session_slot()), checked to describe the session: its pid, type, database and role.
base::Status locate_statuses(const ServerFacts& facts, const ElfImage& image, const PgLayout& shape,
                             const PgNames& names, const RemoteMemory& shm, const Mapping& shared,
                             ArrayPlaces& places) {
  uint64_t my_entry = 0;
  int32_t my_pid = 0;
  if (auto error = read_globals(facts.session_process, image,
                                {{"MyBEEntry", &my_entry}, {"MyProcPid", &my_pid}},
                                {sizeof my_entry, sizeof my_pid})) {
    return error;
  }
  if (my_pid != facts.session_pid) {
    return refused(fmt::format("MyProcPid of backend {} reads {}", facts.session_pid, my_pid),
                   kUseActivity);
  }
  auto slot = session_slot(facts, image, shape, places, shm);
  if (!slot) return slot.error();
  if (my_entry < uint64_t{*slot} * shape.status_size) {
    return refused("the session's status entry is below its array", kUseActivity);
  }
  places.statuses = my_entry - uint64_t{*slot} * shape.status_size;
  if (!shared.contains(places.statuses, uint64_t{places.status_slots} * shape.status_size)) {
    return refused("the backend status array is not inside the server's shared memory",
                   kUseActivity);
  }
  std::vector<char> mine(shape.status_size);
  if (auto error = shm.read(my_entry, mine.data(), mine.size())) return unreadable(*error);
  if (field<int32_t>(mine, shape.status_procpid) != facts.session_pid ||
      field<uint32_t>(mine, shape.status_backend_type) != names.backend_type_code("B_BACKEND") ||
      field<uint32_t>(mine, shape.status_database_id) != facts.database_oid ||
      field<uint32_t>(mine, shape.status_user_id) != facts.role_oid) {
    return refused(
        fmt::format("the session's status entry does not describe backend {}", facts.session_pid),
        kUseActivity);
  }
  return std::nullopt;
}

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

// By which right this process could read the postmaster's memory (it did).
std::string read_right(pid_t postmaster) {
  struct stat process {};
  if (geteuid() == 0) return "as root";
  if (::stat(fmt::format("/proc/{}", postmaster).c_str(), &process) == 0 &&
      process.st_uid == geteuid()) {
    return "as the server's OS user";
  }
  return "with CAP_SYS_PTRACE";
}

}  // namespace

asio::awaitable<std::optional<PgError>> read_database_names(
    PgSession& session, std::map<uint32_t, std::string>& databases) {
  auto outcome = co_await session.execute("SELECT oid, datname FROM pg_database");
  if (!outcome.ok()) co_return outcome.error;
  for (int index = 0; index < PQntuples(outcome.result.get()); ++index) {
    uint32_t oid = 0;
    if (parse_integer(cell(outcome.result.get(), index, 0), oid)) {
      databases[oid] = cell(outcome.result.get(), index, 1);
    }
  }
  co_return std::nullopt;
}

StrideCheck measure_stride(const std::vector<char>& procs, const PgLayout& layout,
                           const std::set<int32_t>& pids) {
  const int64_t to_owner =
      static_cast<int64_t>(layout.proc_latch_owner) - static_cast<int64_t>(layout.proc_pid);
  std::map<int32_t, int64_t> places;  // -1: in more than one place
  for (size_t at = 0; at + sizeof(int32_t) <= procs.size(); at += sizeof(int32_t)) {
    const auto pid = field<int32_t>(procs, at);
    const int64_t owner = static_cast<int64_t>(at) + to_owner;
    if (!pids.contains(pid) || owner < 0 ||
        static_cast<size_t>(owner) + sizeof(int32_t) > procs.size() ||
        field<int32_t>(procs, static_cast<size_t>(owner)) != pid) {
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

// Each address is derived and checked before the next step uses it; then the three live
// checks (the PGPROC stride, the session in pg_sleep, every backend against pg_stat_activity).
asio::awaitable<base::Expected<Attachment>> attach(PgSession& session, const PgLayout* layout) {
  auto facts = co_await server_facts(session);
  if (!facts) co_return facts.error();
  Attachment attachment;
  attachment.layout = layout ? layout : find_pg_layout(facts->version / 10000);
  if (attachment.layout == nullptr) {
    co_return base::Error{missing_layout_message(facts->version / 10000)};
  }
  const PgLayout& shape = *attachment.layout;
  attachment.names = std::make_unique<PgNames>(shape);
  attachment.session_pid = facts->session_pid;
  auto server = co_await find_session_server(session);
  auto processes = find_postmaster(*facts, std::move(server));
  if (!processes) co_return processes.error();
  facts->session_process = processes->session_backend();
  const pid_t postmaster = processes->postmaster();
  attachment.postmaster = postmaster;
  attachment.processes = *processes;
  auto image = read_executable(postmaster, kSymbols);
  if (!image) co_return unreadable(image.error());
  auto arrays = locate_procs(postmaster, *image, shape, *facts);
  if (!arrays) co_return arrays.error();
  const RemoteMemory shm(postmaster, {arrays->shared});
  if (auto error = locate_statuses(*facts, *image, shape, *attachment.names, shm, arrays->shared,
                                   arrays->places)) {
    co_return *error;
  }
  if (auto error = co_await check_stride(session, shape, arrays->places, shm)) co_return *error;
  // Reads through a read-only mapping of the segment when the kernel allows it (root,
  // CAP_CHECKPOINT_RESTORE): no system call a tick. Otherwise process_vm_readv, the same reads.
  RemoteMemory memory = shm;
  const auto not_mapped = memory.map_shared();
  attachment.reader = std::make_unique<BackendReader>(shape, arrays->places, std::move(memory));
  if (auto error = co_await check_sleeping_session(session, attachment)) co_return *error;
  if (auto error = co_await verify_against_activity(session, attachment)) co_return *error;
  if (auto error = co_await read_database_names(session, attachment.databases)) {
    co_return refused(error->message, kUseActivity);
  }
  attachment.rights = read_right(postmaster);
  attachment.description = fmt::format(
      "postmaster={} pgprocs={} status_slots={} max_backends={} layout={} reads=\"{}\"{}",
      attachment.postmaster, arrays->places.proc_count, arrays->places.status_slots,
      arrays->places.max_backends, shape.version,
      not_mapped ? "process_vm_readv (" + not_mapped->message + ")" : "mapped",
      processes->description().empty() ? std::string()
                                       : fmt::format(" server=\"{}\"", processes->description()));
  co_return attachment;
}

}  // namespace pgwaitprof::collectors::memory
