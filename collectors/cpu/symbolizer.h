// Function names for the CPU profile's addresses. User addresses: the process's executable
// mappings (/proc/<pid>/maps, read once per process and again when an address falls outside
// them), each file's symbols through elfutils' libdwfl (its .symtab, else .dynsym, or a local
// debug file found by build id), looked up once per file and offset for every process that
// maps it (all backends map the same postgres binary, at addresses ASLR makes differ).
// Kernel addresses: /proc/kallsyms, read and sorted once. What no symbol names stays
// "[postgres+0x1a2b3]" (the file's basename and offset), "[unknown]" or "[kernel]".
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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
  ModuleSymbols* module(const std::string& path);

  std::unordered_map<pid_t, Process> processes_;
  std::unordered_map<std::string, std::unique_ptr<ModuleSymbols>> modules_;  // null: unreadable
  std::optional<std::vector<KernelSymbol>> kernel_;  // read at the first kernel frame
};

}  // namespace pgwaitprof::collectors::cpu
