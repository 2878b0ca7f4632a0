// The watchdog of the processes and scratch directories pgwaitprof starts.
#include "daemon/engine/supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "base/logging.h"
#include "base/regular_file.h"
#include "daemon/engine/fault_point.h"

extern char** environ;

namespace pgwaitprof::engine {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

auto supervisor_log() {
  static auto logger = base::component_logger("supervisor");
  return logger;
}

// The write end of the pipe to the watchdog; -1 before it started or when it could not. What
// is registered is kept here too, to register it again with a new watchdog. Registrations come
// from the threads that spawn children, the watchdog's death from its monitor: one mutex.
struct Watchdog {
  std::mutex mutex;
  bool enabled = false;
  int fd = -1;
  bool failed = false;
  pid_t pid = -1;
  bool monitored = false;
  std::set<pid_t> groups;
  std::set<std::string> directories;
};

Watchdog& watchdog() {
  static auto* instance = new Watchdog;  // never destroyed: its monitor thread outlives main
  return *instance;
}

// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot. A pid and
// its start time name one process, also after the pid was reused.
std::optional<unsigned long long> start_ticks(pid_t pid) {
  const std::string text = base::read_proc_text(fmt::format("/proc/{}/stat", pid));
  const auto paren = text.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  // Fields 3 (state) to 21 come before the start time.
  for (int index = 3; index <= 21; ++index) fields >> field;
  unsigned long long ticks = 0;
  if (!(fields >> ticks)) return std::nullopt;
  return ticks;
}

// Field 3 of /proc/PID/stat, the process's state (R, S, D, T, t, Z, ...); '\0' when gone.
char process_state(pid_t pid) {
  const std::string text = base::read_proc_text(fmt::format("/proc/{}/stat", pid));
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() ? text[paren + 2] : '\0';
}

// Stopped (SIGSTOP, or held by a tracer): it runs no code until someone continues it.
bool stopped_state(char state) { return state == 'T' || state == 't'; }

// Whether that process still does its work: a zombie (killed, its parent not yet reaping it, or
// a parent killed too whose orphans init has not reaped yet) is gone, and so is a stopped one:
// a stopped watchdog cleans nothing up, and nobody may be left to continue it.
bool alive(pid_t pid, unsigned long long ticks) {
  const auto now = start_ticks(pid);
  if (!now || *now != ticks) return false;
  const char state = process_state(pid);
  return state != '\0' && state != 'Z' && state != 'X' && !stopped_state(state);
}

// This process's PID namespace (the inode of /proc/self/ns/pid): the pids of an owner file are
// that namespace's; 0 when it cannot be read.
unsigned long long pid_namespace() {
  struct stat info {};
  return ::stat("/proc/self/ns/pid", &info) == 0 ? info.st_ino : 0;
}

// The owner file of a scratch directory: this process and its watchdog of the moment, and the
// PID namespace their pids belong to (last: an older pgwaitprof's reader stops there).
void write_owner_locked(const Watchdog& state, const fs::path& directory) {
  std::ofstream file(directory / "owner");
  file << fmt::format("pgwaitprof {} {}\n", ::getpid(), start_ticks(::getpid()).value_or(0));
  if (state.pid > 0) {
    file << fmt::format("watchdog {} {}\n", state.pid, start_ticks(state.pid).value_or(0));
  }
  file << fmt::format("pidns {}\n", pid_namespace());
}

void monitor_watchdog();

// The watchdog: this binary again, in its own session, deaf to the terminal's signals, its
// standard input the read end of the registrations pipe. Only async-signal-safe calls between
// fork and exec: the daemon has threads.
void start_watchdog_locked(Watchdog& state, bool replacement = false) {
  if (!state.enabled || state.fd >= 0 || state.failed) return;
  if (replacement && fault_fails("watchdog-restart")) {
    state.failed = true;
    supervisor_log()->warn("could not start the watchdog: could not fork: injected fault");
    return;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    state.failed = true;
    supervisor_log()->warn("could not start the watchdog: could not create pipe: {}",
                           std::strerror(errno));
    return;
  }
  const std::string self = "/proc/self/exe";
  const std::string name = "pgwaitprof";
  const std::string command(kSuperviseCommand);
  char* argv[] = {const_cast<char*>(name.c_str()), const_cast<char*>(command.c_str()), nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[0], STDIN_FILENO);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      ::dup2(devnull, STDOUT_FILENO);
      ::dup2(devnull, STDERR_FILENO);
    }
    ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
    ::setsid();
    for (const int signal_number : {SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGPIPE, SIGTSTP}) {
      ::signal(signal_number, SIG_IGN);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    [[maybe_unused]] const int changed = ::chdir("/");
    ::execve(self.c_str(), argv, environ);
    ::_exit(127);
  }
  ::close(pipe_fds[0]);
  if (pid < 0) {
    ::close(pipe_fds[1]);
    state.failed = true;
    supervisor_log()->warn("could not start the watchdog: could not fork: {}",
                           std::strerror(errno));
    return;
  }
  state.fd = pipe_fds[1];
  state.pid = pid;
  supervisor_log()->debug("started watchdog pid={}", pid);
  if (!state.monitored) {
    state.monitored = true;
    std::thread(monitor_watchdog).detach();
  }
}

