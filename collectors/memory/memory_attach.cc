// The attach steps, in the order the checks depend on each other; the live checks are
// memory_live_check.cc's.
#include "collectors/memory/memory_attach.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio/use_awaitable.hpp>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "base/regular_file.h"
#include "collectors/kernel.h"
#include "collectors/memory/attach_fields.h"
#include "collectors/memory/memory_live_check.h"
#include "collectors/memory/memory_refusal.h"

namespace pgwaitprof::collectors::memory {
namespace {

// MyBEEntry is static in 13 (the symbol table of a build that was not stripped has it);
// MyProcNumber is 17's.
constexpr std::string_view kSymbols[] = {"ProcGlobal", "MaxBackends", "MyBEEntry", "MyProcPid",
                                         "MyProcNumber"};

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
  places.procs = field_at<uint64_t>(header, shape.proc_hdr_all_procs);
  places.proc_count = field_at<uint32_t>(header, shape.proc_hdr_all_proc_count);
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
    return field_at<int32_t>(ids, size_t{proc} * identity.length + (offset - identity.offset));
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
  if (field_at<int32_t>(mine, shape.status_procpid) != facts.session_pid ||
      field_at<uint32_t>(mine, shape.status_backend_type) != names.backend_type_code("B_BACKEND") ||
      field_at<uint32_t>(mine, shape.status_database_id) != facts.database_oid ||
      field_at<uint32_t>(mine, shape.status_user_id) != facts.role_oid) {
    return refused(
        fmt::format("the session's status entry does not describe backend {}", facts.session_pid),
        kUseActivity);
  }
  return std::nullopt;
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
