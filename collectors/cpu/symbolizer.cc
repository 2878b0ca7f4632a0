// Addresses to function names: libdwfl per file, /proc/<pid>/maps per process, kallsyms.
#include "collectors/cpu/symbolizer.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace pgwaitprof::collectors::cpu {
namespace {

// Cached names per file, and processes' maps re-read at most this often on a miss.
constexpr size_t kMaxCachedNames = 1 << 20;
constexpr auto kMapsRereadAfter = std::chrono::seconds(1);
// What /proc/<pid>/maps appends to the path of a file deleted after it was mapped.
constexpr std::string_view kDeleted = " (deleted)";

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool parse_hex(std::string_view text, uint64_t& value) {
  return !text.empty() &&
         std::from_chars(text.data(), text.data() + text.size(), value, 16).ec == std::errc();
}

std::string_view next_field(std::string_view& line) {
  const auto begin = line.find_first_not_of(' ');
  if (begin == std::string_view::npos) return line = {}, std::string_view();
  line.remove_prefix(begin);
  const auto end = line.find(' ');
  const auto field = line.substr(0, end);
  line = end == std::string_view::npos ? std::string_view() : line.substr(end);
  return field;
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Debug information from a local file only (/usr/lib/debug/.build-id/), never debuginfod:
// a run must not fetch files over the network.
int find_local_debuginfo(Dwfl_Module* module, void** /*userdata*/, const char* /*name*/,
                         Dwarf_Addr /*base*/, const char* /*file*/, const char* /*debuglink*/,
                         GElf_Word /*crc*/, char** debuginfo_file_name) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int length = dwfl_module_build_id(module, &bits, &vaddr);
  if (length <= 1) return -1;
  std::string path = fmt::format("/usr/lib/debug/.build-id/{:02x}/", bits[0]);
  for (int index = 1; index < length; ++index) path += fmt::format("{:02x}", bits[index]);
  path += ".debug";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) *debuginfo_file_name = ::strdup(path.c_str());
  return fd;
}

const Dwfl_Callbacks kCallbacks = {dwfl_build_id_find_elf, find_local_debuginfo,
                                   dwfl_offline_section_address, nullptr};

}  // namespace

class ModuleSymbols {
 public:
  static std::unique_ptr<ModuleSymbols> open(const std::string& path);
  ~ModuleSymbols() { dwfl_end(dwfl_); }
  ModuleSymbols(const ModuleSymbols&) = delete;
  ModuleSymbols& operator=(const ModuleSymbols&) = delete;
  // The name of the function at `file_offset`, cached; "" when none.
  const std::string& name_at(uint64_t file_offset);

 private:
  struct Segment {
    uint64_t offset, vaddr, size;
  };
  explicit ModuleSymbols(Dwfl* dwfl) : dwfl_(dwfl) {}
  Dwfl* dwfl_;
  Dwfl_Module* module_ = nullptr;
  GElf_Addr bias_ = 0;
  std::vector<Segment> segments_;  // PT_LOAD
  std::unordered_map<uint64_t, std::string> names_;
};

std::unique_ptr<ModuleSymbols> ModuleSymbols::open(const std::string& path) {
  Dwfl* dwfl = dwfl_begin(&kCallbacks);
  if (dwfl == nullptr) return nullptr;
  std::unique_ptr<ModuleSymbols> symbols(new ModuleSymbols(dwfl));
  dwfl_report_begin(dwfl);
  symbols->module_ = dwfl_report_elf(dwfl, basename_of(path).c_str(), path.c_str(), -1, 0, false);
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (symbols->module_ == nullptr) return nullptr;
  Elf* elf = dwfl_module_getelf(symbols->module_, &symbols->bias_);
  size_t headers = 0;
  if (elf == nullptr || elf_getphdrnum(elf, &headers) != 0) return nullptr;
  for (size_t index = 0; index < headers; ++index) {
    GElf_Phdr header;
    if (gelf_getphdr(elf, static_cast<int>(index), &header) == nullptr) continue;
    if (header.p_type != PT_LOAD) continue;
    symbols->segments_.push_back({header.p_offset, header.p_vaddr, header.p_filesz});
  }
  return symbols;
}

