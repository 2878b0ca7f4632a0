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
#include <string>

#include "base/expected.h"
#include "collectors/memory/attachment.h"
#include "collectors/memory/backend_reader.h"
#include "collectors/memory/memory_refusal.h"
#include "collectors/memory/pg_layout.h"
#include "collectors/memory/pg_names.h"
#include "collectors/pg_session.h"
#include "collectors/server_processes.h"

namespace pgwaitprof::collectors::memory {

// `layout` replaces the build's table for the server's major when given (the tests check that a
// wrong table is refused).
asio::awaitable<base::Expected<Attachment>> attach(PgSession& session,
                                                   const PgLayout* layout = nullptr);

// Fills `databases` (oid -> datname) from pg_database: at attach, and again when a snapshot
// shows an oid it does not have.
asio::awaitable<std::optional<PgError>> read_database_names(
    PgSession& session, std::map<uint32_t, std::string>& databases);

// Steps of finding the postmaster, pure. When a process started, in seconds since the epoch,
// from its /proc/<pid>/stat line, /proc/stat (btime) and the clock ticks per second; 0 when
// unknown.
int64_t process_start_epoch(std::string_view stat, std::string_view system_stat,
                            int64_t clock_ticks);
// The server's own record of its postmaster (collectors/server_processes.h).
using collectors::check_lock_file;
using collectors::LockFile;

}  // namespace pgwaitprof::collectors::memory
