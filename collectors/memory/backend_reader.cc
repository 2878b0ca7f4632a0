// The snapshot read. Per tick, in the steady state, two system calls: the whole status array,
// then for each slot in use its PGPROC's pid, backendId and wait_event_info and its
// st_changecount once more. An entry whose count was odd or changed between the two reads is read
// again (at most three times); a PGPROC that no longer matches its slot sends the reader through
// all PGPROCs' pids once. Nothing is ever sampled from an entry that failed these checks.
#include "collectors/memory/backend_reader.h"

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
      proc_of_slot_(places.status_slots, -1) {}

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
  if (proc_field<int32_t>(proc, layout_.proc_pid) != pid) return false;
  if (slot < places_.max_backends) {
    return proc < places_.max_backends &&
           proc_field<int32_t>(proc, layout_.proc_backend_id) == static_cast<int32_t>(slot + 1);
  }
  return proc >= places_.max_backends &&
         proc < places_.max_backends + static_cast<uint32_t>(layout_.auxiliary_procs);
}

// The one PGPROC of the slot's pid, or -1 when there is none or more than one.
int64_t BackendReader::find_proc(uint32_t slot, int32_t pid) const {
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
  const size_t length = sizeof(int32_t) + (layout_.proc_backend_id - layout_.proc_pid);
  for (uint32_t proc = 0; proc < places_.proc_count; ++proc) {
    const size_t at = size_t{proc} * layout_.proc_size + layout_.proc_pid;
    reads_.push_back({places_.procs + at, procs_.data() + at, length});
  }
  return memory_.read(reads_);
}

base::Status BackendReader::read(std::vector<RawBackend>& into, ReadCounts& counts) {
  into.clear();
  const bool full = reads_done_++ % kFullEvery == 0;
  const uint32_t regular =
      full ? places_.max_backends : std::min(places_.max_backends, regular_end_ + kMargin);
  reads_.clear();
  reads_.push_back({places_.statuses, statuses_.data(), size_t{regular} * layout_.status_size});
  const size_t aux_at = size_t{places_.max_backends} * layout_.status_size;
  if (!full) {
    reads_.push_back(
        {places_.statuses + aux_at, statuses_.data() + aux_at, statuses_.size() - aux_at});
  } else {
    reads_.front().length = statuses_.size();
  }
  if (auto error = memory_.read(reads_)) return error;
  used_.clear();
  for (uint32_t slot = 0; slot < places_.status_slots; ++slot) {
    if (slot == regular) slot = places_.max_backends;
    if (slot >= places_.status_slots) break;
    if (status_field<int32_t>(slot, layout_.status_procpid) > 0) used_.push_back(slot);
  }
  if (full) {
    regular_end_ = 0;
    for (const uint32_t slot : used_) {
      if (slot < places_.max_backends) regular_end_ = slot + 1;
    }
  }
  bool scanned = false;
  for (int round = 0; round <= kRetries && !used_.empty(); ++round) {
    // A slot without a known PGPROC: look at every PGPROC once, then keep the match.
    for (const uint32_t slot : used_) {
      const auto pid = status_field<int32_t>(slot, layout_.status_procpid);
      const auto cached = proc_of_slot_[slot];
      if (cached >= 0 && proc_matches(slot, pid, static_cast<uint32_t>(cached))) continue;
      if (!scanned) {
        if (auto error = scan_procs()) return error;
        scanned = true;
      }
      proc_of_slot_[slot] = find_proc(slot, pid);
    }
    reads_.clear();
    rechecked_.assign(used_.size(), 0);
    const size_t id_length = sizeof(int32_t) + (layout_.proc_backend_id - layout_.proc_pid);
    const bool bulk = used_.size() > kBulkAbove;
    if (bulk) {
      statuses_again_.resize(statuses_.size());
      reads_.push_back({places_.procs, procs_.data(), procs_.size()});
      reads_.push_back({places_.statuses, statuses_again_.data(), statuses_again_.size()});
    }
    for (size_t index = 0; index < used_.size() && !bulk; ++index) {
      const uint32_t slot = used_[index];
      if (const auto proc = proc_of_slot_[slot]; proc >= 0) {
        const size_t at = static_cast<size_t>(proc) * layout_.proc_size;
        reads_.push_back({places_.procs + at + layout_.proc_pid,
                          procs_.data() + at + layout_.proc_pid, id_length});
        reads_.push_back({places_.procs + at + layout_.proc_wait_event_info,
                          procs_.data() + at + layout_.proc_wait_event_info, sizeof(uint32_t)});
      }
      // Last: the entry is taken only if its count is what it was before everything above.
      reads_.push_back(
          {places_.statuses + size_t{slot} * layout_.status_size + layout_.status_changecount,
           &rechecked_[index], sizeof(int32_t)});
    }
    if (auto error = memory_.read(reads_)) return error;
    if (bulk) {
      for (size_t index = 0; index < used_.size(); ++index) {
        std::memcpy(&rechecked_[index],
                    statuses_again_.data() + size_t{used_[index]} * layout_.status_size +
                        layout_.status_changecount,
                    sizeof(int32_t));
      }
    }
    std::vector<uint32_t> again;
    for (size_t index = 0; index < used_.size(); ++index) {
      const uint32_t slot = used_[index];
      const auto before = status_field<int32_t>(slot, layout_.status_changecount);
      const auto pid = status_field<int32_t>(slot, layout_.status_procpid);
      if (before % 2 != 0 || before != rechecked_[index]) {
        again.push_back(slot);
        continue;
      }
      const auto proc = proc_of_slot_[slot];
      if (proc < 0 || !proc_matches(slot, pid, static_cast<uint32_t>(proc))) {
        ++counts.unmatched;
        continue;
      }
      RawBackend backend;
      backend.pid = pid;
      backend.backend_type = status_field<uint32_t>(slot, layout_.status_backend_type);
      backend.state = status_field<uint32_t>(slot, layout_.status_state);
      backend.query_id = status_field<uint64_t>(slot, layout_.status_query_id);
      backend.database_id = status_field<uint32_t>(slot, layout_.status_database_id);
      backend.user_id = status_field<uint32_t>(slot, layout_.status_user_id);
      backend.proc_start = status_field<int64_t>(slot, layout_.status_proc_start);
      backend.wait_event_info =
          proc_field<uint32_t>(static_cast<uint32_t>(proc), layout_.proc_wait_event_info);
      into.push_back(backend);
    }
    if (again.empty()) break;
    if (round == kRetries) {
      counts.inconsistent += again.size();
      break;
    }
    counts.retried += again.size();
    // Read the changed entries again; a slot that is no longer in use drops out.
    reads_.clear();
    for (const uint32_t slot : again) {
      const size_t at = size_t{slot} * layout_.status_size;
      reads_.push_back({places_.statuses + at, statuses_.data() + at, layout_.status_size});
    }
    if (auto error = memory_.read(reads_)) return error;
    used_.clear();
    for (const uint32_t slot : again) {
      if (status_field<int32_t>(slot, layout_.status_procpid) > 0) used_.push_back(slot);
    }
  }
  return std::nullopt;
}

}  // namespace pgwaitprof::collectors::memory