const std::string& ModuleSymbols::name_at(uint64_t file_offset) {
  if (auto found = names_.find(file_offset); found != names_.end()) return found->second;
  if (names_.size() >= kMaxCachedNames) names_.clear();
  std::string name;
  for (const auto& segment : segments_) {
    if (file_offset < segment.offset || file_offset - segment.offset >= segment.size) continue;
    const GElf_Addr address = file_offset - segment.offset + segment.vaddr + bias_;
    GElf_Off offset = 0;
    GElf_Sym symbol;
    const char* found =
        dwfl_module_addrinfo(module_, address, &offset, &symbol, nullptr, nullptr, nullptr);
    if (found != nullptr) name = found;
    break;
  }
  return names_.emplace(file_offset, std::move(name)).first->second;
}

std::vector<Mapping> parse_maps(std::string_view text) {
  // "55d0c0a00000-55d0c0b00000 r-xp 00051000 fe:01 1234   /usr/lib/postgresql/15/bin/postgres"
  std::vector<Mapping> mappings;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    const auto range = next_field(line);
    const auto permissions = next_field(line);
    const auto offset = next_field(line);
    next_field(line);  // device
    next_field(line);  // inode
    const auto dash = range.find('-');
    Mapping mapping;
    if (dash == std::string_view::npos || permissions.size() < 3 || permissions[2] != 'x' ||
        !parse_hex(range.substr(0, dash), mapping.start) ||
        !parse_hex(range.substr(dash + 1), mapping.end) || !parse_hex(offset, mapping.offset)) {
      continue;
    }
    const auto path_begin = line.find_first_not_of(' ');
    if (path_begin != std::string_view::npos) mapping.path = std::string(line.substr(path_begin));
    mappings.push_back(std::move(mapping));
  }
  return mappings;
}

std::vector<KernelSymbol> parse_kallsyms(std::string_view text) {
  std::vector<KernelSymbol> symbols;
  bool any_address = false;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    KernelSymbol symbol;
    const auto address = next_field(line);
    const auto type = next_field(line);
    const auto name = next_field(line);
    if (type.size() != 1 || std::string_view("tTwW").find(type[0]) == std::string_view::npos ||
        name.empty() || !parse_hex(address, symbol.address)) {
      continue;
    }
    any_address = any_address || symbol.address != 0;
    symbol.name = std::string(name.substr(0, name.find('\t')));
    symbols.push_back(std::move(symbol));
  }
  if (!any_address) return {};
  std::stable_sort(symbols.begin(), symbols.end(),
                   [](const auto& a, const auto& b) { return a.address < b.address; });
  return symbols;
}

std::string kernel_names_note(std::string_view kptr_restrict) {
  const auto end = kptr_restrict.find_first_of(" \n");
  const auto level = kptr_restrict.substr(0, end);
  return fmt::format(
      "kernel functions show as \"[kernel]\": /proc/kallsyms gives this user no addresses "
      "(kernel.kptr_restrict is {}); root or CAP_SYSLOG gets them with kernel.kptr_restrict at 0 "
      "or 1",
      level.empty() ? "unknown" : level);
}

std::string deleted_binary_note(std::string_view path, std::optional<std::string_view> read_from) {
  if (read_from) {
    return fmt::format(
        "the server's file \"{}\" was deleted or replaced after the server started: its "
        "functions are named from the running copy ({}); restart the server to run the file on "
        "disk",
        path, *read_from);
  }
  return fmt::format(
      "the server's file \"{}\" was deleted or replaced after the server started and its running "
      "copy cannot be read (/proc/<pid>/exe and map_files): its frames show as \"[{} "
      "(deleted)+0x...]\"; restart the server, or run pgwaitprof as root",
      path, basename_of(std::string(path)));
}

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

Symbolizer::Process& Symbolizer::process(pid_t pid) {
  auto [found, added] = processes_.try_emplace(pid);
  if (added) {
    found->second.mappings = parse_maps(read_text(fmt::format("/proc/{}/maps", pid)));
    found->second.read_at = std::chrono::steady_clock::now();
  }
  found->second.used = true;
  return found->second;
}

ModuleSymbols* Symbolizer::module(const std::string& path, const std::string& open_path) {
  auto [found, added] = modules_.try_emplace(path);
  if (added) found->second = ModuleSymbols::open(open_path.empty() ? path : open_path);
  return found->second.get();
}

