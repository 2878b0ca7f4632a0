// /proc maps, ELF dynamic symbols and bounded process_vm_readv.
#include "collectors/memory/remote_process.h"

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace pgwaitprof::collectors::memory {
namespace {

bool hex(std::string_view text, uint64_t& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return error == std::errc() && end == text.data() + text.size();
}

// The next space-separated field of `line`, from `at`.
std::string_view field(std::string_view line, size_t& at) {
  while (at < line.size() && line[at] == ' ') ++at;
  const size_t start = at;
  while (at < line.size() && line[at] != ' ') ++at;
  return line.substr(start, at - start);
}

template <typename T>
bool copy_at(std::string_view bytes, uint64_t offset, T& into) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&into, bytes.data() + offset, sizeof(T));
  return true;
}

base::Error malformed(std::string_view what) {
  return base::Error{fmt::format("the server's executable is not a readable ELF file: {}", what)};
}

std::string errno_text(int error) { return std::strerror(error); }

// The data objects named in `names` from one symbol table, into `image` (names it holds already
// are skipped). From the full table (`local`), only object symbols, and a name defined twice
// (two files' statics) is an error rather than a guess.
base::Status read_symbols(std::string_view bytes, const std::vector<Elf64_Shdr>& sections,
                          const Elf64_Shdr& table, std::span<const std::string_view> names,
                          bool local, ElfImage& image) {
  if (table.sh_link >= sections.size() || table.sh_entsize != sizeof(Elf64_Sym)) {
    return malformed("a symbol table is malformed");
  }
  const auto& strings = sections[table.sh_link];
  if (strings.sh_offset > bytes.size() || bytes.size() - strings.sh_offset < strings.sh_size) {
    return malformed("string table out of the file");
  }
  const auto string_table = bytes.substr(strings.sh_offset, strings.sh_size);
  std::map<std::string, ElfSymbol, std::less<>> found;
  for (uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= table.sh_size;
       offset += sizeof(Elf64_Sym)) {
    Elf64_Sym symbol{};
    if (!copy_at(bytes, table.sh_offset + offset, symbol)) return malformed("symbol out of file");
    if (symbol.st_name >= string_table.size() || symbol.st_shndx == SHN_UNDEF) continue;
    if (local && ELF64_ST_TYPE(symbol.st_info) != STT_OBJECT) continue;
    const auto rest = string_table.substr(symbol.st_name);
    const auto name = rest.substr(0, rest.find('\0'));
    if (image.symbols.contains(name) ||
        std::find(names.begin(), names.end(), name) == names.end()) {
      continue;
    }
    if (found.contains(name)) {
      return base::Error{fmt::format(
          "the server's executable defines \"{}\" more than once in its symbol table", name)};
    }
    found[std::string(name)] = {symbol.st_value, symbol.st_size};
  }
  image.symbols.merge(found);
  return std::nullopt;
}

}  // namespace

std::vector<Mapping> parse_maps(std::string_view text) {
  std::vector<Mapping> maps;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const auto line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    size_t at = 0;
    const auto range = field(line, at);
    Mapping mapping;
    mapping.perms = std::string(field(line, at));
    const auto offset = field(line, at);
    field(line, at);  // device
    field(line, at);  // inode
    while (at < line.size() && line[at] == ' ') ++at;
    mapping.path = std::string(line.substr(at));
    const size_t dash = range.find('-');
    if (dash == std::string_view::npos || !hex(range.substr(0, dash), mapping.start) ||
        !hex(range.substr(dash + 1), mapping.end) || mapping.end <= mapping.start ||
        !hex(offset, mapping.offset) || mapping.perms.size() != 4) {
      continue;
    }
    maps.push_back(std::move(mapping));
  }
  return maps;
}

base::Expected<std::vector<Mapping>> read_maps(pid_t pid) {
  const auto path = fmt::format("/proc/{}/maps", pid);
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty()) {
    return base::Error{fmt::format("could not read \"{}\": {}", path, errno_text(errno))};
  }
  return parse_maps(text.str());
}

const Mapping* find_mapping(const std::vector<Mapping>& maps, uint64_t address, uint64_t length) {
  for (const auto& mapping : maps) {
    if (mapping.contains(address, length)) return &mapping;
  }
  return nullptr;
}