// One line is far below PIPE_BUF: written whole or not at all. False when the watchdog is gone.
bool write_line_locked(Watchdog& state, const std::string& line) {
  ssize_t written = 0;
  while ((written = ::write(state.fd, line.data(), line.size())) < 0 && errno == EINTR) {
  }
  return written == static_cast<ssize_t>(line.size());
}

// The watchdog died before this process (killed, or the OOM killer), or was stopped (and then
// killed: SIGKILL ends a stopped process too): a new one, told again everything that is
// registered, and named in the owner files. When none can be started the run stops as it does
// at SIGTERM, cleaning up what it started, rather than go on unsupervised.
void replace_watchdog_locked(Watchdog& state, pid_t dead, std::string_view what = "died") {
  if (state.pid != dead) return;  // replaced already
  ::close(state.fd);
  state.fd = -1;
  ::waitpid(dead, nullptr, 0);
  supervisor_log()->warn("the watchdog (pid {}) {}; starting a new one", dead, what);
  start_watchdog_locked(state, true);
  bool told = state.fd >= 0;
  for (const pid_t group : state.groups) {
    told = told && write_line_locked(state, fmt::format("group {}\n", group));
  }
  for (const auto& directory : state.directories) {
    told = told && write_line_locked(state, fmt::format("dir {}\n", directory));
    write_owner_locked(state, directory);
  }
  if (!told) {
    supervisor_log()->error(
        "could not start a new watchdog: stopping, so that nothing is left unsupervised");
    state.failed = true;
    ::kill(::getpid(), SIGTERM);
  }
}

// Waits for the watchdog to die or to stop, and replaces it. It is this process's child, so
// waitid reports both (WNOWAIT: the exit is reaped by replace_watchdog_locked); a stopped
// watchdog would never clean up, so it is ended and replaced like a dead one. A thread of its
// own, blocked in waitid: it notices the moment the watchdog dies or stops, whatever the rest of
// the process does.
void monitor_watchdog() {
  auto& state = watchdog();
  for (;;) {
    pid_t pid = -1;
    {
      std::lock_guard lock(state.mutex);
      if (state.fd < 0) return;  // given up
      pid = state.pid;
    }
    siginfo_t info{};
    int waited = 0;
    while ((waited = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WSTOPPED | WNOWAIT)) <
               0 &&
           errno == EINTR) {
    }
    std::lock_guard lock(state.mutex);
    if (state.pid != pid) continue;  // replaced by a registration that found it gone
    if (waited < 0) return;          // not a child of ours any more: nothing to wait for
    const bool stopped = info.si_code == CLD_STOPPED || info.si_code == CLD_TRAPPED;
    if (stopped) ::kill(pid, SIGKILL);
    replace_watchdog_locked(state, pid, stopped ? "was stopped and is ended" : "died");
  }
}

void tell_watchdog(const std::string& line) {
  auto& state = watchdog();
  std::lock_guard lock(state.mutex);
  start_watchdog_locked(state);
  if (state.fd < 0) return;
  if (!write_line_locked(state, line)) {
    // Gone between two looks of the monitor: replaced here, the new one told everything.
    replace_watchdog_locked(state, state.pid);
  }
}