// A file the process maps that was deleted (or replaced: a package upgrade) after it started:
// the process still holds it, as /proc/<pid>/exe when it is the executable (readable with the
// maps) or as /proc/<pid>/map_files/<range> (root). Its frames are named from there, every
// process that maps it sharing the one module; the note says so once per file.
ModuleSymbols* Symbolizer::deleted_module(pid_t pid, const Mapping& mapping) {
  if (auto known = modules_.find(mapping.path); known != modules_.end()) {
    return known->second.get();
  }
  const std::string original = mapping.path.substr(0, mapping.path.size() - kDeleted.size());
  std::optional<std::string> read_from;
  std::error_code error;
  const auto exe = fmt::format("/proc/{}/exe", pid);
  const auto map_file =
      fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, mapping.start, mapping.end);
  if (std::filesystem::read_symlink(exe, error) == mapping.path &&
      ::access(exe.c_str(), R_OK) == 0) {
    read_from = exe;
  } else if (::access(map_file.c_str(), R_OK) == 0) {
    read_from = map_file;
  }
  auto* symbols = read_from ? module(mapping.path, *read_from) : nullptr;
  if (!read_from) modules_.try_emplace(mapping.path);  // null: unreadable, not tried again
  note(deleted_binary_note(
      original, symbols != nullptr ? std::optional<std::string_view>(*read_from) : std::nullopt));
  return symbols;
}

void Symbolizer::note(std::string text) {
  if (noted_.insert(text).second) notes_.push_back(std::move(text));
}

std::vector<std::string> Symbolizer::take_notes() { return std::exchange(notes_, {}); }

std::optional<std::string> Symbolizer::file_symbol(const std::string& path, uint64_t file_offset) {
  auto* symbols = module(path, "");
  if (symbols == nullptr) return std::nullopt;
  const auto& name = symbols->name_at(file_offset);
  if (name.empty()) return std::nullopt;
  return name;
}

std::string Symbolizer::user_frame(pid_t pid, uint64_t address) {
  auto& entry = process(pid);
  auto in = [address](const Mapping& mapping) {
    return address >= mapping.start && address < mapping.end;
  };
  auto mapping = std::find_if(entry.mappings.begin(), entry.mappings.end(), in);
  const auto now = std::chrono::steady_clock::now();
  if (mapping == entry.mappings.end() && now - entry.read_at >= kMapsRereadAfter) {
    entry.mappings = parse_maps(read_text(fmt::format("/proc/{}/maps", pid)));
    entry.read_at = now;
    mapping = std::find_if(entry.mappings.begin(), entry.mappings.end(), in);
  }
  if (mapping == entry.mappings.end() || mapping->path.empty()) return "[unknown]";
  if (mapping->path.front() == '[') return mapping->path;  // [vdso], [vsyscall]
  const uint64_t file_offset = address - mapping->start + mapping->offset;
  if (mapping->path.front() == '/' && mapping->path.ends_with(kDeleted)) {
    if (auto* symbols = deleted_module(pid, *mapping)) {
      const auto& name = symbols->name_at(file_offset);
      if (!name.empty()) return name;
      const auto original = mapping->path.substr(0, mapping->path.size() - kDeleted.size());
      return fmt::format("[{}+0x{:x}]", basename_of(original), file_offset);
    }
  } else if (mapping->path.front() == '/') {
    if (auto name = file_symbol(mapping->path, file_offset)) return *name;
  }
  return fmt::format("[{}+0x{:x}]", basename_of(mapping->path), file_offset);
}

std::string Symbolizer::kernel_frame(uint64_t address) {
  if (!kernel_) {
    kernel_ = parse_kallsyms(read_text("/proc/kallsyms"));
    if (kernel_->empty()) note(kernel_names_note(read_text("/proc/sys/kernel/kptr_restrict")));
  }
  auto after =
      std::upper_bound(kernel_->begin(), kernel_->end(), address,
                       [](uint64_t value, const auto& symbol) { return value < symbol.address; });
  if (after == kernel_->begin()) return "[kernel]_[k]";
  return std::prev(after)->name + "_[k]";
}

void Symbolizer::forget_idle_processes() {
  std::erase_if(processes_, [](const auto& entry) { return !entry.second.used; });
  for (auto& [pid, entry] : processes_) entry.used = false;
}

}  // namespace pgwaitprof::collectors::cpu
