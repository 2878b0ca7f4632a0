// The memory source's pure parts, without a server: the names of the generated layouts, finding
// the postmaster from its stat line and lock file, the live stride check, and the snapshot join
// on arrays laid out here with a real layout: the st_changecount protocol, PGPROC matching by pid
// and backendId, auxiliary slots. The reads of another process: remote_process_test.cc.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "collectors/memory/backend_reader.h"
#include "collectors/memory/memory_attach.h"
#include "collectors/memory/memory_live_check.h"
#include "collectors/memory/pg_layout.h"
#include "collectors/memory/pg_names.h"
#include "collectors/memory/remote_process.h"

namespace pgwaitprof::collectors::memory {
namespace {

const PgLayout& layout_of(int major) {
  const auto* layout = find_pg_layout(major);
  EXPECT_NE(layout, nullptr) << "no layout of PostgreSQL " << major;
  return layout != nullptr ? *layout : pg_layouts().front();
}

uint32_t value_of(const std::vector<NamedValue>& table, std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  ADD_FAILURE() << name << " is not in the layout";
  return 0;
}

// Every major 13-19 has its layout, and every constant its name: from the wait-event reference
// (of that major, else of the nearest that has it: minor releases add events), else, from 17 on,
// after the constant as the server names it. The second route is taken only for what the
// reference lacks, listed here: an event that 17 and 18 got in a minor release after the ones
// the reference was taken from, and 19's new ones.
TEST(PgNamesTest, EveryConstantOfEveryLayoutHasItsPostgresName) {
  std::vector<int> majors;
  for (const auto& layout : pg_layouts()) majors.push_back(layout.major);
  EXPECT_EQ(majors, (std::vector<int>{13, 14, 15, 16, 17, 18, 19}));
  const std::vector<std::string> catchup = {"WAIT_EVENT_WAL_RECEIVER_UPSTREAM_CATCHUP"};
  const std::map<int, std::vector<std::string>> derived = {
      {17, catchup},
      {18, catchup},
      {19,
       {"WAIT_EVENT_REPACK_WORKER_EXPORT", "WAIT_EVENT_WAIT_FOR_WAL_FLUSH",
        "WAIT_EVENT_WAIT_FOR_WAL_REPLAY", "WAIT_EVENT_WAIT_FOR_WAL_WRITE",
        "WAIT_EVENT_WAL_RECEIVER_UPSTREAM_CATCHUP", "WAIT_EVENT_COMMIT_DELAY",
        "WAIT_EVENT_COPY_FROM_READ", "WAIT_EVENT_COPY_TO_WRITE", "WAIT_EVENT_BUFFER_CLEANUP",
        "WAIT_EVENT_BUFFER_EXCLUSIVE", "WAIT_EVENT_BUFFER_SHARED",
        "WAIT_EVENT_BUFFER_SHARE_EXCLUSIVE", "LWTRANCHE_NOTIFY_CHANNEL_HASH"}}};
  for (const auto& layout : pg_layouts()) {
    SCOPED_TRACE(layout.major);
    const PgNames names(layout);
    EXPECT_TRUE(names.unnamed().empty()) << ::testing::PrintToString(names.unnamed());
    const auto expected =
        derived.contains(layout.major) ? derived.at(layout.major) : std::vector<std::string>{};
    EXPECT_EQ(names.derived(), expected);
    EXPECT_GT(layout.wait_events.size(), 100u);
    EXPECT_GT(layout.individual_lwlocks.size(), 30u);
  }
  // 19's buffer class: type "Buffer", its events named after their constants.
  const auto& nineteen = layout_of(19);
  const PgNames names(nineteen);
  const auto cleanup =
      names.wait_event(value_of(nineteen.wait_events, "WAIT_EVENT_BUFFER_CLEANUP"));
  EXPECT_EQ(cleanup.type, "Buffer");
  EXPECT_EQ(cleanup.name, "BufferCleanup");
  EXPECT_EQ(names.wait_event(value_of(nineteen.wait_events, "WAIT_EVENT_WAL_WRITE")).name,
            "WalWrite");
}

TEST(PgNamesTest, NamesAsPgStatActivityShowsThem) {
  const auto& layout = layout_of(15);
  const PgNames names(layout);
  const auto client_read = names.wait_event(value_of(layout.wait_events, "WAIT_EVENT_CLIENT_READ"));
  EXPECT_EQ(client_read.type, "Client");
  EXPECT_EQ(client_read.name, "ClientRead");
  const auto data_file_read =
      names.wait_event(value_of(layout.wait_events, "WAIT_EVENT_DATA_FILE_READ"));
  EXPECT_EQ(data_file_read.type, "IO");
  EXPECT_EQ(data_file_read.name, "DataFileRead");
  uint32_t wal_write = 0;
  for (const auto& lock : layout.individual_lwlocks) {
    if (lock.name == "WALWrite") wal_write = lock.value;
  }
  EXPECT_EQ(names.wait_event(layout.wait_class_lwlock | wal_write).name, "WALWrite");
  const auto wal_insert = names.wait_event(layout.wait_class_lwlock |
                                           value_of(layout.tranches, "LWTRANCHE_WAL_INSERT"));
  EXPECT_EQ(wal_insert.type, "LWLock");
  EXPECT_EQ(wal_insert.name, "WALInsert");
  const auto transaction =
      names.wait_event(layout.wait_class_lock | value_of(layout.lock_tags, "LOCKTAG_TRANSACTION"));
  EXPECT_EQ(transaction.type, "Lock");
  EXPECT_EQ(transaction.name, "transactionid");
  EXPECT_EQ(
      names.wait_event(layout.wait_class_lwlock | uint32_t(layout.first_user_tranche + 3)).name,
      "extension");
  EXPECT_EQ(names.wait_event(0).type, "");
  EXPECT_EQ(names.wait_event(0x0A00FFFFU).name, "unknown");
  EXPECT_EQ(names.backend_type(value_of(layout.backend_types, "B_BACKEND")), "client backend");
  EXPECT_EQ(names.backend_type(value_of(layout.backend_types, "B_AUTOVAC_WORKER")),
            "autovacuum worker");
  EXPECT_EQ(names.state(value_of(layout.states, "STATE_IDLEINTRANSACTION")), "idle in transaction");
  EXPECT_EQ(names.state(value_of(layout.states, "STATE_RUNNING")), "active");
  EXPECT_EQ(names.state(value_of(layout.states, "STATE_UNDEFINED")), "");
}

// The postmaster's start from its /proc/<pid>/stat line (a command name may hold spaces and
// parentheses) and /proc/stat's btime; 0 where a part is missing.
TEST(FindPostmasterTest, AProcessStartsAtBootPlusItsStartTicks) {
  const std::string stat =
      "4242 (postgres: a (b) c) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 "
      "123400 1000 10 18446744073709551615";
  const std::string system = "cpu  1 2 3 4\nintr 5\nctxt 6\nbtime 1764900000\nprocesses 7\n";
  EXPECT_EQ(process_start_epoch(stat, system, 100), 1764900000 + 1234);
  EXPECT_EQ(process_start_epoch(stat, "cpu 1 2 3\n", 100), 0);                // no btime
  EXPECT_EQ(process_start_epoch("4242 postgres S 1", system, 100), 0);        // no command name
  EXPECT_EQ(process_start_epoch("4242 (postgres) S 1 2 3", system, 100), 0);  // cut short
  EXPECT_EQ(process_start_epoch(stat, system, 0), 0);
}

// postmaster.pid as PostgreSQL writes it: pid, data directory, start time, port, ...
TEST(FindPostmasterTest, TheLockFileMustNameThePostmasterAndTheServersStart) {
  const std::string lock = "4242\n/var/lib/postgresql/15/main\n1764900100\n5432\n/tmp\n*\n";
  EXPECT_EQ(check_lock_file(lock, 4242, 1764900100), LockFile::kAgrees);
  EXPECT_EQ(check_lock_file(lock, 4242, 1764900102), LockFile::kAgrees);  // within 2 s
  EXPECT_EQ(check_lock_file(lock, 4242, 1764900103), LockFile::kAnother);
  EXPECT_EQ(check_lock_file(lock, 4243, 1764900100), LockFile::kAnother);
  EXPECT_EQ(check_lock_file("4242\n/data\n", 4242, 1764900100), LockFile::kUnreadable);
  EXPECT_EQ(check_lock_file("", 4242, 1764900100), LockFile::kUnreadable);
  EXPECT_EQ(check_lock_file("x\n/data\n1764900100\n", 4242, 1764900100), LockFile::kAnother);
}

// The live stride check on arrays laid out here: the pids of the live processes sit at the pid's
// offset of PGPROCs side by side, and the measured spacing is the layout's size.
TEST(StrideCheckTest, TheLiveProcessesPidsGiveThePgprocSize) {
  const auto* layout = find_pg_layout(15);
  ASSERT_NE(layout, nullptr);
  std::vector<char> procs(10 * layout->proc_size, 0);
  auto put = [&](size_t proc, size_t offset, int32_t pid) {
    std::memcpy(procs.data() + proc * layout->proc_size + offset, &pid, sizeof pid);
  };
  for (const auto& [proc, pid] : {std::pair{2, 501}, {3, 502}, {4, 503}, {7, 900}}) {
    put(proc, layout->proc_pid, pid);
    put(proc, layout->proc_latch_owner, pid);
  }
  put(8, layout->proc_pid, 777);  // an exited process: its latch has no owner
  const auto measured = measure_stride(procs, *layout, {501, 502, 503, 900, 777});
  EXPECT_EQ(measured.found, 4u);
  EXPECT_EQ(measured.stride, static_cast<int64_t>(layout->proc_size));
  EXPECT_TRUE(measured.aligned);
  // Read with twice the size, the same bytes measure half of it.
  auto doubled = *layout;
  doubled.proc_size *= 2;
  EXPECT_NE(measure_stride(procs, doubled, {501, 502, 503, 900}).stride,
            static_cast<int64_t>(doubled.proc_size));
}

// A status array and a PGPROC array laid out here with the real layout of PostgreSQL `Major`, in
// shared memory as a server's, read by process_vm_readv (false) or through a view of the mapping
// (true: root only, the kernel opens /proc/<pid>/map_files for root or CAP_CHECKPOINT_RESTORE).
template <int Major>
class ReaderFixture : public ::testing::TestWithParam<bool> {
 protected:
  static constexpr uint32_t kMaxBackends = 100;
  void SetUp() override {
    places_.max_backends = kMaxBackends;
    places_.status_slots = kMaxBackends + static_cast<uint32_t>(layout_.status_extra_slots);
    places_.proc_count = kMaxBackends + static_cast<uint32_t>(layout_.auxiliary_procs) + 2;
    size_ = places_.status_slots * layout_.status_size + places_.proc_count * layout_.proc_size;
    void* shared = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(shared, MAP_FAILED);
    shm_ = static_cast<char*>(shared);
    places_.statuses = reinterpret_cast<uint64_t>(shm_);
    places_.procs = places_.statuses + places_.status_slots * layout_.status_size;
    if (GetParam() && geteuid() != 0) GTEST_SKIP() << "a view of the mapping needs root";
  }
  void TearDown() override {
    if (shm_ != nullptr) munmap(shm_, size_);
  }
  template <typename T>
  void put(uint64_t address, T value) {
    std::memcpy(reinterpret_cast<void*>(address), &value, sizeof value);
  }
  void status(uint32_t slot, int32_t pid, std::string_view type, std::string_view state,
              int32_t changecount = 2) {
    const uint64_t at = places_.statuses + slot * layout_.status_size;
    put(at + layout_.status_changecount, changecount);
    put(at + layout_.status_procpid, pid);
    put(at + layout_.status_backend_type, value_of(layout_.backend_types, type));
    put(at + layout_.status_state, value_of(layout_.states, state));
    put(at + layout_.status_database_id, uint32_t{5});
    put(at + *layout_.status_query_id, uint64_t{77});
  }
  void proc(uint32_t index, int32_t pid, int32_t backend_id, uint32_t wait) {
    const uint64_t at = places_.procs + index * layout_.proc_size;
    put(at + layout_.proc_pid, pid);
    put(at + layout_.proc_latch_owner, pid);
    if (!layout_.status_by_proc_number) put(at + layout_.proc_backend_id, backend_id);
    put(at + layout_.proc_wait_event_info, wait);
  }
  // The process of PGPROC `index` exited: it keeps its pid and backend id, not its latch.
  void exited(uint32_t index) {
    put(places_.procs + index * layout_.proc_size + layout_.proc_latch_owner, int32_t{0});
  }
  // A reader of the arrays above, as the parameter says.
  BackendReader reader() {
    const auto maps = read_maps(getpid());
    EXPECT_TRUE(maps);
    const auto* mapping = find_mapping(*maps, places_.statuses, size_);
    EXPECT_NE(mapping, nullptr);
    RemoteMemory memory(getpid(), {*mapping});
    if (GetParam()) {
      const auto refused = memory.map_shared();
      EXPECT_FALSE(refused) << refused->message;
      EXPECT_TRUE(memory.mapped());
    }
    return BackendReader(layout_, places_, std::move(memory));
  }
  std::vector<RawBackend> read(ReadCounts& counts) {
    auto one = reader();
    std::vector<RawBackend> backends;
    EXPECT_FALSE(one.read(backends, counts));
    return backends;
  }