// Every process whose command line holds `needle`, but this one.
std::vector<pid_t> processes_naming(const std::string& needle) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  const pid_t self = ::getpid();
  while (const dirent* entry = ::readdir(proc)) {
    pid_t pid = 0;
    const std::string_view name(entry->d_name);
    if (std::from_chars(name.data(), name.data() + name.size(), pid).ec != std::errc() ||
        pid == self) {
      continue;
    }
    const std::string cmdline = base::read_proc_text(fmt::format("/proc/{}/cmdline", pid));
    if (cmdline.find(needle) != std::string::npos) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

bool is_postmaster(pid_t pid) {
  std::ifstream file(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  std::string program;
  std::getline(file, program, '\0');
  return program.ends_with("/postgres") || program == "postgres";
}

// Waits until every pidfd is readable (its process exited) or the deadline passes; closes the
// ones that became readable and returns those left.
std::vector<int> wait_exited(std::vector<int> pidfds, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!pidfds.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    std::vector<pollfd> polled;
    for (const int fd : pidfds) polled.push_back({fd, POLLIN, 0});
    const int ready = ::poll(polled.data(), polled.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    std::vector<int> running;
    for (const auto& entry : polled) {
      if (entry.revents & (POLLIN | POLLHUP | POLLERR)) {
        ::close(entry.fd);
      } else {
        running.push_back(entry.fd);
      }
    }
    pidfds = std::move(running);
  }
  return pidfds;
}

struct Owner {
  pid_t pid = -1;
  unsigned long long ticks = 0;
};

struct OwnerFile {
  std::map<std::string, Owner> owners;
  std::optional<unsigned long long> pid_namespace;  // none in an older pgwaitprof's file
};

// The owner file: "pgwaitprof PID TICKS" and "watchdog PID TICKS" lines, then "pidns INODE".
OwnerFile read_owner(const fs::path& directory) {
  OwnerFile owner_file;
  std::ifstream file(directory / "owner");
  for (std::string line; std::getline(file, line);) {
    std::istringstream fields(line);
    std::string role;
    Owner owner;
    unsigned long long inode = 0;
    if (!(fields >> role)) continue;
    if (role == "pidns" && fields >> inode) {
      owner_file.pid_namespace = inode;
    } else if (role != "pidns" && fields >> owner.pid >> owner.ticks) {
      owner_file.owners[role] = owner;
    }
  }
  return owner_file;
}

}  // namespace

void enable_watchdog() {
  std::lock_guard lock(watchdog().mutex);
  watchdog().enabled = true;
}

int stop_processes_naming(const fs::path& directory, std::chrono::milliseconds patience) {
  const std::string needle = directory.string();
  if (needle.size() < 8) return 0;  // never a pattern as short as "/tmp"
  std::vector<int> pidfds;
  int signalled = 0;
  for (const pid_t pid : processes_naming(needle)) {
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) continue;  // gone already
    // A postmaster shuts down at once with SIGQUIT and takes its backends with it.
    const int signal_number = is_postmaster(pid) ? SIGQUIT : SIGTERM;
    if (::syscall(SYS_pidfd_send_signal, pidfd, signal_number, nullptr, 0) == 0) {
      ++signalled;
      pidfds.push_back(pidfd);
    } else {
      ::close(pidfd);
    }
  }
  for (const int pidfd : wait_exited(std::move(pidfds), patience)) {
    ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
    for (const int still : wait_exited({pidfd}, 2s)) ::close(still);
  }
  return signalled;
}

