// The CPU profile's collection side: perf records parsed from bytes, the CPU list, maps and
// kallsyms texts, backend types from command lines, symbols of this test program and of libc
// through libdwfl, and the refusals (a target not on this host, perf events or the server's
// processes closed to an unprivileged user), each one line.
#include "collectors/cpu_profile.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <cstring>

#include "collectors/cpu/perf_events.h"
#include "collectors/cpu/symbolizer.h"

// A function of this program for the symbolizer to find by its address.
extern "C" __attribute__((noinline)) int pgwaitprof_cpu_profile_probe(int value) {
  return value * 3 + 1;
}

namespace pgwaitprof::collectors {
namespace {

void put(std::vector<uint8_t>& bytes, uint64_t value, size_t size = 8) {
  const auto* raw = reinterpret_cast<const uint8_t*>(&value);
  bytes.insert(bytes.end(), raw, raw + size);
}

TEST(CpuPerfRecord, ParsesASampleWithItsChainLeafFirst) {
  std::vector<uint8_t> body;
  put(body, 0x1111);  // ip
  put(body, 42, 4);   // pid
  put(body, 43, 4);   // tid
  put(body, 123456789);
  put(body, 5);  // chain: kernel marker, a kernel frame, user marker, two user frames
  put(body, static_cast<uint64_t>(PERF_CONTEXT_KERNEL));
  put(body, 0xffffffff81000010);
  put(body, static_cast<uint64_t>(PERF_CONTEXT_USER));
  put(body, 0x5000);
  put(body, 0x6000);
  const auto sample = cpu::parse_sample(body, true);
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ(sample->pid, 42);
  EXPECT_EQ(sample->tid, 43);
  EXPECT_EQ(sample->time_ns, 123456789u);
  const std::vector<std::pair<uint64_t, bool>> frames{
      {0xffffffff81000010, true}, {0x5000, false}, {0x6000, false}};
  EXPECT_EQ(sample->frames, frames);
}

TEST(CpuPerfRecord, RefusesARecordShorterThanItsChainSays) {
  std::vector<uint8_t> body;
  put(body, 0x1111);
  put(body, 42, 4);
  put(body, 42, 4);
  put(body, 1);
  put(body, 1000);  // 1,000 frames announced, none there
  put(body, 0x5000);
  EXPECT_FALSE(cpu::parse_sample(body, false).has_value());
  body.resize(10);
  EXPECT_FALSE(cpu::parse_sample(body, false).has_value());
}

TEST(CpuPerfRecord, WithoutAChainTheIpIsTheFrame) {
  std::vector<uint8_t> body;
  put(body, 0x1111);
  put(body, 7, 4);
  put(body, 7, 4);
  put(body, 1);
  put(body, 0);
  const auto sample = cpu::parse_sample(body, false);
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ(sample->frames, (std::vector<std::pair<uint64_t, bool>>{{0x1111, false}}));
}

TEST(CpuPerfRecord, CpuLists) {
  EXPECT_EQ(cpu::parse_cpu_list("0-3,5,7-8\n"), (std::vector<int>{0, 1, 2, 3, 5, 7, 8}));
  EXPECT_EQ(cpu::parse_cpu_list("0\n"), (std::vector<int>{0}));
  EXPECT_TRUE(cpu::parse_cpu_list("3-1").empty());
  EXPECT_TRUE(cpu::parse_cpu_list("x").empty());
}

TEST(CpuSymbols, MapsKeepExecutableMappings) {
  const auto maps = cpu::parse_maps(
      "55d0c0a00000-55d0c0a51000 r--p 00000000 fe:01 1234   /usr/lib/postgresql/15/bin/postgres\n"
      "55d0c0a51000-55d0c0e00000 r-xp 00051000 fe:01 1234   /usr/lib/postgresql/15/bin/postgres\n"
      "7ffd1000-7ffd3000 r-xp 00000000 00:00 0                  [vdso]\n"
      "7f0000000000-7f0000001000 rwxp 00000000 00:00 0\n");
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0].start, 0x55d0c0a51000u);
  EXPECT_EQ(maps[0].end, 0x55d0c0e00000u);
  EXPECT_EQ(maps[0].offset, 0x51000u);
  EXPECT_EQ(maps[0].path, "/usr/lib/postgresql/15/bin/postgres");
  EXPECT_EQ(maps[1].path, "[vdso]");
  EXPECT_EQ(maps[2].path, "");
}

