// Faults on the daemon's control socket (issue 8 items 1, 4, 5, 6, 13): a client that reads to
// end of file, oversized and mistyped requests, pgbench options outside the allow-list, more
// clients than allowed, running out of file descriptors, a second daemon on the same data
// directory, and a client whose daemon never answers.
#include <netinet/in.h>
#include <sys/resource.h>

#include <cstdlib>

#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

class ControlSocketFaults : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

std::string run_request(const std::vector<std::string>& pgbench_args) {
  return nlohmann::json{{"type", "run"}, {"target", "local"}, {"pgbench_args", pgbench_args}}
             .dump() +
         "\n";
}

// Item 1: the daemon aborted on the next connection after a client that sent a run request
// and read until end of file (use-after-free of serve()'s locals). ASan reports it too.
TEST_F(ControlSocketFaults, ClientReadingToEndOfFileThenReconnectingKeepsTheDaemonAlive) {
  FaultDaemon daemon("uaf");
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  for (int round = 0; round < 3; ++round) {
    const int fd = connect_unix(daemon.socket());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(send_all(fd, run_request({"-c", "1", "-R", kModestRate, "-T", "1"})));
    const std::string events = read_to_eof(fd, 60s);
    ::close(fd);
    EXPECT_NE(events.find("\"event\":\"done\""), std::string::npos) << events;
    // Straight away a new connection.
    const auto answer = ask(daemon.socket(), "{\"type\":\"nonsense\"}\n");
    ASSERT_TRUE(answer.is_object()) << daemon.process->log();
    EXPECT_EQ(answer["code"], "invalid");
    ASSERT_TRUE(daemon.process->running()) << daemon.process->log();
  }
  const std::string log = daemon.process->log();
  EXPECT_EQ(log.find("AddressSanitizer"), std::string::npos) << log;
  EXPECT_EQ(log.find("malloc()"), std::string::npos) << log;
}

// Item 6: a request without a newline stops at 64 KiB with an error; wrong JSON types get an
// error reply, not a silent close.
TEST_F(ControlSocketFaults, OversizedAndMistypedRequestsAreAnsweredWithErrors) {
  FaultDaemon daemon("limits");
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  const int fd = connect_unix(daemon.socket());
  ASSERT_GE(fd, 0);
  send_all(fd, std::string(200 * 1024, 'x'));  // the daemon stops reading at 64 KiB
  const std::string reply = read_to_eof(fd, 10s);
  ::close(fd);
  const auto too_large = nlohmann::json::parse(reply.substr(0, reply.find('\n')), nullptr, false);
  ASSERT_TRUE(too_large.is_object()) << reply;
  EXPECT_EQ(too_large["code"], "too_large");

  const std::pair<std::string, std::string> cases[] = {
      {R"({"type":"run","target":5})", "invalid value for \"target\": must be a string"},
      {R"({"type":"run","target":"local","pgbench_args":"-c 1"})",
       "invalid value for \"pgbench_args\""},
      {R"({"type":"run","target":"local","pgbench_args":[1]})", "every item must be a string"},
      {R"({"type":"run","target":"local","interval_s":"5"})", "invalid value for \"interval_s\""},
      {R"({"type":"run","target":"local","interval_s":0})", "invalid value for \"interval_s\""},
      {R"({"type":"run","target":"local","hz":5})", "unrecognized key \"hz\""},
      {R"({"type":"run","target":"local","workload":"nosuch"})", "unknown workload \"nosuch\""},
      {R"([1,2,3])", "could not parse request"},
      {"{\"type\":\"run\"", "could not parse request"},
  };
  for (const auto& [request, expected] : cases) {
    const auto answer = ask(daemon.socket(), request + "\n");
    ASSERT_TRUE(answer.is_object()) << request;
    EXPECT_EQ(answer["event"], "error") << request;
    EXPECT_EQ(answer["code"], "invalid") << request;
    EXPECT_NE(answer["message"].get<std::string>().find(expected), std::string::npos)
        << request << " -> " << answer.dump();
  }
  EXPECT_TRUE(daemon.process->running());
  EXPECT_FALSE(std::filesystem::exists(daemon.data / "runs"));
}

// Item 13: pgbench options that read or write files on the daemon's host are refused.
TEST_F(ControlSocketFaults, PgbenchOptionsOutsideTheAllowListAreRefused) {
  FaultDaemon daemon("allowlist");
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  const std::vector<std::vector<std::string>> refused{{"-f", "/etc/passwd"},
                                                      {"--file=/etc/passwd"},
                                                      {"-c", "1", "-l"},
                                                      {"--log-prefix=/tmp/pwn"},
                                                      {"--log"},
                                                      {"-nl"},
                                                      {"host=/tmp dbname=other"},
                                                      {"--aggregate-interval", "1"}};
  for (const auto& args : refused) {
    const auto answer = ask(daemon.socket(), run_request(args));
    ASSERT_TRUE(answer.is_object()) << args.front();
    EXPECT_EQ(answer["code"], "refused") << args.front() << " -> " << answer.dump();
    EXPECT_NE(answer["message"].get<std::string>().find("not allowed through the control socket"),
              std::string::npos)
        << answer.dump();
  }
  EXPECT_FALSE(std::filesystem::exists(daemon.data / "runs"));
  EXPECT_FALSE(std::filesystem::exists("/tmp/pwn"));
  EXPECT_NE(daemon.process->log().find("refused run request"), std::string::npos);
}