int supervise_main() {
  std::set<pid_t> groups;
  std::set<std::string> directories;
  std::string pending;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    pending.append(buffer, static_cast<size_t>(got));
    for (size_t newline; (newline = pending.find('\n')) != std::string::npos;) {
      const std::string line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      const auto space = line.find(' ');
      const std::string verb = line.substr(0, space);
      const std::string argument = space == std::string::npos ? "" : line.substr(space + 1);
      pid_t group = 0;
      std::from_chars(argument.data(), argument.data() + argument.size(), group);
      if (verb == "group" && group > 1) groups.insert(group);
      if (verb == "release-group") groups.erase(group);
      if (verb == "dir") directories.insert(argument);
      if (verb == "release-dir") directories.erase(argument);
    }
  }
  // pgwaitprof is gone, and did not release these.
  for (const pid_t group : groups) ::kill(-group, SIGTERM);
  for (const auto& directory : directories) {
    stop_processes_naming(directory);
    std::error_code ignored;
    fs::remove_all(directory, ignored);
  }
  // A load generator that ignored SIGTERM (a command's own children): SIGKILL after a grace.
  for (int waited = 0; waited < 40 && !groups.empty(); ++waited) {
    std::erase_if(groups, [](pid_t group) { return ::kill(-group, 0) != 0; });
    if (!groups.empty()) std::this_thread::sleep_for(50ms);
  }
  for (const pid_t group : groups) ::kill(-group, SIGKILL);
  return 0;
}

void supervise_process_group(pid_t group) {
  {
    std::lock_guard lock(watchdog().mutex);
    watchdog().groups.insert(group);
  }
  tell_watchdog(fmt::format("group {}\n", group));
}

void release_process_group(pid_t group) {
  {
    std::lock_guard lock(watchdog().mutex);
    if (watchdog().groups.erase(group) == 0 || watchdog().fd < 0) return;
  }
  tell_watchdog(fmt::format("release-group {}\n", group));
}

void supervise_scratch_directory(const fs::path& directory) {
  {
    std::lock_guard lock(watchdog().mutex);
    watchdog().directories.insert(directory.string());
  }
  tell_watchdog(fmt::format("dir {}\n", directory.string()));
}

void release_scratch_directory(const fs::path& directory) {
  {
    std::lock_guard lock(watchdog().mutex);
    if (watchdog().directories.erase(directory.string()) == 0 || watchdog().fd < 0) return;
  }
  tell_watchdog(fmt::format("release-dir {}\n", directory.string()));
}

void write_scratch_owner(const fs::path& directory) {
  auto& state = watchdog();
  std::lock_guard lock(state.mutex);
  start_watchdog_locked(state);
  write_owner_locked(state, directory);
}

std::vector<fs::path> sweep_abandoned_scratch_directories(const fs::path& temp_directory) {
  std::vector<fs::path> removed;
  const auto own_namespace = pid_namespace();
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(temp_directory, error)) {
    const auto name = entry.path().filename().string();
    struct stat info {};
    if (!name.starts_with(kScratchPrefix) || ::lstat(entry.path().c_str(), &info) != 0 ||
        !S_ISDIR(info.st_mode)) {
      continue;
    }
    // Another user's directory is theirs to clean (root's sweep takes every one).
    if (::geteuid() != 0 && info.st_uid != ::geteuid()) continue;
    const auto [owners, owners_namespace] = read_owner(entry.path());
    // No owner file: being created right now, or not ours to judge.
    if (owners.empty()) continue;
    // Pids of another PID namespace (a pgwaitprof in a container that shares /tmp with the
    // host, or the host's seen from the container) say nothing here: a live owner would look
    // gone, and its cluster would be removed under it.
    if (owners_namespace && *owners_namespace != own_namespace) continue;
    const bool owned = std::any_of(owners.begin(), owners.end(), [](const auto& owner) {
      return alive(owner.second.pid, owner.second.ticks);
    });
    if (owned) continue;
    // A stopped watchdog would stay forever, stopped: it is ended (the pid and start time are
    // that watchdog's). A stopped pgwaitprof is the user's to continue or end.
    if (const auto found = owners.find("watchdog");
        found != owners.end() && start_ticks(found->second.pid) == found->second.ticks &&
        stopped_state(process_state(found->second.pid))) {
      ::kill(found->second.pid, SIGKILL);
    }
    stop_processes_naming(entry.path());
    std::error_code ignored;
    fs::remove_all(entry.path(), ignored);
    const auto found = owners.find("pgwaitprof");
    supervisor_log()->warn(
        "removed scratch cluster dir={} left by a pgwaitprof that ended without removing it "
        "(pid {})",
        entry.path().string(), found == owners.end() ? -1 : found->second.pid);
    removed.push_back(entry.path());
  }
  return removed;
}

}  // namespace pgwaitprof::engine