base::Expected<ElfImage> parse_elf(std::string_view bytes,
                                   std::span<const std::string_view> names) {
  Elf64_Ehdr header{};
  if (!copy_at(bytes, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return malformed("no ELF header");
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    return malformed("not a 64-bit little-endian file");
  }
  ElfImage image;
  image.position_independent = header.e_type == ET_DYN;
  for (uint16_t index = 0; index < header.e_phnum; ++index) {
    Elf64_Phdr program{};
    if (!copy_at(bytes, header.e_phoff + uint64_t{index} * sizeof(Elf64_Phdr), program)) {
      return malformed("program header out of the file");
    }
    if (program.p_type == PT_LOAD) {
      image.segments.push_back(
          {program.p_vaddr, program.p_memsz, program.p_offset, (program.p_flags & PF_W) != 0});
    }
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (uint16_t index = 0; index < header.e_shnum; ++index) {
    if (!copy_at(bytes, header.e_shoff + uint64_t{index} * sizeof(Elf64_Shdr), sections[index])) {
      return malformed("section header out of the file");
    }
  }
  const Elf64_Shdr* dynsym = nullptr;
  const Elf64_Shdr* symtab = nullptr;
  for (const auto& section : sections) {
    if (section.sh_type == SHT_DYNSYM) dynsym = &section;
    if (section.sh_type == SHT_SYMTAB) symtab = &section;
  }
  if (dynsym == nullptr) return malformed("no dynamic symbol table");
  if (auto error = read_symbols(bytes, sections, *dynsym, names, false, image)) return *error;
  // A name the dynamic table lacks (a static variable: MyBEEntry of PostgreSQL 13) may be in
  // the full table of a build that was not stripped, as a local symbol.
  if (symtab != nullptr && image.symbols.size() < names.size()) {
    if (auto error = read_symbols(bytes, sections, *symtab, names, true, image)) return *error;
  }
  return image;
}

base::Expected<ElfImage> read_executable(pid_t pid, std::span<const std::string_view> names) {
  const auto path = fmt::format("/proc/{}/exe", pid);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in || bytes.str().empty()) {
    return base::Error{fmt::format("could not read \"{}\": {}", path, errno_text(errno))};
  }
  return parse_elf(bytes.str(), names);
}

base::Expected<uint64_t> symbol_address(const ElfImage& image, const std::vector<Mapping>& maps,
                                        std::string_view executable_path, std::string_view name,
                                        uint64_t length) {
  const auto symbol = image.symbols.find(name);
  if (symbol == image.symbols.end()) {
    return base::Error{fmt::format("symbol \"{}\" is not in the server's symbol tables", name)};
  }
  if (symbol->second.size != length) {
    return base::Error{
        fmt::format("symbol \"{}\" has {} bytes, expected {}", name, symbol->second.size, length)};
  }
  uint64_t bias = 0;
  if (image.position_independent) {
    const LoadSegment* first = nullptr;
    for (const auto& segment : image.segments) {
      if (segment.file_offset == 0) first = &segment;
    }
    const Mapping* base_mapping = nullptr;
    for (const auto& mapping : maps) {
      if (mapping.offset == 0 && mapping.path == executable_path) {
        base_mapping = &mapping;
        break;
      }
    }
    if (first == nullptr || base_mapping == nullptr) {
      return base::Error{"could not find where the server's executable is loaded"};
    }
    bias = base_mapping->start - (first->vaddr & ~uint64_t{0xfff});
  }
  const uint64_t address = bias + symbol->second.value;
  bool in_segment = false;
  for (const auto& segment : image.segments) {
    in_segment |= segment.writable && symbol->second.value >= segment.vaddr &&
                  symbol->second.value + length <= segment.vaddr + segment.memsz;
  }
  const Mapping* mapping = find_mapping(maps, address, length);
  if (!in_segment || mapping == nullptr || !mapping->readable()) {
    return base::Error{fmt::format("symbol \"{}\" is not in the server's data", name)};
  }
  return address;
}

base::Expected<std::shared_ptr<const SharedView>> SharedView::open(pid_t pid,
                                                                   const Mapping& mapping) {
  if (!mapping.shared() || !mapping.readable() || mapping.offset != 0) {
    return base::Error{"the mapping is not shared memory from its start"};
  }
  const auto path = fmt::format("/proc/{}/map_files/{:x}-{:x}", pid, mapping.start, mapping.end);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return base::Error{fmt::format("could not open \"{}\": {}", path, errno_text(errno))};
  const size_t length = mapping.end - mapping.start;
  struct stat file {};
  void* base = MAP_FAILED;
  if (fstat(fd, &file) == 0 && static_cast<uint64_t>(file.st_size) >= length) {
    base = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  }
  const int error = errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    return base::Error{fmt::format("could not map \"{}\": {}", path, errno_text(error))};
  }
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  std::shared_ptr<const SharedView> view(
      new SharedView(mapping, static_cast<const char*>(base), pidfd));
  if (pidfd < 0) return base::Error{fmt::format("could not open a pidfd of process {}", pid)};
  // The same memory both ways: the segment's header (PostgreSQL's PGShmemHeader) does not move.
  std::array<char, 64> direct{};
  const RemoteMemory memory(pid, {mapping});
  if (auto failed = memory.read(mapping.start, direct.data(), direct.size())) return *failed;
  if (std::memcmp(direct.data(), view->at(mapping.start), direct.size()) != 0) {
    return base::Error{fmt::format("\"{}\" does not show the memory of process {}", path, pid)};
  }
  return view;
}