// Item 4: connections beyond control.max_connections are refused with "busy"; idle ones are
// closed after request_timeout; afterwards the socket still accepts.
TEST_F(ControlSocketFaults, ConnectionsAreLimitedAndIdleOnesTimeOut) {
  FaultDaemon daemon("connlimit", "control:\n  max_connections: 3\n  request_timeout: 2s\n");
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(connect_unix(daemon.socket()));
  std::this_thread::sleep_for(300ms);  // accepted and counted
  const auto busy = ask(daemon.socket(), "");
  ASSERT_TRUE(busy.is_object());
  EXPECT_EQ(busy["code"], "busy");
  EXPECT_NE(busy["message"].get<std::string>().find("at most 3"), std::string::npos);
  // The idle ones are told and closed after the timeout.
  for (int fd : idle) {
    const std::string reply = read_to_eof(fd, 10s);
    EXPECT_NE(reply.find("\"code\":\"timeout\""), std::string::npos) << reply;
    ::close(fd);
  }
  const auto answer = ask(daemon.socket(), "{\"type\":\"run\",\"target\":7}\n");
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["code"], "invalid");
}

// Item 4: out of file descriptors, accept fails; the error is logged, accepting is retried with
// backoff, and the socket works again once descriptors are free.
TEST_F(ControlSocketFaults, AcceptRecoversAfterRunningOutOfFileDescriptors) {
  // Under the sanitizers: UBSan's vptr check validates a vtable by probing memory through a
  // pipe, so a process out of descriptors gets a report from every check that misses UBSan's
  // cache (seen in CI on an error_category and on Asio's cancellation handlers; a suppression
  // cannot match them, as the type cannot be read). Its note says "invalid vptr", or names the
  // object's true type when a descriptor was free again by the time the report was printed
  // (seen once: a cancellation_handler<...> "does not point to" its own base class). This daemon
  // does not halt on a UBSan report; at the end every report it printed must be one of the
  // dynamic type check's, and ASan and every other UBSan check stay on.
  const char* inherited = std::getenv("UBSAN_OPTIONS");
  const std::string ubsan_before = inherited != nullptr ? inherited : "";
  ::setenv("UBSAN_OPTIONS", (ubsan_before + ":halt_on_error=0").c_str(), 1);
  FaultDaemon daemon("emfile", "control:\n  max_connections: 1000\n  request_timeout: 60s\n");
  if (inherited != nullptr) {
    ::setenv("UBSAN_OPTIONS", ubsan_before.c_str(), 1);
  } else {
    ::unsetenv("UBSAN_OPTIONS");
  }
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  rlimit original{};
  ASSERT_EQ(::prlimit(daemon.process->pid(), RLIMIT_NOFILE, nullptr, &original), 0);
  size_t open_now = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(daemon.process->pid()) + "/fd")) {
    ++open_now;
  }
  rlimit low = original;
  low.rlim_cur = open_now + 8;
  ASSERT_EQ(::prlimit(daemon.process->pid(), RLIMIT_NOFILE, &low, nullptr), 0);
  std::vector<int> clients;
  for (int i = 0; i < 40; ++i) clients.push_back(connect_unix(daemon.socket()));
  EXPECT_TRUE(eventually(10s, [&] {
    return daemon.process->log().find("could not accept a control connection") != std::string::npos;
  })) << daemon.process->log();
  for (int fd : clients) {
    if (fd >= 0) ::close(fd);
  }
  ASSERT_EQ(::prlimit(daemon.process->pid(), RLIMIT_NOFILE, &original, nullptr), 0);
  // The backlog is drained and new clients are served again.
  nlohmann::json answer;
  EXPECT_TRUE(eventually(15s, [&] {
    answer = ask(daemon.socket(), "{\"type\":\"run\",\"target\":7}\n");
    return answer.is_object() && answer["code"] == "invalid";
  })) << daemon.process->log();
  EXPECT_NE(daemon.process->log().find("accepting control connections again"), std::string::npos);
  EXPECT_TRUE(daemon.process->running());
  // Sampling went on meanwhile.
  const double before = daemon.snapshots();
  EXPECT_TRUE(eventually(5s, [&] { return daemon.snapshots() > before; }));
  const std::string log = daemon.process->log();
  EXPECT_EQ(occurrences(log, "runtime error:"),
            occurrences(log, "which does not point to an object of type"))
      << log;
}

