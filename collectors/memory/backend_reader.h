// One snapshot of every backend from the server's shared memory: the PgBackendStatus array read
// under its st_changecount protocol, each entry joined to its PGPROC for the wait event. Runs
// on the memory source's own thread; allocates nothing once its buffers have grown.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "base/expected.h"
#include "collectors/memory/pg_layout.h"
#include "collectors/memory/remote_process.h"

namespace pgwaitprof::collectors::memory {

// A backend as the two arrays show it; numbers, named later (PgNames).
struct RawBackend {
  int32_t pid = 0;
  uint32_t backend_type = 0;
  uint32_t state = 0;
  uint32_t wait_event_info = 0;
  uint64_t query_id = 0;
  uint32_t database_id = 0;
  uint32_t user_id = 0;
  int64_t proc_start = 0;  // st_proc_start_timestamp: microseconds since 2000-01-01
  // The state letter of /proc/<pid>/stat for a backend without a wait event (and for every
  // client backend in some snapshots), read by the memory source right after the arrays (the
  // kernel view); 0 when not read.
  char kernel_state = 0;
};

// Where the arrays are, derived and verified when the source attached (memory_attach.h).
struct ArrayPlaces {
  uint64_t procs = 0;  // ProcGlobal->allProcs
  uint32_t proc_count = 0;
  uint64_t statuses = 0;      // BackendStatusArray
  uint32_t status_slots = 0;  // MaxBackends + the layout's status_extra_slots
  uint32_t max_backends = 0;
};

struct ReadCounts {
  uint64_t retried = 0;       // entries read again because they changed during the read
  uint64_t inconsistent = 0;  // entries left out after the retries
  uint64_t unmatched = 0;     // entries whose PGPROC could not be found unambiguously
  uint64_t calls = 0;         // process_vm_readv rounds (one in the steady state)
};

class BackendReader {
 public:
  BackendReader(const PgLayout& layout, ArrayPlaces places, RemoteMemory memory);

  // Fills `into` with every slot in use (st_procpid > 0) that was read consistently and whose
  // PGPROC was found: with 17+'s numbering PGPROC i for slot i; up to 16 for slot
  // i < MaxBackends the PGPROC with that pid and backendId i + 1, for an auxiliary slot the
  // auxiliary PGPROC with that pid. An error means the server's memory
  // could not be read (the server is gone): the caller re-attaches.
  base::Status read(std::vector<RawBackend>& into, ReadCounts& counts);

  const RemoteMemory& memory() const { return memory_; }
  // After a failed read: lets go of the server's memory (see RemoteMemory::release).
  void release_memory() { memory_.release(); }

 private:
  template <typename T>
  T status_field(uint32_t slot, size_t offset) const;
  template <typename T>
  T proc_field(uint32_t proc, size_t offset) const;
  base::Status scan_procs();
  // The steps of read(), in order.
  base::Status copy_arrays(uint32_t regular);
  void find_used_slots(uint32_t regular, bool full);
  void take_consistent(std::vector<RawBackend>& into);
  void remember_known();
  void add_status_reads(uint32_t regular, std::vector<char>& into);
  void add_known_proc_reads();
  base::Status copy_statuses_from_view(uint32_t regular);
  base::Status copy_known_from_view();
  base::Status read_in_rounds(std::vector<RawBackend>& into, ReadCounts& counts);
  base::Status find_pending_procs(bool& scanned, ReadCounts& counts);
  base::Status read_pending(ReadCounts& counts);
  void take_pending(std::vector<RawBackend>& into, ReadCounts& counts);
  base::Status read_again(ReadCounts& counts);
  RawBackend backend_at(uint32_t slot, uint32_t proc) const;
  bool proc_matches(uint32_t slot, int32_t pid, uint32_t proc) const;
  int64_t find_proc(uint32_t slot, int32_t pid) const;

  const PgLayout& layout_;
  ArrayPlaces places_;
  RemoteMemory memory_;
  std::vector<char> statuses_;         // a copy of the status array
  std::vector<char> procs_;            // the PGPROC fields read, at their offsets
  std::vector<int64_t> proc_of_slot_;  // the PGPROC index last found for a slot, -1 if none
  std::vector<uint32_t> used_;         // slots in use this snapshot
  std::vector<uint32_t> pending_;      // of those, the ones not yet taken or left out
  std::vector<uint32_t> again_;        // of those, the ones that changed during a round
  std::vector<std::pair<uint32_t, uint32_t>> known_;  // the last snapshot's slots, PGPROCs
  std::vector<uint64_t> proc_read_in_;  // per PGPROC, the generation_ that read it last
  std::vector<uint64_t> slot_read_in_;  // per slot, the generation_ that read its count again
  uint64_t generation_ = 0;
  std::vector<int32_t> rechecked_;    // st_changecount read again, per pending slot
  std::vector<char> statuses_again_;  // the status array read again
  std::vector<RemoteRead> reads_;
  // Between reads of the whole status array (every kFullEvery-th), only the regular slots up to
  // the highest one in use then (plus a margin) and the auxiliary slots are read: backend ids
  // are handed out lowest first, so a new backend lands there unless more than the margin
  // arrive at once, and then it is seen at the next whole read.
  uint64_t reads_done_ = 0;
  uint32_t regular_end_ = 0;
};

}  // namespace pgwaitprof::collectors::memory
