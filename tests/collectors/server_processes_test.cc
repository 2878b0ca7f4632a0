// Finding a server's processes: the /proc/<pid>/status parsers on strings, and
// find_server_processes() on this test's own children standing for a postmaster (working in
// its "data directory") and its backend: in this namespace, under a root of their own (a
// chroot) and in a PID namespace of their own (the last two as root).
#include "collectors/server_processes.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace pgwaitprof::collectors {
namespace {

TEST(ParseStatus, NamespacePidsAndParent) {
  const std::string status =
      "Name:\tpostgres\nUmask:\t0077\nState:\tS (sleeping)\nTgid:\t12571\nNgid:\t0\n"
      "Pid:\t12571\nPPid:\t12570\nTracerPid:\t0\nNStgid:\t12571\t2\nNSpid:\t12571\t2\n"
      "NSpgid:\t12567\t0\n";
  EXPECT_EQ(parse_nspid(status), (std::vector<int32_t>{12571, 2}));
  EXPECT_EQ(parse_status_parent(status), 12570);
  EXPECT_EQ(parse_nspid("Name:\tx\nNSpid:\t42\n"), (std::vector<int32_t>{42}));
  EXPECT_TRUE(parse_nspid("Name:\tx\nPid:\t42\n").empty());  // a kernel before 4.1
  EXPECT_TRUE(parse_nspid("NSpidx:\t1 2\n").empty());
  EXPECT_EQ(parse_status_parent("Name:\tx\n"), 0);
}

// A "postmaster" (a child working in `directory`, under `root` when given, in a PID namespace
// of its own when asked) with one "backend" of its own; the pipe says the backend's pid as the
// postmaster's namespace names it. Both are killed with this object.
struct FakeServer {
  pid_t holder = -1;  // this test's child: the postmaster, or the namespace's parent
  int32_t backend_in_server = 0;
  FakeServer(const std::filesystem::path& directory, const std::string& root, bool namespaced) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return;
    holder = ::fork();
    if (holder == 0) {
      ::setpgid(0, 0);
      if (namespaced && ::unshare(CLONE_NEWPID) != 0) ::_exit(2);
      if (namespaced && ::fork() != 0) {  // the namespace's first process is the next child
        ::pause();
        ::_exit(0);
      }
      if (!root.empty() && (::chroot(root.c_str()) != 0)) ::_exit(3);
      if (::chdir(directory.c_str()) != 0) ::_exit(4);
      const pid_t backend = ::fork();
      if (backend == 0) {
        const int32_t own = ::getpid();
        if (::write(pipe_fds[1], &own, sizeof own) != sizeof own) ::_exit(5);
        ::pause();
        ::_exit(0);
      }
      ::pause();
      ::_exit(0);
    }
    ::close(pipe_fds[1]);
    if (::read(pipe_fds[0], &backend_in_server, sizeof backend_in_server) !=
        sizeof backend_in_server) {
      backend_in_server = 0;
    }
    ::close(pipe_fds[0]);
  }
  ~FakeServer() {
    if (holder <= 0) return;
    ::kill(-holder, SIGKILL);
    ::waitpid(holder, nullptr, 0);
  }
};

TEST(FindServerProcesses, ABackendOfThisNamespace) {
  const auto directory =
      std::filesystem::temp_directory_path() / ("server-processes-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  FakeServer server(directory, "", false);
  ASSERT_GT(server.backend_in_server, 0);
  auto found = find_server_processes(server.backend_in_server, directory.string(), 0);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->postmaster(), server.holder);
  EXPECT_EQ(found->session_backend(), server.backend_in_server);
  EXPECT_FALSE(found->own_pid_namespace());
  EXPECT_FALSE(found->own_root());
  EXPECT_EQ(found->host_pid(server.backend_in_server), server.backend_in_server);
  EXPECT_EQ(found->host_path("/x"), "/x");
  EXPECT_EQ(found->description(), "");
  const auto elsewhere = find_server_processes(server.backend_in_server, "/nonexistent/data", 0);
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error().message,
            "its backend " + std::to_string(server.backend_in_server) + " is not a process here");
  std::filesystem::remove_all(directory);
}

TEST(FindServerProcesses, UnderARootOfItsOwnAndInAPidNamespaceOfItsOwn) {
  if (::geteuid() != 0) GTEST_SKIP() << "a chroot and a PID namespace need root";
  const auto root = std::filesystem::temp_directory_path() /
                    ("server-processes-root-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "data");
  FakeServer server("/data", root.string(), true);
  ASSERT_GT(server.backend_in_server, 0) << "could not start a namespaced child";
  // The namespace's first process is the postmaster (1), its child the backend (2).
  EXPECT_EQ(server.backend_in_server, 2);
  auto found = find_server_processes(server.backend_in_server, "/data", 0);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_TRUE(found->own_pid_namespace());
  EXPECT_TRUE(found->own_root());
  EXPECT_EQ(found->postmaster_in_server(), 1);
  EXPECT_NE(found->session_backend(), 2);
  EXPECT_EQ(found->host_pid(2), found->session_backend());
  EXPECT_EQ(found->host_pid(1), found->postmaster());
  EXPECT_EQ(found->server_pid(found->session_backend()), 2);
  EXPECT_EQ(found->host_pid(3), 0);  // no such process in its namespace
  EXPECT_TRUE(std::filesystem::equivalent(found->host_path("/data"), root / "data"));
  EXPECT_EQ(found->description(), "in its own PID namespace, root " + root.string());
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace pgwaitprof::collectors
