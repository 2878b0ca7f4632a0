// Preloaded (LD_PRELOAD) into every test program and what it starts (tests/CMakeLists.txt): each
// report.json and matrix table.json that a process of the suite renames into place, which is how
// pgwaitprof writes them (store/atomic_file.cc), is also copied into the collecting directory,
// so that the schema check after the suite (tests/deploy/validate_json.py --collected) validates
// every one of them, whichever test wrote it and however soon it deleted its directory.
// Plain system calls only: it runs inside pgbench and the servers' clients too.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#ifndef PGWAITPROF_JSON_OUTPUTS
#error "PGWAITPROF_JSON_OUTPUTS must name the collecting directory"
#endif

namespace {

using RenameFunction = int (*)(const char*, const char*);

std::atomic<unsigned> copies{0};

const char* collected_kind(const char* path) {
  const char* slash = std::strrchr(path, '/');
  const char* name = slash ? slash + 1 : path;
  if (std::strcmp(name, "report.json") == 0 || std::strcmp(name, "table.json") == 0) return name;
  return nullptr;
}

bool copy_file(const char* from, const char* to) {
  const int input = ::open(from, O_RDONLY | O_CLOEXEC);
  if (input < 0) return false;
  const int output = ::open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  bool ok = output >= 0;
  char buffer[65536];
  while (ok) {
    const ssize_t got = ::read(input, buffer, sizeof buffer);
    if (got <= 0) {
      ok = got == 0;
      break;
    }
    ok = ::write(output, buffer, static_cast<size_t>(got)) == got;
  }
  ::close(input);
  if (output >= 0) ::close(output);
  return ok;
}

// A copy of `path` under its own name, and a line "NAME<TAB>PATH" in origins.tsv that says which
// file it was. Complete copies only: written under a temporary name, then renamed.
void collect(RenameFunction real_rename, const char* path, const char* kind) {
  const unsigned number = copies.fetch_add(1);
  char name[96];
  std::snprintf(name, sizeof name, "%d.%u.%s", static_cast<int>(::getpid()), number, kind);
  char temporary[4096];
  char final_path[4096];
  std::snprintf(temporary, sizeof temporary, "%s/.%s.tmp", PGWAITPROF_JSON_OUTPUTS, name);
  std::snprintf(final_path, sizeof final_path, "%s/%s", PGWAITPROF_JSON_OUTPUTS, name);
  ::mkdir(PGWAITPROF_JSON_OUTPUTS, 0755);
  if (!copy_file(path, temporary) || real_rename(temporary, final_path) != 0) {
    ::unlink(temporary);
    return;
  }
  char line[4200];
  const int length = std::snprintf(line, sizeof line, "%s\t%s\n", name, path);
  const int origins = ::open(PGWAITPROF_JSON_OUTPUTS "/origins.tsv",
                             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (origins >= 0) {
    if (length > 0) (void)!::write(origins, line, static_cast<size_t>(length));
    ::close(origins);
  }
}

}  // namespace

extern "C" int rename(const char* from, const char* to) {
  static const auto real_rename = reinterpret_cast<RenameFunction>(::dlsym(RTLD_NEXT, "rename"));
  const int result = real_rename(from, to);
  if (result == 0) {
    const int saved_errno = errno;
    if (const char* kind = collected_kind(to)) collect(real_rename, to, kind);
    errno = saved_errno;
  }
  return result;
}
