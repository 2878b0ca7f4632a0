// Why the CPU profile could not name frames as it should, said once (issue 47 item 12): kernel
// addresses hidden from this user (kernel.kptr_restrict; every kernel frame "[kernel]"), and a
// server file deleted or replaced after it was mapped, whose frames are named from the running
// copy (/proc/<pid>/exe) instead of "[sleep (deleted)+0x...]". On real processes of this host.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "collectors/cpu/symbolizer.h"

namespace pgwaitprof::collectors {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(CpuSymbolNotes, KptrRestrictIsNamed) {
  EXPECT_EQ(cpu::kernel_names_note("2\n"),
            "kernel functions show as \"[kernel]\": /proc/kallsyms gives this user no addresses "
            "(kernel.kptr_restrict is 2); root or CAP_SYSLOG gets them with kernel.kptr_restrict "
            "at 0 or 1");
  EXPECT_NE(cpu::kernel_names_note("").find("kptr_restrict is unknown"), std::string::npos);
}

// `nobody` sees /proc/kallsyms without addresses unless kptr_restrict is 0 and
// perf_event_paranoid at most 1: as it, every kernel frame is "[kernel]" and one note says why.
TEST(CpuSymbolNotes, HiddenKernelAddressesSayWhyOnce) {
  const passwd* nobody = ::getpwnam("nobody");
  if (::geteuid() != 0 || nobody == nullptr) GTEST_SKIP() << "needs root and a nobody account";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0) ::_exit(10);
    if (!cpu::parse_kallsyms(read_file("/proc/kallsyms")).empty()) ::_exit(11);  // visible
    cpu::Symbolizer symbolizer;
    if (symbolizer.kernel_frame(0xffffffff81000100) != "[kernel]_[k]") ::_exit(12);
    (void)symbolizer.kernel_frame(0xffffffff81000200);
    const auto notes = symbolizer.take_notes();
    if (notes.size() != 1) ::_exit(13);
    if (notes.front() != cpu::kernel_names_note(read_file("/proc/sys/kernel/kptr_restrict")))
      ::_exit(14);
    if (!symbolizer.take_notes().empty()) ::_exit(15);  // once
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 11) GTEST_SKIP() << "kallsyms addresses are visible to nobody here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

cpu::Mapping text_of(pid_t pid, std::string_view path) {
  for (const auto& mapping : cpu::parse_maps(read_file(fmt::format("/proc/{}/maps", pid)))) {
    if (mapping.path == path) return mapping;
  }
  return {};
}

// A copy of sleep, started from `path`, and its pid once its text is mapped (/proc/<pid>/exe
// names the file a moment before the kernel maps it).
pid_t start_sleep(const fs::path& path) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::execl(path.c_str(), path.c_str(), "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (text_of(child, path.string()).end == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return child;
}

TEST(CpuSymbolNotes, ADeletedBinaryIsNamedFromItsRunningCopyAndSaysSo) {
  const fs::path dir =
      fs::temp_directory_path() / ("pgwaitprof-deleted-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "kept");
  fs::create_directories(dir / "gone");
  const std::string sleep = fs::exists("/usr/bin/sleep") ? "/usr/bin/sleep" : "/bin/sleep";
  fs::copy_file(sleep, dir / "kept" / "sleep");
  fs::copy_file(sleep, dir / "gone" / "sleep");
  const pid_t kept = start_sleep(dir / "kept" / "sleep");
  const pid_t gone = start_sleep(dir / "gone" / "sleep");
  fs::remove(dir / "gone" / "sleep");

  const auto kept_text = text_of(kept, (dir / "kept" / "sleep").string());
  const auto gone_text = text_of(gone, (dir / "gone" / "sleep").string() + " (deleted)");
  ASSERT_GT(kept_text.end, kept_text.start);
  ASSERT_GT(gone_text.end, gone_text.start);
  ASSERT_EQ(kept_text.offset, gone_text.offset);
  cpu::Symbolizer symbolizer;
  for (uint64_t at = 0; at < kept_text.end - kept_text.start; at += 0x400) {
    const auto frame = symbolizer.user_frame(gone, gone_text.start + at);
    EXPECT_EQ(frame.find("(deleted)"), std::string::npos) << frame;
    EXPECT_EQ(frame, symbolizer.user_frame(kept, kept_text.start + at));
  }
  const auto notes = symbolizer.take_notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes.front(), cpu::deleted_binary_note((dir / "gone" / "sleep").string(),
                                                    fmt::format("/proc/{}/exe", gone)));
  ::kill(kept, SIGKILL);
  ::kill(gone, SIGKILL);
  ::waitpid(kept, nullptr, 0);
  ::waitpid(gone, nullptr, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pgwaitprof::collectors
