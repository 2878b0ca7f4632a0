// The attach steps, in the order the checks depend on each other.
#include "collectors/memory/memory_attach.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "collectors/kernel.h"

namespace pgwaitprof::collectors::memory {
namespace {

constexpr std::string_view kSymbols[] = {"ProcGlobal", "MaxBackends", "MyBEEntry", "MyProcPid"};
constexpr int kVerifyAttempts = 3;
constexpr std::string_view kUseActivity = "use --source activity";
constexpr std::string_view kNeedRights =
    "run as root, as the server's OS user or with CAP_SYS_PTRACE, or use --source activity";

struct ServerFacts {
  int32_t session_pid = 0;
  std::string data_directory;
  int64_t start_epoch = 0;
  int version = 0;
  int max_connections = 0;
  int max_prepared = 0;
  uint32_t database_oid = 0;
  uint32_t role_oid = 0;
};

template <typename Integer>
bool parse_integer(std::string_view text, Integer& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

base::Error refused(std::string_view what, std::string_view hint) {
  return base::Error{fmt::format("memory source refused: {}; {}", what, hint)};
}

asio::awaitable<base::Expected<ServerFacts>> server_facts(PgSession& session) {
  auto outcome = co_await session.execute(
      "SELECT pg_backend_pid(), current_setting('data_directory'),"
      " extract(epoch FROM pg_postmaster_start_time())::bigint,"
      " current_setting('server_version_num')::int, current_setting('max_connections')::int,"
      " current_setting('max_prepared_transactions')::int,"
      " (SELECT oid FROM pg_database WHERE datname = current_database()),"
      " (SELECT oid FROM pg_roles WHERE rolname = current_user)");
  if (!outcome.ok()) {
    co_return refused(outcome.error->message, "the sampling role needs pg_monitor");
  }
  const PGresult* result = outcome.result.get();
  ServerFacts facts;
  facts.data_directory = cell(result, 0, 1);
  const bool parsed = parse_integer(cell(result, 0, 0), facts.session_pid) &&
                      parse_integer(cell(result, 0, 2), facts.start_epoch) &&
                      parse_integer(cell(result, 0, 3), facts.version) &&
                      parse_integer(cell(result, 0, 4), facts.max_connections) &&
                      parse_integer(cell(result, 0, 5), facts.max_prepared) &&
                      parse_integer(cell(result, 0, 6), facts.database_oid) &&
                      parse_integer(cell(result, 0, 7), facts.role_oid);
  if (!parsed) co_return refused("the server's settings could not be read", kUseActivity);
  co_return facts;
}

std::string proc_stat(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text;
  std::getline(in, text);
  return text;
}

// The fields of a /proc/<pid>/stat line after the command name: [19] is the start time in clock
// ticks after boot.
std::vector<std::string> stat_fields(const std::string& text) {
  const size_t paren = text.rfind(')');
  std::vector<std::string> fields;
  if (paren == std::string::npos) return fields;
  std::istringstream rest(text.substr(paren + 1));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

// When `pid` started, in seconds since the epoch; 0 when unknown.
int64_t start_epoch(const std::vector<std::string>& fields) {
  std::ifstream in("/proc/stat");
  int64_t boot = 0;
  for (std::string key; in >> key;) {
    if (key == "btime") {
      in >> boot;
      break;
    }
  }
  int64_t ticks = 0;
  if (fields.size() < 20 || boot == 0 || !parse_integer(fields[19], ticks)) return 0;
  return boot + ticks / sysconf(_SC_CLK_TCK);
}

// The postmaster that serves our session: our backend's parent on this host, whose working
// directory is the server's data directory and whose start is the server's start. Nothing is
// read from the data directory itself, so CAP_SYS_PTRACE is the only right this needs.
base::Expected<pid_t> find_postmaster(const ServerFacts& facts) {
  const auto not_here = [&](std::string_view why) {
    return refused(fmt::format("the server does not run on this host ({})", why),
                   "the memory source reads a server on the same host and in the same PID "
                   "namespace only; use --source activity for a remote target");
  };
  const auto parent = parse_parent_pid(proc_stat(facts.session_pid));
  if (!parent || *parent <= 1) {
    return not_here(fmt::format("its backend {} is not a process here", facts.session_pid));
  }
  const pid_t postmaster = *parent;
  std::error_code error;
  const auto directory =
      std::filesystem::read_symlink(fmt::format("/proc/{}/cwd", postmaster), error);
  if (error) {
    return refused(fmt::format("could not read the working directory of process {}: {}", postmaster,
                               error.message()),
                   error == std::errc::permission_denied ? kNeedRights : kUseActivity);
  }
  std::error_code ignored;
  if (directory != std::filesystem::path(facts.data_directory) &&
      !std::filesystem::equivalent(directory, facts.data_directory, ignored)) {
    return not_here(fmt::format("the parent {} of its backend {} runs in \"{}\", not in \"{}\"",
                                postmaster, facts.session_pid, directory.string(),
                                facts.data_directory));
  }
  // The server's own record of its postmaster (pid on line 1, start time on line 3, both
  // written at start); where the file cannot be read, the process's start time from /proc,
  // which a step of the wall clock since boot can move (seen here: 38 s on a virtual machine).
  std::ifstream lock_file(std::filesystem::path(facts.data_directory) / "postmaster.pid");
  std::string pid_line, directory_line, start_line;
  if (std::getline(lock_file, pid_line) && std::getline(lock_file, directory_line) &&
      std::getline(lock_file, start_line)) {
    pid_t recorded = 0;
    int64_t started = 0;
    if (!parse_integer(pid_line, recorded) || recorded != postmaster ||
        !parse_integer(start_line, started) || std::llabs(started - facts.start_epoch) > 2) {
      return not_here(fmt::format("\"{}/postmaster.pid\" names another postmaster than {}",
                                  facts.data_directory, postmaster));
    }
  } else if (std::llabs(start_epoch(stat_fields(proc_stat(postmaster))) - facts.start_epoch) > 2) {
    return not_here(fmt::format("process {} did not start when the server did", postmaster));
  }
  return postmaster;
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

using Row = std::tuple<std::string, std::string, std::string, std::string>;  // type state waits

Row memory_row(const Attachment& attachment, const RawBackend& backend) {
  const auto wait = attachment.names->wait_event(backend.wait_event_info);
  return {std::string(attachment.names->backend_type(backend.backend_type)),
          std::string(attachment.names->state(backend.state)), std::string(wait.type),
          std::string(wait.name)};
}

// A read in which our own session has settled into its wait for the next command: between a
// result and that wait it is idle without a wait event for some microseconds. At most 50 reads,
// 1 ms apart (at attach time only).
base::Status read_settled(const Attachment& attachment, std::vector<RawBackend>& backends) {
  const uint32_t client_read = [&] {
    for (const auto& event : attachment.layout->wait_events) {
      if (event.name == "WAIT_EVENT_CLIENT_READ") return event.value;
    }
    return 0U;
  }();
  ReadCounts counts;
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (auto error = attachment.reader->read(backends, counts)) return error;
    for (const auto& backend : backends) {
      if (backend.pid == attachment.session_pid && backend.wait_event_info == client_read) {
        return std::nullopt;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::nullopt;  // the comparison says what it read
}

// One comparison of memory (read before and after) with pg_stat_activity (between them); ""
// when they agree, else the first difference.
asio::awaitable<base::Expected<std::string>> compare_once(PgSession& session,
                                                          Attachment& attachment) {
  std::vector<RawBackend> before;
  std::vector<RawBackend> after;
  if (auto error = read_settled(attachment, before)) co_return unreadable(*error);
  auto outcome = co_await session.execute(
      "SELECT pid, backend_type, coalesce(state, ''), coalesce(wait_event_type, ''),"
      " coalesce(wait_event, '') FROM pg_stat_activity");
  if (!outcome.ok()) co_return refused(outcome.error->message, kUseActivity);
  if (auto error = read_settled(attachment, after)) co_return unreadable(*error);
  std::map<int32_t, Row> first;
  for (const auto& backend : before) first[backend.pid] = memory_row(attachment, backend);
  std::map<int32_t, std::pair<Row, uint32_t>> stable;  // in both reads, unchanged
  std::set<int32_t> seen;
  for (const auto& backend : after) {
    seen.insert(backend.pid);
    const auto row = memory_row(attachment, backend);
    if (const auto it = first.find(backend.pid); it != first.end() && it->second == row) {
      stable[backend.pid] = {row, backend.backend_type};
    }
  }
  // Our own session is idle and waits for us in both reads: a state or wait-event offset that
  // is off shows here even when no other client is connected.
  const Row ours{"client backend", "idle", "Client", "ClientRead"};
  if (!stable.contains(attachment.session_pid) || stable.at(attachment.session_pid).first != ours) {
    const auto it = first.find(attachment.session_pid);
    const Row read = it == first.end() ? Row{} : it->second;
    co_return fmt::format(
        "the sampler's own idle session reads as \"{}\" \"{}\" \"{} {}\" in memory",
        std::get<0>(read), std::get<1>(read), std::get<2>(read), std::get<3>(read));
  }
  const uint32_t worker = attachment.names->backend_type_code("B_BG_WORKER");
  const PGresult* result = outcome.result.get();
  size_t matched = 0;
  std::set<int32_t> listed;
  for (int index = 0; index < PQntuples(result); ++index) {
    int32_t pid = 0;
    parse_integer(cell(result, index, 0), pid);
    listed.insert(pid);
    const Row activity{cell(result, index, 1), cell(result, index, 2), cell(result, index, 3),
                       cell(result, index, 4)};
    const auto it = stable.find(pid);
    if (it == stable.end()) {
      if (!first.contains(pid) && !seen.contains(pid)) {
        co_return fmt::format("pid {} ({}) is in pg_stat_activity but not in memory", pid,
                              std::get<0>(activity));
      }
      continue;  // it changed while we looked
    }
    auto [row, code] = it->second;
    if (code == worker && std::get<0>(row) != std::get<0>(activity)) {
      attachment.worker_types[pid] = std::get<0>(activity);
      std::get<0>(row) = std::get<0>(activity);
    }
    if (pid == attachment.session_pid) {  // ours ran the query: only its type can be compared
      std::get<1>(row) = std::get<1>(activity);
      std::get<2>(row) = std::get<2>(activity);
      std::get<3>(row) = std::get<3>(activity);
    }
    if (row != activity) {
      co_return fmt::format(
          "pid {}: memory says \"{}\" \"{}\" \"{} {}\", pg_stat_activity \"{}\" \"{}\" \"{} {}\"",
          pid, std::get<0>(row), std::get<1>(row), std::get<2>(row), std::get<3>(row),
          std::get<0>(activity), std::get<1>(activity), std::get<2>(activity),
          std::get<3>(activity));
    }
    ++matched;
  }
  for (const auto& [pid, entry] : stable) {
    if (!listed.contains(pid))
      co_return fmt::format("pid {} is in memory but not in pg_stat_activity", pid);
  }
  if (!stable.contains(attachment.session_pid) || matched < 2) {
    co_return fmt::format("only {} backends could be compared", matched);
  }
  co_return std::string();
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

std::string missing_layout_message(int major) {
  return fmt::format(
      "memory source refused: this build has no shared-memory layout for PostgreSQL {}; install "
      "postgresql-server-dev-{} and rebuild, or use --source activity",
      major, major);
}

asio::awaitable<base::Expected<Attachment>> attach(PgSession& session, const PgLayout* layout) {
  auto facts = co_await server_facts(session);
  if (!facts) co_return facts.error();
  Attachment attachment;
  attachment.layout = layout ? layout : find_pg_layout(facts->version / 10000);
  if (attachment.layout == nullptr)
    co_return base::Error{missing_layout_message(facts->version / 10000)};
  const PgLayout& shape = *attachment.layout;
  attachment.names = std::make_unique<PgNames>(shape);
  attachment.session_pid = facts->session_pid;
  auto postmaster = find_postmaster(*facts);
  if (!postmaster) co_return postmaster.error();
  attachment.postmaster = *postmaster;
  auto image = read_executable(*postmaster, kSymbols);
  if (!image) co_return unreadable(image.error());

  // ProcGlobal and MaxBackends, from the postmaster's data.
  uint64_t proc_global = 0;
  int32_t max_backends = 0;
  if (auto error = read_globals(*postmaster, *image,
                                {{"ProcGlobal", &proc_global}, {"MaxBackends", &max_backends}},
                                {sizeof proc_global, sizeof max_backends})) {
    co_return *error;
  }
  auto maps = read_maps(*postmaster);
  if (!maps) co_return unreadable(maps.error());
  const Mapping* shared = find_mapping(*maps, proc_global, shape.proc_hdr_size);
  if (shared == nullptr || !shared->shared() || !shared->readable()) {
    co_return refused("ProcGlobal does not point into the server's shared memory", kUseActivity);
  }
  const RemoteMemory shm(*postmaster, {*shared});
  std::vector<char> header(shape.proc_hdr_size);
  if (auto error = shm.read(proc_global, header.data(), header.size()))
    co_return unreadable(*error);
  ArrayPlaces places;
  places.procs = field<uint64_t>(header, shape.proc_hdr_all_procs);
  places.proc_count = field<uint32_t>(header, shape.proc_hdr_all_proc_count);
  places.max_backends = static_cast<uint32_t>(max_backends);
  places.status_slots = places.max_backends + static_cast<uint32_t>(shape.aux_proc_types);
  if (max_backends < facts->max_connections ||
      places.proc_count != places.max_backends + static_cast<uint32_t>(shape.auxiliary_procs) +
                               static_cast<uint32_t>(facts->max_prepared) ||
      !shared->contains(places.procs, uint64_t{places.proc_count} * shape.proc_size)) {
    co_return refused(fmt::format("the PGPROC array does not add up (MaxBackends {}, {} PGPROCs, "
                                  "max_connections {})",
                                  max_backends, places.proc_count, facts->max_connections),
                      kUseActivity);
  }

  // The status array, from our own backend: its MyBEEntry points at slot backendId - 1.
  uint64_t my_entry = 0;
  int32_t my_pid = 0;
  if (auto error = read_globals(facts->session_pid, *image,
                                {{"MyBEEntry", &my_entry}, {"MyProcPid", &my_pid}},
                                {sizeof my_entry, sizeof my_pid})) {
    co_return *error;
  }
  if (my_pid != facts->session_pid) {
    co_return refused(fmt::format("MyProcPid of backend {} reads {}", facts->session_pid, my_pid),
                      kUseActivity);
  }
  // A PGPROC keeps the pid and backendId of the last process that used it; the one in use has
  // its latch owned by that pid (an exited backend's PGPROC with the session's pid, reused
  // since, was taken for it before).
  const auto identity = proc_identity(shape);
  std::vector<char> ids(size_t{places.max_backends} * identity.length);
  std::vector<RemoteRead> reads;
  for (uint32_t proc = 0; proc < places.max_backends; ++proc) {
    const uint64_t at = places.procs + uint64_t{proc} * shape.proc_size + identity.offset;
    reads.push_back({at, ids.data() + size_t{proc} * identity.length, identity.length});
  }
  if (auto error = shm.read(reads)) co_return unreadable(*error);
  int32_t backend_id = 0;
  for (uint32_t proc = 0; proc < places.max_backends; ++proc) {
    const size_t at = size_t{proc} * identity.length;
    auto id = [&](size_t offset) { return field<int32_t>(ids, at + (offset - identity.offset)); };
    if (id(shape.proc_pid) != facts->session_pid ||
        id(shape.proc_latch_owner) != facts->session_pid) {
      continue;
    }
    if (backend_id != 0) co_return refused("two PGPROCs carry the session's pid", kUseActivity);
    backend_id = id(shape.proc_backend_id);
  }
  if (backend_id < 1 || backend_id > max_backends ||
      my_entry < uint64_t(backend_id - 1) * shape.status_size) {
    co_return refused(fmt::format("the session's PGPROC has backend id {}", backend_id),
                      kUseActivity);
  }
  places.statuses = my_entry - uint64_t(backend_id - 1) * shape.status_size;
  if (!shared->contains(places.statuses, uint64_t{places.status_slots} * shape.status_size)) {
    co_return refused("the backend status array is not inside the server's shared memory",
                      kUseActivity);
  }
  std::vector<char> mine(shape.status_size);
  if (auto error = shm.read(my_entry, mine.data(), mine.size())) co_return unreadable(*error);
  if (field<int32_t>(mine, shape.status_procpid) != facts->session_pid ||
      field<uint32_t>(mine, shape.status_backend_type) !=
          attachment.names->backend_type_code("B_BACKEND") ||
      field<uint32_t>(mine, shape.status_database_id) != facts->database_oid ||
      field<uint32_t>(mine, shape.status_user_id) != facts->role_oid) {
    co_return refused(
        fmt::format("the session's status entry does not describe backend {}", facts->session_pid),
        kUseActivity);
  }
  // Reads through a read-only mapping of the segment when the kernel allows it (root,
  // CAP_CHECKPOINT_RESTORE): no system call a tick. Otherwise process_vm_readv, the same reads.
  RemoteMemory memory = shm;
  const auto not_mapped = memory.map_shared();
  attachment.reader = std::make_unique<BackendReader>(shape, places, std::move(memory));

  std::string mismatch;
  for (int attempt = 0; attempt < kVerifyAttempts; ++attempt) {
    auto compared = co_await compare_once(session, attachment);
    if (!compared) co_return compared.error();
    mismatch = *compared;
    if (mismatch.empty()) break;
  }
  if (!mismatch.empty()) {
    co_return refused(
        fmt::format("the shared-memory layout of PostgreSQL {} does not match this server ({})",
                    shape.major, mismatch),
        kUseActivity);
  }
  if (auto error = co_await read_database_names(session, attachment.databases)) {
    co_return refused(error->message, kUseActivity);
  }
  attachment.description = fmt::format(
      "postmaster={} pgprocs={} status_slots={} max_backends={} layout={} reads=\"{}\"",
      attachment.postmaster, places.proc_count, places.status_slots, places.max_backends,
      shape.major, not_mapped ? "process_vm_readv (" + not_mapped->message + ")" : "mapped");
  co_return attachment;
}

}  // namespace pgwaitprof::collectors::memory
