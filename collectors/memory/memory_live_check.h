// The live checks of an attachment (attachment.h, made by memory_attach.h): what was derived from
// the server's memory is compared with what the server itself says, before the memory source takes
// a tick. The PGPROC stride against the live processes' pids, the sampler's own session in
// pg_sleep, and every backend against pg_stat_activity; a wrong layout fails at least one, and each
// failure is a refusal in one line (memory_refusal.h).
#pragma once

#include <asio/awaitable.hpp>
#include <cstdint>
#include <set>
#include <vector>

#include "base/expected.h"
#include "collectors/memory/attachment.h"
#include "collectors/memory/backend_reader.h"
#include "collectors/memory/pg_layout.h"
#include "collectors/memory/remote_process.h"
#include "collectors/pg_session.h"

namespace pgwaitprof::collectors::memory {

// The live processes' pids found in the PGPROC array where the layout puts them, sizeof(PGPROC)
// apart.
asio::awaitable<base::Status> check_stride(PgSession& session, const PgLayout& shape,
                                           const ArrayPlaces& places, const RemoteMemory& shm);

// The session in pg_sleep reads as Timeout | PgSleep and active in memory (the wait event's and
// the state's offsets and values).
asio::awaitable<base::Status> check_sleeping_session(PgSession& session,
                                                     const Attachment& attachment);

// Every backend in memory against one pg_stat_activity snapshot taken between two reads (a
// few attempts: a backend may change between the reads); learns the background workers' types
// into `attachment`.
asio::awaitable<base::Status> verify_against_activity(PgSession& session, Attachment& attachment);

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

}  // namespace pgwaitprof::collectors::memory
