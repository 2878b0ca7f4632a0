// Attaching the memory source to a server: from the target's libpq session to a verified
// BackendReader. Each address is derived (our backend's parent process, the executable's dynamic
// symbols, ProcGlobal, the session backend's own MyBEEntry) and checked before it is used: the
// postmaster must be our session backend's parent, every array must lie inside the shared mapping,
// and the backends read from memory must match one pg_stat_activity snapshot taken between two
// reads. Any failed check is a refusal, one line that says what to do; the source never guesses.
#pragma once

#include <asio/awaitable.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/expected.h"
#include "collectors/memory/backend_reader.h"
#include "collectors/memory/memory_refusal.h"
#include "collectors/memory/pg_layout.h"
#include "collectors/memory/pg_names.h"
#include "collectors/pg_session.h"
#include "collectors/server_processes.h"

namespace pgwaitprof::collectors::memory {

struct Attachment {
  const PgLayout* layout = nullptr;
  std::unique_ptr<PgNames> names;
  std::unique_ptr<BackendReader> reader;
  pid_t postmaster = 0;  // this host's pid
  // The server's pids and paths as this host sees them (a server in a container or a chroot).
  ServerProcesses processes;
  int32_t session_pid = 0;  // the sampler's own backend (the server's pid), left out of snapshots
  std::map<uint32_t, std::string> databases;    // pg_database oid -> datname
  std::map<int32_t, std::string> worker_types;  // background worker pid -> backend_type
  std::string description;  // for the log: "postmaster 123, 147 PGPROCs, 128 status slots"
  // By which right this process reads the server's memory: "as root", "as the server's OS
  // user" or "with CAP_SYS_PTRACE".
  std::string rights;
};

// `layout` replaces the build's table for the server's major when given (the tests check that a
// wrong table is refused).
asio::awaitable<base::Expected<Attachment>> attach(PgSession& session,
                                                   const PgLayout* layout = nullptr);

// Fills `databases` (oid -> datname) from pg_database: at attach, and again when a snapshot
// shows an oid it does not have.
asio::awaitable<std::optional<PgError>> read_database_names(
    PgSession& session, std::map<uint32_t, std::string>& databases);

// The live check of the PGPROC stride, pure: where the live processes' pids sit in the PGPROC
// array's bytes as a PGPROC in use shows them (at the layout's pid offset, with the same number
// at its latch owner's; a pid in more than one place is left out), and the greatest common
// divisor of their distances, which is sizeof(PGPROC) when two of them are side by side (the
// auxiliary processes are).
struct StrideCheck {
  size_t found = 0;     // live processes found
  int64_t stride = 0;   // the spacing measured, in bytes
  bool aligned = true;  // each found at the pid's offset of a PGPROC of the layout's size
};
StrideCheck measure_stride(const std::vector<char>& procs, const PgLayout& layout,
                           const std::set<int32_t>& pids);

// Steps of finding the postmaster, pure. When a process started, in seconds since the epoch,
// from its /proc/<pid>/stat line, /proc/stat (btime) and the clock ticks per second; 0 when
// unknown.
int64_t process_start_epoch(std::string_view stat, std::string_view system_stat,
                            int64_t clock_ticks);
// The server's own record of its postmaster (collectors/server_processes.h).
using collectors::check_lock_file;
using collectors::LockFile;

}  // namespace pgwaitprof::collectors::memory
