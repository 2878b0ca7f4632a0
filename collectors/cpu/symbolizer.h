// Function names for the CPU profile's addresses. User addresses: the process's executable
// mappings (/proc/<pid>/maps, read once per process and again when an address falls outside
// them), each file's symbols through elfutils' libdwfl (its .symtab, else .dynsym, or a local
// debug file found by build id), looked up once per file and offset for every process that
// maps it (all backends map the same postgres binary, at addresses ASLR makes differ).
// Kernel addresses: /proc/kallsyms, read and sorted once. What no symbol names stays
// "[postgres+0x1a2b3]" (the file's basename and offset), "[unknown]" or "[kernel]", and the
// symbolizer notes why once (take_notes): kallsyms hidden by kernel.kptr_restrict, a file deleted
// after the server mapped it (named from /proc/<pid>/exe or map_files when they can be read).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace pgwaitprof::collectors::cpu {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;  // in the file
  std::string path;     // "" for an anonymous mapping
};
// The executable mappings of a /proc/<pid>/maps text, in its order.
std::vector<Mapping> parse_maps(std::string_view text);

struct KernelSymbol {
  uint64_t address = 0;
  std::string name;
};
// The text symbols of a /proc/kallsyms text (types t, T, w, W), sorted by address; empty when
// every address reads 0 (kernel.kptr_restrict hides them from this user).
std::vector<KernelSymbol> parse_kallsyms(std::string_view text);

// Why kernel frames are not named: /proc/kallsyms showed no address, and the value of
// kernel.kptr_restrict (the file's text) that hides them.
std::string kernel_names_note(std::string_view kptr_restrict);
// That a mapped file (the server's binary, a library) was deleted or replaced after the server
// started, and whether its frames are named from the running copy (`read_from`, a /proc path).
std::string deleted_binary_note(std::string_view path, std::optional<std::string_view> read_from);

// One ELF file's symbols, through libdwfl.
class ModuleSymbols;

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // The function at `address` in process `pid`.
  std::string user_frame(pid_t pid, uint64_t address);
  // The kernel function at `address`, with the kernel suffix ("schedule_[k]").
  std::string kernel_frame(uint64_t address);
  // Forgets processes not asked about since the previous call (they ended).
  void forget_idle_processes();
  // Why some frames could not be named as they should (kernel.kptr_restrict, a deleted binary),
  // each said once for the symbolizer's life; the ones not taken before.
  std::vector<std::string> take_notes();
  // The frame of the file at `path` at `file_offset`, or nullopt when the file has no symbol
  // there (or cannot be read). For tests.
  std::optional<std::string> file_symbol(const std::string& path, uint64_t file_offset);

 private:
  struct Process {
    std::vector<Mapping> mappings;
    std::chrono::steady_clock::time_point read_at{};
    bool used = true;
  };
  Process& process(pid_t pid);
  // The symbols of the file at `path`, opened from `open_path` ("" = `path`) the first time.
  ModuleSymbols* module(const std::string& path, const std::string& open_path);
  ModuleSymbols* deleted_module(pid_t pid, const Mapping& mapping);
  void note(std::string text);

  std::unordered_map<pid_t, Process> processes_;
  std::unordered_map<std::string, std::unique_ptr<ModuleSymbols>> modules_;  // null: unreadable
  std::optional<std::vector<KernelSymbol>> kernel_;  // read at the first kernel frame
  std::vector<std::string> notes_;                   // not taken yet
  std::unordered_set<std::string> noted_;            // every note given
};

}  // namespace pgwaitprof::collectors::cpu
