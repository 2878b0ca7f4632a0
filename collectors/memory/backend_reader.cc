// The snapshot read. Per tick, in the steady state, one system call (or none, through a view of
// the segment): the status array, the PGPROC (pid, backendId, latch owner, wait_event_info) of each
// slot in use in the last snapshot, the status array (or just those slots' st_changecount) again. A
// new slot, an entry whose count was odd or changed between the two copies, or a PGPROC that no
// longer matches its slot goes through rounds of its own: its PGPROC found (a pass through all
// PGPROCs' pids), its fields and st_changecount read again, at most three times. Nothing is ever
// sampled from an entry that failed these checks.
#include "collectors/memory/backend_reader.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace pgwaitprof::collectors::memory {
namespace {
constexpr int kRetries = 3;
constexpr uint64_t kFullEvery = 16;
constexpr uint32_t kMargin = 16;
// Above this many slots in use, the second read takes the whole PGPROC array and the status
// array again in one piece each: the kernel pins pages once per iovec, so three small iovecs a
// backend cost more than copying the arrays (1,000 backends: ~1.5 ms against ~0.2 ms).
constexpr size_t kBulkAbove = 64;
}  // namespace

BackendReader::BackendReader(const PgLayout& layout, ArrayPlaces places, RemoteMemory memory)
    : layout_(layout),
      places_(places),
      memory_(std::move(memory)),
      statuses_(size_t{places.status_slots} * layout.status_size),
      procs_(size_t{places.proc_count} * layout.proc_size),
      proc_of_slot_(places.status_slots, -1),
      proc_read_in_(places.proc_count, 0),
      slot_read_in_(places.status_slots, 0) {}

template <typename T>
T BackendReader::status_field(uint32_t slot, size_t offset) const {
  T value;
  std::memcpy(&value, statuses_.data() + size_t{slot} * layout_.status_size + offset, sizeof(T));
  return value;
}

template <typename T>
T BackendReader::proc_field(uint32_t proc, size_t offset) const {
  T value;
  std::memcpy(&value, procs_.data() + size_t{proc} * layout_.proc_size + offset, sizeof(T));
  return value;
}

bool BackendReader::proc_matches(uint32_t slot, int32_t pid, uint32_t proc) const {
  if (proc_field<int32_t>(proc, layout_.proc_pid) != pid ||
      proc_field<int32_t>(proc, layout_.proc_latch_owner) != pid) {
    return false;
  }
  if (layout_.status_by_proc_number) return proc == slot;
  if (slot < places_.max_backends) {
    return proc < places_.max_backends &&
           proc_field<int32_t>(proc, layout_.proc_backend_id) == static_cast<int32_t>(slot + 1);
  }
  return proc >= places_.max_backends &&
         proc < places_.max_backends + static_cast<uint32_t>(layout_.auxiliary_procs);
}

// The one PGPROC of the slot's pid, or -1 when there is none or more than one.
int64_t BackendReader::find_proc(uint32_t slot, int32_t pid) const {
  if (layout_.status_by_proc_number) {
    return slot < places_.proc_count && proc_matches(slot, pid, slot) ? int64_t{slot} : -1;
  }
  int64_t found = -1;
  for (uint32_t proc = 0; proc < places_.proc_count; ++proc) {
    if (!proc_matches(slot, pid, proc)) continue;
    if (found >= 0) return -1;
    found = proc;
  }
  return found;
}

base::Status BackendReader::scan_procs() {
  reads_.clear();
  const auto ids = proc_identity(layout_);
  for (uint32_t proc = 0; proc < places_.proc_count; ++proc) {
    const size_t at = size_t{proc} * layout_.proc_size + ids.offset;
    reads_.push_back({places_.procs + at, procs_.data() + at, ids.length});
  }
  return memory_.read(reads_);
}

// The status array's slots to read: the regular ones below `regular` and the auxiliary ones.
void BackendReader::add_status_reads(uint32_t regular, std::vector<char>& into) {
  const size_t aux_at = size_t{places_.max_backends} * layout_.status_size;
  if (regular == places_.max_backends) {
    reads_.push_back({places_.statuses, into.data(), into.size()});
    return;
  }
  reads_.push_back({places_.statuses, into.data(), size_t{regular} * layout_.status_size});
  reads_.push_back({places_.statuses + aux_at, into.data() + aux_at, into.size() - aux_at});
}