  const PgLayout& layout_ = layout_of(Major);
  ArrayPlaces places_;
  char* shm_ = nullptr;
  size_t size_ = 0;
};

// 13-16 join a status slot to its PGPROC by pid and backendId; 17+ by the PGPROC's number.
using BackendReaderTest = ReaderFixture<15>;
using ProcNumberReaderTest = ReaderFixture<17>;
INSTANTIATE_TEST_SUITE_P(Reads, BackendReaderTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Mapped" : "Syscall"; });
INSTANTIATE_TEST_SUITE_P(Reads, ProcNumberReaderTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Mapped" : "Syscall"; });

// 17+: slot i is PGPROC i, for a regular backend and an auxiliary process alike; a PGPROC with
// the slot's pid elsewhere, or the slot's PGPROC of an exited process, is not taken for it.
TEST_P(ProcNumberReaderTest, JoinsEachSlotToThePgprocOfItsNumber) {
  const uint32_t client_read = value_of(layout_.wait_events, "WAIT_EVENT_CLIENT_READ");
  status(0, 1001, "B_BACKEND", "STATE_IDLE");
  proc(0, 1001, 0, client_read);
  status(4, 1005, "B_BACKEND", "STATE_RUNNING");
  proc(4, 1005, 0, 0);
  proc(9, 1005, 0, client_read);  // a stale copy elsewhere: not slot 4's
  status(7, 1008, "B_BACKEND", "STATE_IDLE");
  proc(7, 1008, 0, client_read);
  exited(7);  // slot 7's process left its PGPROC: the entry is not taken
  const uint32_t checkpointer_main = value_of(layout_.wait_events, "WAIT_EVENT_CHECKPOINTER_MAIN");
  status(kMaxBackends + 2, 2000, "B_CHECKPOINTER", "STATE_UNDEFINED");
  proc(kMaxBackends + 2, 2000, 0, checkpointer_main);
  ReadCounts counts;
  const auto backends = read(counts);
  ASSERT_EQ(backends.size(), 3u);
  EXPECT_EQ(backends[0].pid, 1001);
  EXPECT_EQ(backends[0].wait_event_info, client_read);
  EXPECT_EQ(backends[1].pid, 1005);
  EXPECT_EQ(backends[1].wait_event_info, 0u);
  EXPECT_EQ(backends[1].state, value_of(layout_.states, "STATE_RUNNING"));
  EXPECT_EQ(backends[2].pid, 2000);
  EXPECT_EQ(backends[2].wait_event_info, checkpointer_main);
  EXPECT_EQ(counts.unmatched, 1u);
}

TEST_P(BackendReaderTest, JoinsEachSlotToItsPgprocByPidAndBackendId) {
  const uint32_t client_read = value_of(layout_.wait_events, "WAIT_EVENT_CLIENT_READ");
  status(0, 1001, "B_BACKEND", "STATE_IDLE");
  status(3, 1004, "B_BACKEND", "STATE_RUNNING");
  // Slot 3 is backend id 4, in PGPROC 6; a stale PGPROC 2 of an exited backend with the same
  // pid but another backend id must not be taken for it.
  proc(5, 1001, 1, client_read);
  proc(6, 1004, 4, 0);
  proc(2, 1004, 7, client_read);
  // PGPROC 3 was this pid's with this backend id before (pid reuse): its latch has no owner.
  proc(3, 1004, 4, client_read);
  exited(3);
  // The checkpointer: an auxiliary slot and an auxiliary PGPROC.
  const uint32_t checkpointer_main = value_of(layout_.wait_events, "WAIT_EVENT_CHECKPOINTER_MAIN");
  status(kMaxBackends + 1, 2000, "B_CHECKPOINTER", "STATE_UNDEFINED");
  proc(kMaxBackends + 2, 2000, 0, checkpointer_main);
  ReadCounts counts;
  const auto backends = read(counts);
  ASSERT_EQ(backends.size(), 3u);
  EXPECT_EQ(backends[0].pid, 1001);
  EXPECT_EQ(backends[0].wait_event_info, client_read);
  EXPECT_EQ(backends[0].query_id, 77u);
  EXPECT_EQ(backends[0].database_id, 5u);
  EXPECT_EQ(backends[1].pid, 1004);
  EXPECT_EQ(backends[1].wait_event_info, 0u);
  EXPECT_EQ(backends[2].pid, 2000);
  EXPECT_EQ(backends[2].wait_event_info, checkpointer_main);
  EXPECT_EQ(counts.unmatched, 0u);
}

TEST_P(BackendReaderTest, LeavesOutWhatItCannotReadConsistently) {
  status(0, 1001, "B_BACKEND", "STATE_IDLE", 3);  // being written: odd count, every time
  proc(0, 1001, 1, 0);
  status(1, 1002, "B_BACKEND", "STATE_IDLE");  // no PGPROC carries its pid and backend id
  proc(1, 1002, 5, 0);
  status(2, 1003, "B_BACKEND", "STATE_IDLE");  // two do: ambiguous
  proc(2, 1003, 3, 0);
  proc(3, 1003, 3, 0);
  status(4, 0, "B_BACKEND", "STATE_IDLE");  // a free slot
  ReadCounts counts;
  EXPECT_TRUE(read(counts).empty());
  EXPECT_EQ(counts.inconsistent, 1u);
  EXPECT_EQ(counts.retried, 3u);
  EXPECT_EQ(counts.unmatched, 2u);
}

// One reader over several snapshots: in the steady state a snapshot is one system call, and a
// wait that changes, a backend that exits, a new backend in a freed slot (its PGPROC elsewhere)
// and an entry being written are each seen at the next snapshot, never mixed up.
TEST_P(BackendReaderTest, SteadySnapshotsAreOneReadAndSeeEveryChange) {
  const uint32_t client_read = value_of(layout_.wait_events, "WAIT_EVENT_CLIENT_READ");
  status(0, 1001, "B_BACKEND", "STATE_IDLE");
  proc(5, 1001, 1, client_read);
  status(1, 1002, "B_BACKEND", "STATE_RUNNING");
  proc(6, 1002, 2, 0);
  auto reader = this->reader();
  std::vector<RawBackend> backends;
  ReadCounts first;
  ASSERT_FALSE(reader.read(backends, first));
  ASSERT_EQ(backends.size(), 2u);
  EXPECT_GT(first.calls, 1u) << "the first snapshot looks for the PGPROCs";

  ReadCounts steady;
  proc(6, 1002, 2, client_read);
  ASSERT_FALSE(reader.read(backends, steady));
  EXPECT_EQ(steady.calls, 1u);
  ASSERT_EQ(backends.size(), 2u);
  for (const auto& backend : backends) EXPECT_EQ(backend.wait_event_info, client_read);

  // Backend 1002 exits; 1003 takes its slot with a PGPROC of its own; 1001's entry is being
  // written (odd count) and is left out after the retries, not taken from the stale copy.
  status(1, 1003, "B_BACKEND", "STATE_IDLE");
  proc(6, 0, 0, 0);
  proc(9, 1003, 2, 0);
  status(0, 1001, "B_BACKEND", "STATE_IDLE", 7);
  ReadCounts changed;
  ASSERT_FALSE(reader.read(backends, changed));
  ASSERT_EQ(backends.size(), 1u);
  EXPECT_EQ(backends[0].pid, 1003);
  EXPECT_EQ(backends[0].wait_event_info, 0u);
  EXPECT_EQ(changed.inconsistent, 1u);
  EXPECT_EQ(changed.unmatched, 0u);

  status(0, 1001, "B_BACKEND", "STATE_IDLE", 8);
  ReadCounts after;
  ASSERT_FALSE(reader.read(backends, after));
  EXPECT_EQ(backends.size(), 2u);
  EXPECT_EQ(after.calls, 1u);
}

// A backend's entry changes only with its count (the writer makes it odd, writes, makes it even
// again): a new count is a new copy, and while the count stands the copy taken stands (through a
// view an unchanged entry is not copied again; by the system call it is, to the same effect).
TEST_P(BackendReaderTest, AnEntryIsReadAgainWhenItsCountMoves) {
  status(0, 1001, "B_BACKEND", "STATE_IDLE", 2);
  proc(5, 1001, 1, 0);
  auto reader = this->reader();
  std::vector<RawBackend> backends;
  ReadCounts counts;
  ASSERT_FALSE(reader.read(backends, counts));
  ASSERT_EQ(backends.size(), 1u);
  const uint32_t idle = value_of(layout_.states, "STATE_IDLE");
  const uint32_t running = value_of(layout_.states, "STATE_RUNNING");
  EXPECT_EQ(backends[0].state, idle);

  status(0, 1001, "B_BACKEND", "STATE_RUNNING", 4);
  ASSERT_FALSE(reader.read(backends, counts));
  ASSERT_EQ(backends.size(), 1u);
  EXPECT_EQ(backends[0].state, running) << "a moved count must be a new copy";
  for (int again = 0; again < 3; ++again) {
    ASSERT_FALSE(reader.read(backends, counts));
    ASSERT_EQ(backends.size(), 1u);
    EXPECT_EQ(backends[0].state, running);
  }
  status(0, 1001, "B_BACKEND", "STATE_IDLE", 6);
  ASSERT_FALSE(reader.read(backends, counts));
  ASSERT_EQ(backends.size(), 1u);
  EXPECT_EQ(backends[0].state, idle);
  EXPECT_EQ(counts.inconsistent, 0u);
}

// With many slots in use the second read takes both arrays whole: the same join, the same
// checks.
TEST_P(BackendReaderTest, ManyBackendsAreReadInBulkWithTheSameChecks) {
  const uint32_t client_read = value_of(layout_.wait_events, "WAIT_EVENT_CLIENT_READ");
  for (uint32_t slot = 0; slot < 80; ++slot) {
    status(slot, static_cast<int32_t>(3000 + slot), "B_BACKEND", "STATE_IDLE");
    // PGPROCs in reverse order: the join is by pid and backend id, not by position.
    proc(79 - slot, static_cast<int32_t>(3000 + slot), static_cast<int32_t>(slot + 1), client_read);
  }
  status(80, 4000, "B_BACKEND", "STATE_IDLE", 5);  // being written
  proc(80, 4000, 81, 0);
  ReadCounts counts;
  const auto backends = read(counts);
  ASSERT_EQ(backends.size(), 80u);
  for (const auto& backend : backends) {
    EXPECT_GE(backend.pid, 3000);
    EXPECT_LT(backend.pid, 3080);
    EXPECT_EQ(backend.wait_event_info, client_read);
  }
  EXPECT_EQ(counts.inconsistent, 1u);
  EXPECT_EQ(counts.unmatched, 0u);

  // The next snapshots copy both arrays in the one call of the steady state.
  status(80, 4000, "B_BACKEND", "STATE_IDLE", 6);
  auto reader = this->reader();
  std::vector<RawBackend> again;
  ReadCounts first;
  ASSERT_FALSE(reader.read(again, first));
  proc(0, 3079, 80, 0);
  ReadCounts steady;
  ASSERT_FALSE(reader.read(again, steady));
  EXPECT_EQ(steady.calls, 1u);
  ASSERT_EQ(again.size(), 81u);
  EXPECT_EQ(std::count_if(again.begin(), again.end(),
                          [](const RawBackend& backend) { return backend.wait_event_info == 0; }),
            2);
}

}  // namespace
}  // namespace pgwaitprof::collectors::memory