// Item 5: a second daemon on the same data directory refuses to start and leaves the first
// one's socket alone.
TEST_F(ControlSocketFaults, SecondDaemonOnTheSameDataDirectoryIsRefused) {
  FaultDaemon first("lock");
  ASSERT_TRUE(first.up()) << first.process->log();
  const int second_port = engine::free_port();
  auto second = engine::run_command({pgwaitprof_binary(), "daemon", "--target", test_conninfo(),
                                     "--data-dir", first.data.string(), "--listen",
                                     "127.0.0.1:" + std::to_string(second_port)});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.output.find("is in use by another pgwaitprof daemon (pid " +
                               std::to_string(first.process->pid()) + ")"),
            std::string::npos)
      << second.output;
  EXPECT_TRUE(std::filesystem::exists(first.socket()));
  const auto answer = ask(first.socket(), "{\"type\":\"run\",\"target\":7}\n");
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["code"], "invalid");
}

// Smaller defect: a daemon whose port is busy exits without creating its data directory.
TEST_F(ControlSocketFaults, BusyPortLeavesNoDataDirectory) {
  FaultDaemon first("busyport");
  ASSERT_TRUE(first.up()) << first.process->log();
  const auto data = temp_dir("busyport-second") / "data";
  auto second =
      engine::run_command({pgwaitprof_binary(), "daemon", "--target", test_conninfo(), "--data-dir",
                           data.string(), "--listen", "127.0.0.1:" + std::to_string(first.port)});
  EXPECT_NE(second.exit_code, 0);
  EXPECT_NE(second.output.find("could not listen"), std::string::npos) << second.output;
  EXPECT_FALSE(std::filesystem::exists(data));
}

// Item 4: a `pgwaitprof run` whose daemon accepts but never answers still obeys signals (the
// first asks the daemon to interrupt, the second stops waiting).
TEST_F(ControlSocketFaults, ClientOfASilentDaemonStopsOnSignals) {
  const auto dir = temp_dir("silent");
  const auto socket_path = dir / "pgwaitprof.sock";
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 16), 0);  // never accepted: the backlog holds the client
  ChildProcess run({pgwaitprof_binary(), "run", test_conninfo(), "--data-dir", dir.string(), "--",
                    "-c", "1", "-T", "60"},
                   dir / "run.log");
  // Signalled once it waits for the daemon: its connection is in the backlog then (the client
  // listens for signals before it connects). A fixed 1.5 s was not always enough for the
  // sanitizer build to start on a loaded machine, and a signal before it listens ends it at
  // once, without the message.
  pollfd waiting{listener, POLLIN, 0};
  ASSERT_EQ(::poll(&waiting, 1, 30000), 1) << "the client never connected: " << run.log();
  ASSERT_TRUE(run.running()) << run.log();
  const auto sent = std::chrono::steady_clock::now();
  run.signal(SIGINT);
  std::this_thread::sleep_for(300ms);
  run.signal(SIGINT);
  const auto code = run.wait(5s);
  ASSERT_TRUE(code.has_value()) << run.log();
  EXPECT_NE(*code, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - sent, 3s);
  EXPECT_NE(run.log().find("stopped waiting for the daemon"), std::string::npos) << run.log();
  ::close(listener);
}

// Issue 23: SIGTERM stops the daemon within a second also while a client is connected without
// having asked for anything (it waited for control.request_timeout, 10 s) and while the results
// uploader connects to a database that does not answer (it waited for libpq's 5 s connect
// timeout). The waiting client is told why it is closed.
TEST_F(ControlSocketFaults, SigtermDoesNotWaitForIdleClientsOrTheUploader) {
  // A results database that accepts connections (the kernel does, into the backlog) and never
  // answers them.
  const int silent = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(silent, 16), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(silent, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const auto data = temp_dir("stop-data");
  std::filesystem::create_directories(data / "results-pending");
  write_text(data / "results-pending" / "queued", "/nonexistent/run\n");  // pushed at start
  FaultDaemon daemon("stop",
                     "results:\n  dsn: \"host=127.0.0.1 port=" +
                         std::to_string(ntohs(address.sin_port)) + " sslmode=disable\"\n",
                     test_conninfo(), 100, data);
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  const int idle = connect_unix(daemon.socket());
  ASSERT_GE(idle, 0);
  pollfd pending{silent, POLLIN, 0};
  ASSERT_EQ(::poll(&pending, 1, 5000), 1) << "the uploader never connected";

  const auto sent = std::chrono::steady_clock::now();
  daemon.process->signal(SIGTERM);
  const auto code = daemon.process->wait(15s);
  const auto took = std::chrono::steady_clock::now() - sent;
  ASSERT_TRUE(code.has_value()) << daemon.process->log();
  EXPECT_EQ(*code, 0);
  EXPECT_LT(took, 1s) << daemon.process->log();
  const std::string reply = read_to_eof(idle, 2s);
  const auto refusal = nlohmann::json::parse(reply.substr(0, reply.find('\n')), nullptr, false);
  ASSERT_TRUE(refusal.is_object()) << reply;
  EXPECT_EQ(refusal["code"], "busy");
  EXPECT_EQ(refusal["message"], "the daemon is stopping");
  EXPECT_TRUE(std::filesystem::exists(data / "results-pending" / "queued"));
  ::close(idle);
  ::close(silent);
}

}  // namespace
}  // namespace pgwaitprof::testing
