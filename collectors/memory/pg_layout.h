// The shared-memory layout of one PostgreSQL major, as the memory source needs it: where the
// PGPROC array (ProcGlobal->allProcs) and the PgBackendStatus array keep the fields that
// pg_stat_activity reports, and the values of the constants those fields hold. Every number is
// generated from the server's own headers by deploy/generate-layouts.sh into layouts/pgNN.inc,
// one file per major 13-19, checked in; none is typed by hand. A major without one is refused,
// and every layout is checked against the live server before it is used (memory_attach.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace pgwaitprof::collectors::memory {

// A constant as the headers name it (WAIT_EVENT_WAL_WRITE, B_BACKEND, STATE_IDLE, ...).
struct NamedValue {
  uint32_t value = 0;
  std::string_view name;
};

struct PgLayout {
  int major = 0;
  std::string_view version;  // the release whose headers the layout was generated from
  // PROC_HDR (storage/proc.h), the struct ProcGlobal points to.
  size_t proc_hdr_size = 0;
  size_t proc_hdr_all_procs = 0;
  size_t proc_hdr_all_proc_count = 0;
  // PGPROC: one per backend, auxiliary process and prepared transaction (allProcCount counts
  // the first two only: the prepared transactions' PGPROCs follow them, outside the count).
  size_t proc_size = 0;
  size_t proc_pid = 0;
  // procLatch.owner_pid: the pid while a process uses the PGPROC, 0 once it exited (DisownLatch);
  // a free PGPROC keeps its last pid and backendId, so only this tells a live one.
  size_t proc_latch_owner = 0;
  size_t proc_wait_event_info = 0;
  // How a status slot finds its PGPROC. 17+: slot i is PGPROC i (the status array is indexed by
  // the PGPROC's number, MyProcNumber). 13-16: a regular backend's slot is its PGPROC's
  // backendId - 1, an auxiliary process's slot is MaxBackends + its AuxProcType.
  bool status_by_proc_number = false;
  size_t proc_backend_id = 0;  // 13-16 only
  // PgBackendStatus (utils/backend_status.h; 13: pgstat.h): what pg_stat_activity reads
  // besides the wait.
  size_t status_size = 0;
  size_t status_changecount = 0;
  size_t status_procpid = 0;
  size_t status_backend_type = 0;
  size_t status_proc_start = 0;
  size_t status_database_id = 0;
  size_t status_user_id = 0;
  size_t status_state = 0;
  std::optional<size_t> status_query_id;  // 14+
  // The status array has MaxBackends + status_extra_slots slots (13-16: NUM_AUXPROCTYPES,
  // 17+: NUM_AUXILIARY_PROCS); allProcs has MaxBackends regular PGPROCs, then auxiliary_procs
  // for the auxiliary processes, then the prepared transactions'.
  int status_extra_slots = 0;
  int auxiliary_procs = 0;
  // Wait classes whose event id is not an enum of the wait-event headers.
  uint32_t wait_class_lwlock = 0;
  uint32_t wait_class_lock = 0;
  // The buffer class: "BufferPin" with one event up to 18, "Buffer" with several in 19.
  uint32_t wait_class_buffer = 0;
  std::string_view buffer_class_type;
  uint32_t wait_class_extension = 0;
  int first_user_tranche = 0;                  // LWLock tranches from here on belong to extensions
  std::vector<NamedValue> wait_events;         // WAIT_EVENT_*, the value is wait_event_info
  std::vector<NamedValue> tranches;            // LWTRANCHE_*, the built-in LWLock tranches
  std::vector<NamedValue> lock_tags;           // LOCKTAG_*, the heavyweight lock's event id
  std::vector<NamedValue> backend_types;       // B_*, st_backendType
  std::vector<NamedValue> states;              // STATE_*, st_state
  std::vector<NamedValue> individual_lwlocks;  // lwlocknames.h, the name without "Lock"
};

// The bytes of a PGPROC that say which process it is (pid, the latch's owner and, up to 16,
// backendId), as one range: one read takes them all.
struct ByteRange {
  size_t offset = 0;
  size_t length = 0;
};
ByteRange proc_identity(const PgLayout& layout);

// The layouts of every supported major.
const std::vector<PgLayout>& pg_layouts();
// The layout of a major (server_version_num / 10000), or null.
const PgLayout* find_pg_layout(int major);

}  // namespace pgwaitprof::collectors::memory
