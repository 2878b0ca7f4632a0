// Finding a server's processes through /proc, and mapping its pids and paths to this host's.
#include "collectors/server_processes.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unordered_set>

#include "base/regular_file.h"

namespace pgwaitprof::collectors {
namespace {

using namespace std::chrono_literals;
constexpr auto kRefreshEvery = 10ms;

std::string proc_path(pid_t pid, std::string_view what) {
  return fmt::format("/proc/{}/{}", pid, what);
}

// The numbers after "NAME:" on the line of a status text that starts with it.
std::vector<int64_t> status_numbers(std::string_view status, std::string_view name) {
  std::vector<int64_t> numbers;
  size_t at = 0;
  while (at < status.size()) {
    const size_t end = std::min(status.find('\n', at), status.size());
    std::string_view line = status.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != ':') continue;
    std::istringstream values{std::string(line.substr(name.size() + 1))};
    for (int64_t value = 0; values >> value;) numbers.push_back(value);
    break;
  }
  return numbers;
}

std::vector<int32_t> read_nspid(pid_t pid) {
  return parse_nspid(base::read_proc_text(proc_path(pid, "status")));
}

// Whether the process `postmaster` runs in `data_directory` as it names it: its working
// directory is that directory under its root, or (where this process may not follow those
// links) its command line names it.
bool runs_in(pid_t postmaster, const std::string& data_directory) {
  std::error_code error;
  if (std::filesystem::equivalent(proc_path(postmaster, "cwd"),
                                  proc_path(postmaster, "root") + data_directory, error)) {
    return true;
  }
  std::string cmdline = base::read_proc_text(proc_path(postmaster, "cmdline"));
  for (auto& character : cmdline) {
    if (character == '\0') character = ' ';
  }
  return cmdline.find(data_directory) != std::string::npos;
}

struct Candidate {
  pid_t backend = 0;
  pid_t postmaster = 0;
  std::vector<int32_t> postmaster_pids;  // its NSpid line
  size_t depth = 1;
};

// Every process here whose pid in its own namespace is `session_pid`, whose parent is in the
// same namespace and runs in the data directory.
std::vector<Candidate> candidates(int32_t session_pid, const std::string& data_directory) {
  std::vector<Candidate> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const auto name = entry.path().filename().string();
    pid_t pid = 0;
    const auto [end, bad] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (bad != std::errc() || end != name.data() + name.size()) continue;
    const auto status = base::read_proc_text(proc_path(pid, "status"));
    const auto pids = parse_nspid(status);
    if (pids.empty() ? pid != session_pid : pids.back() != session_pid) continue;
    const pid_t parent = parse_status_parent(status);
    if (parent <= 0) continue;
    auto parent_pids = read_nspid(parent);
    if (parent_pids.size() != pids.size() || !runs_in(parent, data_directory)) continue;
    found.push_back({pid, parent, std::move(parent_pids), std::max<size_t>(pids.size(), 1)});
  }
  return found;
}

// Whether the server's lock file (postmaster.pid under the postmaster's root) names this
// postmaster, by its pid in its namespace, and the server's start.
bool lock_file_names(const Candidate& candidate, const std::string& data_directory,
                     int64_t server_start) {
  const auto text = base::read_proc_text(proc_path(candidate.postmaster, "root") + data_directory +
                                         "/postmaster.pid");
  const int32_t own_pid =
      candidate.postmaster_pids.empty() ? candidate.postmaster : candidate.postmaster_pids.back();
  return check_lock_file(text, own_pid, server_start) == LockFile::kAgrees;
}

// "/proc/<pid>/root" when the process sees another root than this one, else "".
std::string root_of(pid_t pid) {
  struct stat ours {};
  struct stat theirs {};
  const auto root = proc_path(pid, "root");
  if (::stat("/", &ours) != 0 || ::stat(root.c_str(), &theirs) != 0 ||
      (ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino)) {
    return "";
  }
  return root;
}

