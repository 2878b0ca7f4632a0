// A server the memory source is attached to (memory_attach.h makes one, memory_live_check.h
// checks it, the sampler reads through it): the verified layout and reader, the postmaster, and
// what the server's catalogs name.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "collectors/memory/backend_reader.h"
#include "collectors/memory/pg_layout.h"
#include "collectors/memory/pg_names.h"
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

}  // namespace pgwaitprof::collectors::memory
