// Reading another process's memory, and nothing more: /proc/<pid>/maps parsed, the dynamic
// symbols of the executable a process runs, and process_vm_readv(2) confined to address ranges
// derived and verified beforehand. There is no write, no ptrace attach and no signal here: a
// read outside the allowed ranges is refused before any system call.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.h"

namespace pgwaitprof::collectors::memory {

// One line of /proc/<pid>/maps.
struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;   // one past the last byte
  std::string perms;  // "rw-s": read, write, execute, s(hared) or p(rivate)
  uint64_t offset = 0;
  std::string path;  // "" for an anonymous mapping; "/dev/zero (deleted)" for shared memory
  bool contains(uint64_t address, uint64_t length) const {
    return address >= start && length <= end - start && address - start <= end - start - length;
  }
  bool shared() const { return perms.size() == 4 && perms[3] == 's'; }
  bool readable() const { return !perms.empty() && perms[0] == 'r'; }
};

// Pure: the lines of a maps file; lines that do not parse are skipped.
std::vector<Mapping> parse_maps(std::string_view text);
base::Expected<std::vector<Mapping>> read_maps(pid_t pid);
// The mapping that holds [address, address + length), or null.
const Mapping* find_mapping(const std::vector<Mapping>& maps, uint64_t address, uint64_t length);

struct ElfSymbol {
  uint64_t value = 0;  // st_value: an address relative to the load bias
  uint64_t size = 0;
};
struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t file_offset = 0;
  bool writable = false;
};
struct ElfImage {
  bool position_independent = false;  // ET_DYN: addresses are relative to the load bias
  std::vector<LoadSegment> segments;
  std::map<std::string, ElfSymbol, std::less<>> symbols;  // the symbols asked for
};

// Pure: the PT_LOAD segments and the named symbols of a 64-bit little-endian ELF file's bytes,
// from .dynsym or, for names it lacks, from .symtab's objects (where the file was not stripped),
// every offset bounds-checked; an error names what is malformed or ambiguous. A name found in
// neither is simply absent.
base::Expected<ElfImage> parse_elf(std::string_view bytes, std::span<const std::string_view> names);
// The executable `pid` runs (/proc/<pid>/exe, the very file even if replaced on disk).
base::Expected<ElfImage> read_executable(pid_t pid, std::span<const std::string_view> names);

// Where a symbol of `image` lives in a process with these mappings: the load bias is taken from
// the mapping of the executable's file offset 0, and the address must fall in a writable
// PT_LOAD segment of the image and in a readable mapping. Errors say which check failed.
base::Expected<uint64_t> symbol_address(const ElfImage& image, const std::vector<Mapping>& maps,
                                        std::string_view executable_path, std::string_view name,
                                        uint64_t length);

struct RemoteRead {
  uint64_t address = 0;
  void* into = nullptr;
  size_t length = 0;
};

// One shared mapping of a process mapped read-only into this one, through
// /proc/<pid>/map_files (which the kernel opens for root or CAP_CHECKPOINT_RESTORE, not for the
// process's own user): reading it is a memory load, no system call. The mapping keeps the memory
// alive after the process exits, so `alive()` asks a pidfd of the process, and the view is
// dropped as soon as it says no.
class SharedView {
 public:
  // The view of `mapping` (shared, offset 0) of `pid`, or an error saying why not; its first
  // bytes must equal what process_vm_readv reads there.
  static base::Expected<std::shared_ptr<const SharedView>> open(pid_t pid, const Mapping& mapping);
  SharedView(const SharedView&) = delete;
  SharedView& operator=(const SharedView&) = delete;
  ~SharedView();
  const Mapping& mapping() const { return mapping_; }
  // The bytes at `address` of the process (inside mapping(), checked by the caller).
  const char* at(uint64_t address) const { return base_ + (address - mapping_.start); }
  bool alive() const;

 private:
  SharedView(Mapping mapping, const char* base, int pidfd)
      : mapping_(std::move(mapping)), base_(base), pidfd_(pidfd) {}
  Mapping mapping_;
  const char* base_;
  int pidfd_;
};

// Bounded reads of one process's memory, only inside `allowed`: by process_vm_readv(2), or,
// after map_shared(), by copying from a SharedView. One thread at a time: its iovec buffers are
// reused from read to read, so that a tick allocates nothing.
class RemoteMemory {
 public:
  RemoteMemory() = default;
  RemoteMemory(pid_t pid, std::vector<Mapping> allowed) : pid_(pid), allowed_(std::move(allowed)) {}
  pid_t pid() const { return pid_; }
  // Every read, in order, in as few system calls as the kernel's iovec limit allows (none with
  // a view). An error (the process is gone, a range outside `allowed`, a short read) leaves
  // `into` unspecified.
  base::Status read(std::span<const RemoteRead> reads) const;
  base::Status read(uint64_t address, void* into, size_t length) const;
  // Reads through a view of the one allowed mapping from now on, when the kernel lets this
  // process map it; the error says why not, and reads stay with process_vm_readv.
  base::Status map_shared();
  bool mapped() const { return view_ != nullptr; }
  // With a view, an error when the process has exited (read() asks the same first).
  base::Status alive() const;
  // Through the view: where the `length` bytes at `address` are, or null outside the mapping.
  // For loads after alive() said yes.
  const char* view_at(uint64_t address, size_t length) const {
    return view_ && view_->mapping().contains(address, length) ? view_->at(address) : nullptr;
  }
  // Drops the view (the memory of an exited server is freed only when nobody maps it).
  void release() { view_.reset(); }

 private:
  base::Status read_view(std::span<const RemoteRead> reads) const;
  pid_t pid_ = 0;
  std::vector<Mapping> allowed_;
  std::shared_ptr<const SharedView> view_;
  mutable std::vector<iovec> local_;
  mutable std::vector<iovec> remote_;
};

}  // namespace pgwaitprof::collectors::memory