// Where that root is, as this process sees it.
std::string root_shown(pid_t pid) {
  std::error_code error;
  auto shown = std::filesystem::read_symlink(proc_path(pid, "root"), error).string();
  return error ? proc_path(pid, "root") : shown;
}

// False only for a server reached through a Unix socket whose listener (the postmaster) has no
// pid in this namespace: SO_PEERCRED gives 0 for a process this namespace cannot see. The probe
// connection sends nothing, and a server says nothing of a connection that sent no byte.
bool listener_has_pid(const std::string& host, const std::string& port) {
  if (!host.starts_with('/')) return true;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const auto path = fmt::format("{}/.s.PGSQL.{}", host, port);
  if (path.size() >= sizeof address.sun_path) return true;
  path.copy(address.sun_path, path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;
  ucred peer{};
  socklen_t length = sizeof peer;
  const bool unseen =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 && peer.pid == 0;
  ::close(fd);
  return !unseen;
}

}  // namespace

std::vector<int32_t> parse_nspid(std::string_view status) {
  std::vector<int32_t> pids;
  for (const auto value : status_numbers(status, "NSpid"))
    pids.push_back(static_cast<int32_t>(value));
  return pids;
}

pid_t parse_status_parent(std::string_view status) {
  const auto values = status_numbers(status, "PPid");
  return values.empty() ? 0 : static_cast<pid_t>(values.front());
}

LockFile check_lock_file(std::string_view text, pid_t postmaster, int64_t server_start) {
  std::istringstream lines{std::string(text)};
  std::string pid_line, directory_line, start_line;
  if (!std::getline(lines, pid_line) || !std::getline(lines, directory_line) ||
      !std::getline(lines, start_line)) {
    return LockFile::kUnreadable;
  }
  auto parse = [](const std::string& line, auto& value) {
    const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), value);
    return error == std::errc() && end == line.data() + line.size();
  };
  pid_t recorded = 0;
  int64_t started = 0;
  if (!parse(pid_line, recorded) || recorded != postmaster || !parse(start_line, started) ||
      std::llabs(started - server_start) > 2) {
    return LockFile::kAnother;
  }
  return LockFile::kAgrees;
}

ServerProcesses::ServerProcesses(pid_t postmaster, int32_t postmaster_in_server,
                                 pid_t session_backend, int namespace_depth, std::string root,
                                 std::string root_shown)
    : postmaster_(postmaster),
      postmaster_in_server_(postmaster_in_server),
      session_backend_(session_backend),
      namespace_depth_(namespace_depth),
      root_(std::move(root)),
      root_shown_(std::move(root_shown)) {
  if (own_pid_namespace()) {
    to_host_[postmaster_in_server_] = postmaster_;
    to_server_[postmaster_] = postmaster_in_server_;
  }
}

void ServerProcesses::refresh() {
  refreshed_ = std::chrono::steady_clock::now();
  std::unordered_set<pid_t> children;
  std::istringstream listed{
      base::read_proc_text(proc_path(postmaster_, fmt::format("task/{}/children", postmaster_)))};
  for (pid_t child = 0; listed >> child;) children.insert(child);
  std::erase_if(to_server_, [&](const auto& entry) {
    return entry.first != postmaster_ && !children.contains(entry.first);
  });
  to_host_.clear();
  for (const auto& [host, server] : to_server_) to_host_[server] = host;
  for (const pid_t child : children) {
    if (to_server_.contains(child)) continue;
    const auto pids = read_nspid(child);
    if (static_cast<int>(pids.size()) != namespace_depth_) continue;
    to_server_[child] = pids.back();
    to_host_[pids.back()] = child;
  }
}

pid_t ServerProcesses::host_pid(int32_t server_pid) {
  if (!own_pid_namespace()) return server_pid;
  if (const auto found = to_host_.find(server_pid); found != to_host_.end()) return found->second;
  if (std::chrono::steady_clock::now() - refreshed_ < kRefreshEvery) return 0;
  refresh();
  const auto found = to_host_.find(server_pid);
  return found == to_host_.end() ? 0 : found->second;
}