// The PGPROC of each slot in use in the last snapshot, from its pid to its wait_event_info in one
// piece (the kernel pins pages per piece), or the whole array when there were many.
void BackendReader::add_known_proc_reads() {
  if (known_.size() > kBulkAbove) {
    reads_.push_back({places_.procs, procs_.data(), procs_.size()});
    std::fill(proc_read_in_.begin(), proc_read_in_.end(), generation_);
    return;
  }
  const auto ids = proc_identity(layout_);
  const size_t first = std::min(ids.offset, layout_.proc_wait_event_info);
  const size_t end = std::max(ids.offset + ids.length, layout_.proc_wait_event_info + 4);
  for (const auto& [slot, proc] : known_) {
    if (proc_read_in_[proc] == generation_) continue;
    proc_read_in_[proc] = generation_;
    const size_t at = size_t{proc} * layout_.proc_size + first;
    reads_.push_back({places_.procs + at, procs_.data() + at, end - first});
  }
}

// Through a view, the status array's slots as add_status_reads() would read them, but a free
// slot costs one load (its st_procpid) instead of a copy of the whole entry, and so does one in
// use that has not changed.
base::Status BackendReader::copy_statuses_from_view(uint32_t regular) {
  for (uint32_t slot = 0; slot < places_.status_slots; ++slot) {
    if (slot == regular) slot = places_.max_backends;
    if (slot >= places_.status_slots) break;
    const size_t at = size_t{slot} * layout_.status_size;
    const char* entry = memory_.view_at(places_.statuses + at, layout_.status_size);
    if (entry == nullptr) return base::Error{"a status entry is outside the view"};
    int32_t pid = 0;
    std::memcpy(&pid, entry + layout_.status_procpid, sizeof pid);
    if (pid > 0) {
      std::atomic_thread_fence(std::memory_order_acquire);
      // An entry whose count (even) and pid are those of the copy held from the last snapshot
      // has not been written since (the writer makes the count odd before it changes a field):
      // the copy stands, and the count is checked again after the PGPROCs as for any entry.
      int32_t count = 0;
      std::memcpy(&count, entry + layout_.status_changecount, sizeof count);
      if (count % 2 == 0 && count == status_field<int32_t>(slot, layout_.status_changecount) &&
          pid == status_field<int32_t>(slot, layout_.status_procpid)) {
        continue;
      }
      std::memcpy(statuses_.data() + at, entry, layout_.status_size);
    } else {
      std::memset(statuses_.data() + at + layout_.status_procpid, 0, sizeof pid);
    }
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  return std::nullopt;
}

// Through a view, the same as the system call's pieces, but only the words needed: each known
// PGPROC's pid and backendId and its wait_event_info, then each known slot's st_changecount.
base::Status BackendReader::copy_known_from_view() {
  const auto identity = proc_identity(layout_);
  for (const auto& [slot, proc] : known_) {
    const size_t at = size_t{proc} * layout_.proc_size;
    const char* ids = memory_.view_at(places_.procs + at + identity.offset, identity.length);
    const char* wait =
        memory_.view_at(places_.procs + at + layout_.proc_wait_event_info, sizeof(uint32_t));
    if (ids == nullptr || wait == nullptr) return base::Error{"a PGPROC is outside the view"};
    std::memcpy(procs_.data() + at + identity.offset, ids, identity.length);
    std::memcpy(procs_.data() + at + layout_.proc_wait_event_info, wait, sizeof(uint32_t));
    proc_read_in_[proc] = generation_;
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  for (const auto& [slot, proc] : known_) {
    const size_t at = size_t{slot} * layout_.status_size + layout_.status_changecount;
    const char* count = memory_.view_at(places_.statuses + at, sizeof(int32_t));
    if (count == nullptr) return base::Error{"a status entry is outside the view"};
    std::memcpy(statuses_again_.data() + at, count, sizeof(int32_t));
    slot_read_in_[slot] = generation_;
  }
  return std::nullopt;
}

base::Status BackendReader::read(std::vector<RawBackend>& into, ReadCounts& counts) {
  into.clear();
  const bool full = reads_done_++ % kFullEvery == 0;
  const uint32_t regular =
      full ? places_.max_backends : std::min(places_.max_backends, regular_end_ + kMargin);
  ++generation_;
  if (auto error = copy_arrays(regular)) return error;
  ++counts.calls;
  find_used_slots(regular, full);
  take_consistent(into);
  auto status = read_in_rounds(into, counts);
  remember_known();
  return status;
}

// The status array, the PGPROCs that its slots had in the last snapshot, the status array (or
// their counts) again, in this order: through the view with fences between the pieces, or in
// one system call (the kernel copies the pieces one after the other).
base::Status BackendReader::copy_arrays(uint32_t regular) {
  statuses_again_.resize(statuses_.size());
  if (memory_.mapped()) {
    if (auto error = memory_.alive()) return error;
    if (auto error = copy_statuses_from_view(regular)) return error;
    return copy_known_from_view();
  }
  reads_.clear();
  add_status_reads(regular, statuses_);
  add_known_proc_reads();
  for (const auto& known : known_) slot_read_in_[known.first] = generation_;
  add_status_reads(regular, statuses_again_);
  return memory_.read(reads_);
}

// The slots in use (a pid in the first copy); a full read also learns where the regular slots
// in use end, so that the reads between full ones stop a margin beyond.
void BackendReader::find_used_slots(uint32_t regular, bool full) {
  used_.clear();
  for (uint32_t slot = 0; slot < places_.status_slots; ++slot) {
    if (slot == regular) slot = places_.max_backends;
    if (slot >= places_.status_slots) break;
    if (status_field<int32_t>(slot, layout_.status_procpid) > 0) used_.push_back(slot);
  }
  if (!full) return;
  regular_end_ = 0;
  for (const uint32_t slot : used_) {
    if (slot < places_.max_backends) regular_end_ = slot + 1;
  }
}

// An entry is taken from the copies when its count was even and the same in both copies and its
// PGPROC, read between them, still matches; the rest wait in pending_ for the rounds.
void BackendReader::take_consistent(std::vector<RawBackend>& into) {
  pending_.clear();
  for (const uint32_t slot : used_) {
    const auto proc = proc_of_slot_[slot];
    const auto before = status_field<int32_t>(slot, layout_.status_changecount);
    int32_t after = 0;
    std::memcpy(
        &after,
        statuses_again_.data() + size_t{slot} * layout_.status_size + layout_.status_changecount,
        sizeof after);
    const auto pid = status_field<int32_t>(slot, layout_.status_procpid);
    if (proc >= 0 && proc_read_in_[static_cast<size_t>(proc)] == generation_ &&
        slot_read_in_[slot] == generation_ && before % 2 == 0 && before == after &&
        proc_matches(slot, pid, static_cast<uint32_t>(proc))) {
      into.push_back(backend_at(slot, static_cast<uint32_t>(proc)));
    } else {
      pending_.push_back(slot);
    }
  }
}

// The next snapshot reads the PGPROCs of the slots in use now.
void BackendReader::remember_known() {
  known_.clear();
  for (const uint32_t slot : used_) {
    if (proc_of_slot_[slot] >= 0) {
      known_.emplace_back(slot, static_cast<uint32_t>(proc_of_slot_[slot]));
    }
  }
}

RawBackend BackendReader::backend_at(uint32_t slot, uint32_t proc) const {
  RawBackend backend;
  backend.pid = status_field<int32_t>(slot, layout_.status_procpid);
  backend.backend_type = status_field<uint32_t>(slot, layout_.status_backend_type);
  backend.state = status_field<uint32_t>(slot, layout_.status_state);
  if (layout_.status_query_id) {
    backend.query_id = status_field<uint64_t>(slot, *layout_.status_query_id);
  }
  backend.database_id = status_field<uint32_t>(slot, layout_.status_database_id);
  backend.user_id = status_field<uint32_t>(slot, layout_.status_user_id);
  backend.proc_start = status_field<int64_t>(slot, layout_.status_proc_start);
  backend.wait_event_info = proc_field<uint32_t>(proc, layout_.proc_wait_event_info);
  return backend;
}

// The slots in `pending_` that the first read could not take (new, changed during it, or moved to
// another PGPROC): their PGPROCs found, their fields and counts read again, up to kRetries times.
base::Status BackendReader::read_in_rounds(std::vector<RawBackend>& into, ReadCounts& counts) {
  bool scanned = false;
  for (int round = 0; round <= kRetries && !pending_.empty(); ++round) {
    if (auto error = find_pending_procs(scanned, counts)) return error;
    if (auto error = read_pending(counts)) return error;
    take_pending(into, counts);
    if (again_.empty()) break;
    if (round == kRetries) {
      counts.inconsistent += again_.size();
      break;
    }
    counts.retried += again_.size();
    if (auto error = read_again(counts)) return error;
  }
  return std::nullopt;
}

// A pending slot without a known PGPROC: with 17+'s numbering its own, else found by a look at
// every PGPROC (once per snapshot) and kept.
base::Status BackendReader::find_pending_procs(bool& scanned, ReadCounts& counts) {
  for (const uint32_t slot : pending_) {
    const auto pid = status_field<int32_t>(slot, layout_.status_procpid);
    const auto cached = proc_of_slot_[slot];
    if (layout_.status_by_proc_number) {
      // Its fields are read below and matched to the slot before anything is taken.
      proc_of_slot_[slot] = slot < places_.proc_count ? int64_t{slot} : -1;
      continue;
    }
    if (cached >= 0 && proc_matches(slot, pid, static_cast<uint32_t>(cached))) continue;
    if (!scanned) {
      if (auto error = scan_procs()) return error;
      ++counts.calls;
      scanned = true;
    }
    proc_of_slot_[slot] = find_proc(slot, pid);
  }
  return std::nullopt;
}

// The pending slots' PGPROC fields, then their st_changecount again (into rechecked_): in small
// pieces, or, for many slots, the whole PGPROC and status arrays in one piece each.
base::Status BackendReader::read_pending(ReadCounts& counts) {
  reads_.clear();
  rechecked_.assign(pending_.size(), 0);
  const auto ids = proc_identity(layout_);
  const bool bulk = pending_.size() > kBulkAbove;
  if (bulk) {
    statuses_again_.resize(statuses_.size());
    reads_.push_back({places_.procs, procs_.data(), procs_.size()});
    reads_.push_back({places_.statuses, statuses_again_.data(), statuses_again_.size()});
  }
  for (size_t index = 0; index < pending_.size() && !bulk; ++index) {
    const uint32_t slot = pending_[index];
    if (const auto proc = proc_of_slot_[slot]; proc >= 0) {
      const size_t at = static_cast<size_t>(proc) * layout_.proc_size;
      reads_.push_back(
          {places_.procs + at + ids.offset, procs_.data() + at + ids.offset, ids.length});
      reads_.push_back({places_.procs + at + layout_.proc_wait_event_info,
                        procs_.data() + at + layout_.proc_wait_event_info, sizeof(uint32_t)});
    }
    // Last: the entry is taken only if its count is what it was before everything above.
    reads_.push_back(
        {places_.statuses + size_t{slot} * layout_.status_size + layout_.status_changecount,
         &rechecked_[index], sizeof(int32_t)});
  }
  if (auto error = memory_.read(reads_)) return error;
  ++counts.calls;
  if (bulk) {
    for (size_t index = 0; index < pending_.size(); ++index) {
      std::memcpy(&rechecked_[index],
                  statuses_again_.data() + size_t{pending_[index]} * layout_.status_size +
                      layout_.status_changecount,
                  sizeof(int32_t));
    }
  }
  return std::nullopt;
}

// Takes each pending slot whose count was even and unchanged and whose PGPROC matches; the
// ones that changed meanwhile go to again_.
void BackendReader::take_pending(std::vector<RawBackend>& into, ReadCounts& counts) {
  again_.clear();
  for (size_t index = 0; index < pending_.size(); ++index) {
    const uint32_t slot = pending_[index];
    const auto before = status_field<int32_t>(slot, layout_.status_changecount);
    const auto pid = status_field<int32_t>(slot, layout_.status_procpid);
    if (before % 2 != 0 || before != rechecked_[index]) {
      again_.push_back(slot);
      continue;
    }
    const auto proc = proc_of_slot_[slot];
    if (proc < 0 || !proc_matches(slot, pid, static_cast<uint32_t>(proc))) {
      ++counts.unmatched;
      continue;
    }
    into.push_back(backend_at(slot, static_cast<uint32_t>(proc)));
  }
}

// The changed entries read again; a slot that is no longer in use drops out.
base::Status BackendReader::read_again(ReadCounts& counts) {
  reads_.clear();
  for (const uint32_t slot : again_) {
    const size_t at = size_t{slot} * layout_.status_size;
    reads_.push_back({places_.statuses + at, statuses_.data() + at, layout_.status_size});
  }
  if (auto error = memory_.read(reads_)) return error;
  ++counts.calls;
  pending_.clear();
  for (const uint32_t slot : again_) {
    if (status_field<int32_t>(slot, layout_.status_procpid) > 0) pending_.push_back(slot);
  }
  return std::nullopt;
}

}  // namespace pgwaitprof::collectors::memory
