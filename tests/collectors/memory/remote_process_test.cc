// The memory source's bounded reads of another process, without a server: /proc maps and ELF
// parsing, symbol addresses checked against their mappings, process_vm_readv confined to allowed
// ranges (read from this process itself), and a read-only view of a shared mapping (of a child
// process) that shows nothing of private memory.
#include "collectors/memory/remote_process.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace pgwaitprof::collectors::memory {
namespace {

TEST(RemoteProcessTest, ParsesMapsLines) {
  const auto maps = parse_maps(
      "55d0c0a00000-55d0c0acd000 r--p 00000000 fd:01 1234   /usr/lib/postgresql/15/bin/postgres\n"
      "7f1000000000-7f1010000000 rw-s 00000000 00:01 5678   /dev/zero (deleted)\n"
      "garbage line\n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0      [stack]\n");
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0].path, "/usr/lib/postgresql/15/bin/postgres");
  EXPECT_FALSE(maps[0].shared());
  EXPECT_TRUE(maps[1].shared());
  EXPECT_EQ(maps[1].path, "/dev/zero (deleted)");
  EXPECT_TRUE(maps[1].contains(0x7f1000000000, 0x10000000));
  EXPECT_FALSE(maps[1].contains(0x7f1000000000, 0x10000001));
  EXPECT_FALSE(maps[1].contains(0x7f100ffffffc, 8));
  EXPECT_FALSE(maps[1].contains(UINT64_MAX - 2, 8));  // no wrap-around
  EXPECT_EQ(find_mapping(maps, 0x7ffd00000010, 16), &maps[2]);
  EXPECT_EQ(find_mapping(maps, 0x1000, 1), nullptr);
}

std::string file_bytes(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(RemoteProcessTest, FindsThePostgresSymbolsAndRefusesTruncatedFiles) {
  const auto bytes = file_bytes("/usr/lib/postgresql/15/bin/postgres");
  ASSERT_FALSE(bytes.empty()) << "the tests need Debian's postgresql-15";
  const std::string_view names[] = {"ProcGlobal", "MaxBackends", "MyBEEntry", "NoSuchSymbol"};
  auto image = parse_elf(bytes, names);
  ASSERT_TRUE(image) << image.error().message;
  EXPECT_TRUE(image->position_independent);
  EXPECT_EQ(image->symbols.at("ProcGlobal").size, 8u);
  EXPECT_EQ(image->symbols.at("MaxBackends").size, 4u);
  EXPECT_FALSE(image->symbols.contains("NoSuchSymbol"));
  EXPECT_FALSE(parse_elf(bytes.substr(0, 40), names));
  EXPECT_FALSE(parse_elf(bytes.substr(0, 4096), names));  // section headers cut off
  EXPECT_FALSE(parse_elf("not an elf file at all, not at all", names));
}

TEST(RemoteProcessTest, SymbolAddressesNeedTheirMappingAndAWritableSegment) {
  ElfImage image;
  image.position_independent = true;
  image.segments = {{0, 0x1000, 0, false}, {0x5000, 0x3000, 0x4000, true}};
  image.symbols["Global"] = {0x5100, 8};
  image.symbols["Code"] = {0x100, 8};
  const auto maps = parse_maps(
      "10000-11000 r--p 00000000 fd:01 1 /bin/server\n"
      "15000-18000 rw-p 00004000 fd:01 1 /bin/server\n");
  auto global = symbol_address(image, maps, "/bin/server", "Global", 8);
  ASSERT_TRUE(global) << global.error().message;
  EXPECT_EQ(*global, 0x15100u);
  EXPECT_FALSE(symbol_address(image, maps, "/bin/server", "Global", 4));  // wrong size
  EXPECT_FALSE(symbol_address(image, maps, "/bin/server", "Code", 8));    // not data
  EXPECT_FALSE(symbol_address(image, maps, "/bin/other", "Global", 8));   // not loaded
  EXPECT_FALSE(symbol_address(image, maps, "/bin/server", "Missing", 8));
}

// Memory of this process, as a server's: reads inside the allowed range work, any byte outside
// is refused before the system call.
TEST(RemoteProcessTest, ReadsOnlyInsideTheAllowedRange) {
  std::vector<char> region(4096, 'x');
  std::memcpy(region.data() + 100, "shared", 6);
  const auto start = reinterpret_cast<uint64_t>(region.data());
  const RemoteMemory memory(getpid(), {Mapping{start, start + region.size(), "rw-s", 0, ""}});
  char into[6] = {};
  EXPECT_FALSE(memory.read(start + 100, into, sizeof into));
  EXPECT_EQ(std::string(into, 6), "shared");
  EXPECT_TRUE(memory.read(start + region.size() - 2, into, 4));
  EXPECT_TRUE(memory.read(start - 1, into, 2));
  const auto refusal = memory.read(start - 8, into, 4);
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->message.find("outside the server's shared memory"), std::string::npos);
}

// A child's shared mapping seen through a view: the same bytes as process_vm_readv reads, a
// write of the child's seen at once, no read outside the mapping, and no read at all once the
// child has exited (the view would otherwise show its memory forever).
TEST(RemoteProcessTest, AViewShowsTheChildsMemoryUntilItExits) {
  if (geteuid() != 0) GTEST_SKIP() << "/proc/<pid>/map_files opens for root only";
  const size_t size = 8192;
  void* shared = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* bytes = static_cast<char*>(shared);
  std::memcpy(bytes, "header-of-the-segment", 21);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char go = 0;
    if (read(ready[0], &go, 1) == 1) std::memcpy(bytes + 4096, "written", 7);
    pause();
    _exit(0);
  }
  const auto start = reinterpret_cast<uint64_t>(bytes);
  const auto maps = read_maps(child);
  ASSERT_TRUE(maps);
  const auto* mapping = find_mapping(*maps, start, size);
  ASSERT_NE(mapping, nullptr);
  RemoteMemory memory(child, {*mapping});
  const auto refused = memory.map_shared();
  ASSERT_FALSE(refused) << refused->message;
  ASSERT_TRUE(memory.mapped());
  ASSERT_EQ(write(ready[1], "g", 1), 1);
  char into[7] = {};
  for (int attempt = 0; attempt < 1000 && std::string(into, 7) != "written"; ++attempt) {
    ASSERT_FALSE(memory.read(start + 4096, into, sizeof into));
    usleep(1000);
  }
  EXPECT_EQ(std::string(into, 7), "written");
  EXPECT_TRUE(memory.read(start + size - 2, into, 4));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  const auto gone = memory.read(start, into, 4);
  ASSERT_TRUE(gone);
  EXPECT_NE(gone->message.find("has exited"), std::string::npos) << gone->message;
  memory.release();
  EXPECT_FALSE(memory.mapped());
  close(ready[0]);
  close(ready[1]);
  munmap(shared, size);
}

// A private mapping has no view: reads stay with process_vm_readv.
TEST(RemoteProcessTest, OnlySharedMemoryIsViewed) {
  std::vector<char> region(4096, 'x');
  const auto start = reinterpret_cast<uint64_t>(region.data());
  RemoteMemory memory(getpid(), {Mapping{start, start + region.size(), "rw-p", 0, ""}});
  EXPECT_TRUE(memory.map_shared());
  EXPECT_FALSE(memory.mapped());
}

}  // namespace
}  // namespace pgwaitprof::collectors::memory