TEST(CpuSymbols, KallsymsSortedTextSymbolsOnly) {
  const auto symbols = cpu::parse_kallsyms(
      "ffffffff81000200 T schedule\n"
      "ffffffff81000100 t finish_task_switch\n"
      "ffffffff82000000 D some_data\n"
      "ffffffffc0000000 t ext4_write\t[ext4]\n");
  ASSERT_EQ(symbols.size(), 3u);
  EXPECT_EQ(symbols[0].name, "finish_task_switch");
  EXPECT_EQ(symbols[2].name, "ext4_write");
  // Addresses hidden (kptr_restrict): nothing to look up.
  EXPECT_TRUE(cpu::parse_kallsyms("0000000000000000 T schedule\n").empty());
}

TEST(CpuSymbols, FindsAFunctionOfThisProgramAndOfLibc) {
  cpu::Symbolizer symbolizer;
  const auto probe = reinterpret_cast<uint64_t>(&pgwaitprof_cpu_profile_probe);
  EXPECT_EQ(symbolizer.user_frame(getpid(), probe + 2), "pgwaitprof_cpu_profile_probe");
  const auto libc = reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "getpid"));
  ASSERT_NE(libc, 0u);
  EXPECT_NE(symbolizer.user_frame(getpid(), libc).find("getpid"), std::string::npos);
  // An address no mapping holds.
  EXPECT_EQ(symbolizer.user_frame(getpid(), 8), "[unknown]");
}

TEST(CpuSymbols, KernelFramesAreMarked) {
  cpu::Symbolizer symbolizer;
  const auto frame = symbolizer.kernel_frame(0xffffffff81000000 + 0x100);
  EXPECT_TRUE(frame.ends_with("_[k]")) << frame;
}

TEST(CpuBackendTypes, FromCommandLines) {
  using std::string_literals::operator""s;
  EXPECT_EQ(backend_type_from_cmdline("postgres: walwriter \0\0\0"s), "walwriter");
  EXPECT_EQ(backend_type_from_cmdline("postgres: main: checkpointer "), "checkpointer");
  EXPECT_EQ(backend_type_from_cmdline("postgres: autovacuum worker bench"), "autovacuum worker");
  EXPECT_EQ(backend_type_from_cmdline("postgres: bench bench [local] SELECT"), "client backend");
  EXPECT_EQ(backend_type_from_cmdline("postgres: main: bench bench [local] idle"),
            "client backend");
}

TEST(CpuRefusals, ATargetNotOnThisHost) {
  asio::io_context io;
  PgSession session(io.get_executor());
  std::optional<std::string> error;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto opened = co_await open_cpu_profile(session, config::LocalMode::kNo, 99);
        if (!opened) error = opened.error().message;
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(*error, "the target is configured as not on this host (local: no)");
}

TEST(CpuRefusals, AnInvalidRate) {
  auto opened = cpu::PerfEvents::open(1000);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().message, "invalid CPU profile rate 1000 Hz: it must be 1 to 999");
}

// `body` in a child process running as nobody; its one line, or "" when it had no error.
template <typename Body>
std::string as_nobody(Body body) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string line = "could not become nobody";
    if (::setgid(65534) == 0 && ::setuid(65534) == 0) line = body();
    (void)!::write(pipe_fds[1], line.data(), line.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string line;
  char buffer[512];
  for (ssize_t got; (got = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    line.append(buffer, got);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return line;
}

TEST(CpuRefusals, PerfEventsClosedToAnUnprivilegedUser) {
  const auto paranoid = cpu::read_perf_event_paranoid();
  if (::geteuid() != 0 || !paranoid || *paranoid <= 0) {
    GTEST_SKIP() << "needs root to become nobody, and perf_event_paranoid above 0";
  }
  const auto line = as_nobody([] {
    auto opened = cpu::PerfEvents::open(99);
    return opened ? std::string() : opened.error().message;
  });
  EXPECT_NE(line.find("kernel.perf_event_paranoid is " + std::to_string(*paranoid)),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("sysctl kernel.perf_event_paranoid=0"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(CpuRefusals, ProcessesOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
  // pid 1 is root's: nobody may not read its maps, as a user may not read another's server.
  const auto line = as_nobody([] {
    auto error = check_process_readable(1);
    return error ? error->message : std::string();
  });
  EXPECT_EQ(line,
            "could not read \"/proc/1/maps\" of the server's postmaster: Permission denied; run "
            "pgwaitprof as the server's user or as root");
}

}  // namespace
}  // namespace pgwaitprof::collectors