int32_t ServerProcesses::server_pid(pid_t host_pid) {
  if (!own_pid_namespace()) return host_pid;
  if (const auto found = to_server_.find(host_pid); found != to_server_.end()) return found->second;
  if (std::chrono::steady_clock::now() - refreshed_ < kRefreshEvery) return 0;
  refresh();
  const auto found = to_server_.find(host_pid);
  return found == to_server_.end() ? 0 : found->second;
}

std::string ServerProcesses::host_path(std::string_view server_path) const {
  return root_ + std::string(server_path);
}

std::string ServerProcesses::description() const {
  std::string text;
  if (own_pid_namespace()) text = "in its own PID namespace";
  if (own_root()) {
    text += fmt::format("{}root {}", text.empty() ? "under its own " : ", ", root_shown_);
  }
  return text;
}

base::Expected<ServerProcesses> find_server_processes(int32_t session_pid,
                                                      const std::string& data_directory,
                                                      int64_t server_start) {
  if (session_pid <= 0 || data_directory.empty()) {
    return base::Error{"the server's backend or data directory is unknown"};
  }
  // The common case first: the backend is a process of this namespace whose parent runs in the
  // data directory and, where the lock file can be read, is the postmaster it names.
  if (read_nspid(session_pid).size() <= 1) {
    const pid_t parent =
        parse_status_parent(base::read_proc_text(proc_path(session_pid, "status")));
    if (parent > 0 && runs_in(parent, data_directory)) {
      const Candidate here{session_pid, parent, {}, 1};
      const auto lock =
          base::read_proc_text(proc_path(parent, "root") + data_directory + "/postmaster.pid");
      if (server_start <= 0 || check_lock_file(lock, parent, server_start) != LockFile::kAnother) {
        return ServerProcesses(parent, parent, session_pid, 1, root_of(parent), root_shown(parent));
      }
    }
  }
  auto found = candidates(session_pid, data_directory);
  // Two servers with the same data directory, each in a namespace and root of its own (two
  // containers of one image), are told apart by their lock files.
  if (found.size() > 1 && server_start > 0) {
    std::erase_if(found, [&](const Candidate& candidate) {
      return !lock_file_names(candidate, data_directory, server_start);
    });
  }
  if (found.empty()) {
    return base::Error{fmt::format("its backend {} is not a process here", session_pid)};
  }
  if (found.size() > 1) {
    std::string pids;
    for (const auto& candidate : found)
      pids += fmt::format("{}{}", pids.empty() ? "" : ", ", candidate.backend);
    return base::Error{fmt::format(
        "the server runs in another PID namespace, and its backend {} could be any of processes {} "
        "here",
        session_pid, pids)};
  }
  const auto& server = found.front();
  const int32_t postmaster_in_server =
      server.postmaster_pids.empty() ? server.postmaster : server.postmaster_pids.back();
  return ServerProcesses(server.postmaster, postmaster_in_server, server.backend,
                         static_cast<int>(server.depth), root_of(server.postmaster),
                         root_shown(server.postmaster));
}

asio::awaitable<base::Expected<ServerProcesses>> find_session_server(PgSession& session) {
  auto outcome = co_await session.execute(
      "SELECT current_setting('data_directory', true),"
      " extract(epoch FROM pg_postmaster_start_time())::bigint");
  if (!outcome.ok()) co_return base::Error{outcome.error->message};
  int64_t start = 0;
  const auto started = cell(outcome.result.get(), 0, 1);
  std::from_chars(started.data(), started.data() + started.size(), start);
  auto found =
      find_server_processes(session.backend_pid(), cell(outcome.result.get(), 0, 0), start);
  if (!found && !listener_has_pid(session.host(), session.port())) {
    co_return base::Error{
        "the server runs on this host in a PID namespace that this one cannot see (its "
        "postmaster, at the other end of the Unix socket, has no pid here)"};
  }
  co_return found;
}

std::string not_local_reason(const base::Error& error) {
  return error.message.starts_with("the server runs") ? error.message
                                                      : "the server is on another host";
}

}  // namespace pgwaitprof::collectors
