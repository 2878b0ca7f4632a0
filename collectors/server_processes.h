// A server's processes and files as this host sees them. A server in a PID namespace of its own
// (a container, `unshare --pid`) names its processes by that namespace's pids (pg_backend_pid(),
// pg_stat_activity, PGPROC, postmaster.pid), and a server under a root of its own (a chroot, a
// container's file system) names its files from there (data_directory). /proc/<pid>/status's
// NSpid line gives a process's pid in each PID namespace from this /proc's down to its own, and
// /proc/<pid>/root is its root: ServerProcesses finds the server from its session backend's pid
// and its data directory, and maps the server's pids and paths to this host's.
#pragma once

#include <sys/types.h>

#include <asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/expected.h"
#include "collectors/pg_session.h"

namespace pgwaitprof::collectors {

// Pure: the NSpid line of a /proc/<pid>/status text: the process's pid in this /proc's PID
// namespace first, in its own namespace last; empty when the line is absent.
std::vector<int32_t> parse_nspid(std::string_view status);
// Pure: the PPid line of a /proc/<pid>/status text; 0 when absent.
pid_t parse_status_parent(std::string_view status);

// The server's own record of its postmaster (postmaster.pid: the pid on line 1, as the server
// names it, the start time on line 3, both written at start) against the postmaster found and
// the server's start (pg_postmaster_start_time(), give or take 2 s).
enum class LockFile { kAgrees, kAnother, kUnreadable };
LockFile check_lock_file(std::string_view text, pid_t postmaster, int64_t server_start);

class ServerProcesses {
 public:
  ServerProcesses() = default;
  ServerProcesses(pid_t postmaster, int32_t postmaster_in_server, pid_t session_backend,
                  int namespace_depth, std::string root, std::string root_shown);
  // This host's pids of the postmaster and of the session's backend.
  pid_t postmaster() const { return postmaster_; }
  pid_t session_backend() const { return session_backend_; }
  // The postmaster's pid as the server names it (postmaster.pid's first line).
  int32_t postmaster_in_server() const { return postmaster_in_server_; }
  // Whether the server's pids are not this host's (a PID namespace below this one).
  bool own_pid_namespace() const { return namespace_depth_ > 1; }
  // Whether the server sees another root than this process (its paths are not ours).
  bool own_root() const { return !root_.empty(); }
  // This host's pid of the server's process `server_pid` (the postmaster or one of its
  // children), 0 when there is none (it exited). In another namespace, a miss re-reads the
  // postmaster's children, at most every 10 ms.
  pid_t host_pid(int32_t server_pid);
  // The server's pid of this host's process `host_pid`, 0 when it is not the server's.
  int32_t server_pid(pid_t host_pid);
  // This host's path of a path the server names (through /proc/<postmaster>/root).
  std::string host_path(std::string_view server_path) const;
  // For logs and reasons: "" for a server in this process's namespace and root, else e.g.
  // "in its own PID namespace, root /srv/sid".
  std::string description() const;

 private:
  void refresh();
  pid_t postmaster_ = 0;
  int32_t postmaster_in_server_ = 0;
  pid_t session_backend_ = 0;
  int namespace_depth_ = 1;  // the NSpid line's length
  std::string root_;         // "/proc/<postmaster>/root" when the server's root is not ours
  std::string root_shown_;   // its target, for people
  std::unordered_map<int32_t, pid_t> to_host_;
  std::unordered_map<pid_t, int32_t> to_server_;
  std::chrono::steady_clock::time_point refreshed_{};
};

// The server whose backend `session_pid` (as the server names it) serves a session and whose
// data directory is `data_directory` (as the server names it); `server_start` (seconds since the
// epoch, pg_postmaster_start_time()) tells two such servers apart. The error says why not, in one
// line: "its backend N is not a process here" (the server is on another host, or in a PID
// namespace this one cannot see), or, starting "the server runs", which processes of other PID
// namespaces could not be told apart.
base::Expected<ServerProcesses> find_server_processes(int32_t session_pid,
                                                      const std::string& data_directory,
                                                      int64_t server_start);
// The same for the server `session` is connected to (its data directory and start asked). Over
// a Unix socket, a postmaster that has no pid in this namespace (SO_PEERCRED of a connection to
// its socket says 0) is a server on this host in a PID namespace this one cannot see, and the
// error says so.
asio::awaitable<base::Expected<ServerProcesses>> find_session_server(PgSession& session);
// The reason a report gives for a server not sampled as local: the error's line where it is about
// a server on this host in another PID namespace ("the server runs ..."), else "the server is on
// another host".
std::string not_local_reason(const base::Error& error);

}  // namespace pgwaitprof::collectors