SharedView::~SharedView() {
  munmap(const_cast<char*>(base_), mapping_.end - mapping_.start);  // NOLINT
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool SharedView::alive() const {
  pollfd exited{pidfd_, POLLIN, 0};
  return poll(&exited, 1, 0) == 0;
}

base::Status RemoteMemory::map_shared() {
  if (allowed_.size() != 1) return base::Error{"more than one mapping is allowed"};
  auto view = SharedView::open(pid_, allowed_.front());
  if (!view) return view.error();
  view_ = std::move(*view);
  return std::nullopt;
}

// Each piece copied in turn; the fence keeps the compiler from merging or reordering the loads
// of the pieces (x86 keeps loads in order), as the kernel's copy keeps them in order.
base::Status RemoteMemory::alive() const {
  if (view_ && !view_->alive()) {
    return base::Error{fmt::format("could not read the memory of process {}: it has exited", pid_)};
  }
  return std::nullopt;
}

base::Status RemoteMemory::read_view(std::span<const RemoteRead> reads) const {
  if (auto gone = alive()) return gone;
  for (const auto& read : reads) {
    if (!view_->mapping().contains(read.address, read.length)) {
      return base::Error{
          fmt::format("refused to read {} bytes at 0x{:x}: outside the server's shared memory",
                      read.length, read.address)};
    }
    std::memcpy(read.into, view_->at(read.address), read.length);
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  return std::nullopt;
}

base::Status RemoteMemory::read(std::span<const RemoteRead> reads) const {
  if (view_) return read_view(reads);
  auto& local = local_;
  auto& remote = remote_;
  const size_t batch = std::min<size_t>(reads.size(), IOV_MAX);
  for (size_t first = 0; first < reads.size(); first += batch) {
    local.clear();
    remote.clear();
    size_t expected = 0;
    for (size_t index = first; index < reads.size() && index < first + batch; ++index) {
      const auto& read = reads[index];
      if (find_mapping(allowed_, read.address, read.length) == nullptr) {
        return base::Error{
            fmt::format("refused to read {} bytes at 0x{:x}: outside the server's shared memory",
                        read.length, read.address)};
      }
      local.push_back({read.into, read.length});
      remote.push_back({reinterpret_cast<void*>(read.address), read.length});  // NOLINT
      expected += read.length;
    }
    const ssize_t got =
        process_vm_readv(pid_, local.data(), local.size(), remote.data(), remote.size(), 0);
    if (got < 0) {
      return base::Error{
          fmt::format("could not read the memory of process {}: {}", pid_, errno_text(errno))};
    }
    if (static_cast<size_t>(got) != expected) {
      return base::Error{fmt::format("could not read the memory of process {}: short read", pid_)};
    }
  }
  return std::nullopt;
}

base::Status RemoteMemory::read(uint64_t address, void* into, size_t length) const {
  const RemoteRead one{address, into, length};
  return read(std::span<const RemoteRead>(&one, 1));
}

}  // namespace pgwaitprof::collectors::memory
