// Secrets and hostile input (issue 8 items 11, 14 and the smaller defects): a password in a
// malformed URI is masked everywhere, /metrics off loopback needs basic auth (bcrypt) or
// insecure: true, control characters in --label are escaped, --workload nosuch fails before any
// work, a failed run says what happened, and a refused daemon socket is reported on stderr.
#include <fmt/format.h>

#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

class InputFaults : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

std::filesystem::path only_run(const std::filesystem::path& data) {
  std::filesystem::path found;
  for (const auto& entry : std::filesystem::directory_iterator(data / "runs")) found = entry.path();
  return found;
}

// Item 11: libpq quotes the whole malformed URI in its error; the password must not follow.
TEST_F(InputFaults, PasswordOfAMalformedUriIsMaskedInOutputFilesAndLog) {
  const std::string uri = "postgresql://bench:secret123@[::1";
  const auto dir = temp_dir("malformed-uri");
  auto run = engine::run_command(
      {pgwaitprof_binary(), "run", uri, "--data-dir", (dir / "data").string(), "--", "-T", "1"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_EQ(run.output.find("secret123"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("could not connect to \"\""), std::string::npos) << run.output;
  EXPECT_FALSE(files_under(dir / "data").empty()) << run.output;
  EXPECT_EQ(permissions_of(dir / "data"), 0700u);
  for (const auto& file : files_under(dir / "data")) {
    EXPECT_EQ(read_text(file).find("secret123"), std::string::npos) << file;
  }
  const int port = engine::free_port();
  ChildProcess daemon({pgwaitprof_binary(), "daemon", "--target", uri, "--data-dir",
                       (dir / "daemon").string(), "--listen", "127.0.0.1:" + std::to_string(port)},
                      dir / "daemon.log");
  ASSERT_TRUE(eventually(10s, [&] { return !scrape(port).empty(); })) << daemon.log();
  std::this_thread::sleep_for(1s);
  daemon.signal(SIGTERM);
  daemon.wait(10s);
  EXPECT_NE(daemon.log().find("could not connect"), std::string::npos) << daemon.log();
  EXPECT_EQ(daemon.log().find("secret123"), std::string::npos) << daemon.log();
  EXPECT_EQ(scrape(port).find("secret123"), std::string::npos);
}

// Issue 23 items 4 and 5: a backslash-escaped password in the target and a percent-encoded one
// in a URI (the results database's, the daemon's target) are gone from the process's own
// command line while it runs, and from everything it prints and writes.
TEST_F(InputFaults, PasswordsLeaveTheCommandLineAndEveryOutput) {
  const auto dir = temp_dir("argv-password");
  // Trust authentication ignores the password, so the run works. The results database is not
  // there: its upload fails at the end, and says so.
  const std::string target = test_conninfo() + R"( password=Sp\ ace\ Pw9)";
  const std::string results_dsn =
      fmt::format("postgresql://bench:Ur1%20Secret@127.0.0.1:{}/results", engine::free_port());
  const std::vector<std::string> secrets = {"Pw9", R"(Sp\ ace)", "Ur1", "Secret"};
  ChildProcess run(
      {pgwaitprof_binary(), "run", target, "--no-daemon", "--results-dsn", results_dsn,
       "--data-dir", (dir / "data").string(), "--", "-c", "1", "-R", kModestRate, "-T", "3"},
      dir / "run.log");
  // pgbench reports progress: the arguments have long been read.
  ASSERT_TRUE(eventually(20s, [&] { return progress_reached(run.log(), 1.0); })) << run.log();
  const auto command_line = cmdline_of(run.pid());
  EXPECT_NE(command_line.find("--results-dsn postgresql://bench:"), std::string::npos)
      << command_line;
  for (const auto& secret : secrets) {
    EXPECT_EQ(command_line.find(secret), std::string::npos) << command_line;
  }
  ASSERT_TRUE(run.wait(60s).has_value()) << run.log();
  EXPECT_NE(run.log().find("results database"), std::string::npos) << run.log();
  for (const auto& secret : secrets) {
    EXPECT_EQ(run.log().find(secret), std::string::npos) << run.log();
  }
  ASSERT_FALSE(files_under(dir / "data").empty());
  for (const auto& file : files_under(dir / "data")) {
    const auto text = read_text(file);
    for (const auto& secret : secrets) EXPECT_EQ(text.find(secret), std::string::npos) << file;
  }

  const std::string uri =
      fmt::format("postgresql://{}:Ur1%20Secret@/{}?host={}&port={}", env("PGUSER"),
                  env("PGDATABASE"), env("PGHOST"), env("PGPORT"));
  const int port = engine::free_port();
  ChildProcess uri_daemon(
      {pgwaitprof_binary(), "daemon", "--target", uri, "--data-dir", (dir / "daemon").string(),
       "--listen", "127.0.0.1:" + std::to_string(port)},
      dir / "daemon.log");
  ASSERT_TRUE(eventually(15s, [&] { return metric(scrape(port), "pgwaitprof_up{target=") == 1.0; }))
      << uri_daemon.log();
  const auto daemon_line = cmdline_of(uri_daemon.pid());
  EXPECT_NE(daemon_line.find("--target postgresql://"), std::string::npos) << daemon_line;
  for (const auto& secret : secrets) {
    EXPECT_EQ(daemon_line.find(secret), std::string::npos) << daemon_line;
    EXPECT_EQ(uri_daemon.log().find(secret), std::string::npos) << uri_daemon.log();
  }
}

// Item 14: off loopback, /metrics needs basic auth (bcrypt, as exporter-toolkit) or an explicit
// insecure: true.
TEST_F(InputFaults, MetricsOffLoopbackNeedAuthOrInsecure) {
  const auto dir = temp_dir("metrics-auth");
  const int port = engine::free_port();
  const std::string base = fmt::format(
      "listen: 0.0.0.0:{}\ndata_dir: {}\ntargets:\n  - name: local\n    dsn: \"{}\"\n    hz: 10\n",
      port, (dir / "data").string(), test_conninfo());
  write_text(dir / "open.yaml", base);
  auto refused =
      engine::run_command({pgwaitprof_binary(), "daemon", "-c", (dir / "open.yaml").string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.output.find("web.insecure: true"), std::string::npos) << refused.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "data"));

  write_text(dir / "insecure.yaml", base + "web:\n  insecure: true\n");
  {
    ChildProcess daemon({pgwaitprof_binary(), "daemon", "-c", (dir / "insecure.yaml").string()},
                        dir / "insecure.log");
    EXPECT_TRUE(eventually(10s, [&] {
      return get_metrics(port).find("pgwaitprof_build_info") != std::string::npos;
    })) << daemon.log();
  }

  write_text(dir / "auth.yaml", base + "web:\n  basic_auth_users:\n    prometheus: \"" +
                                    bcrypt_hash("scrape-pw") + "\"\n");
  ChildProcess daemon({pgwaitprof_binary(), "daemon", "-c", (dir / "auth.yaml").string()},
                      dir / "auth.log");
  ASSERT_TRUE(eventually(10s, [&] { return get_metrics(port).starts_with("HTTP/1.1 401"); }))
      << daemon.log() << get_metrics(port);
  EXPECT_EQ(get_metrics(port).find("pgwaitprof_build_info"), std::string::npos);
  EXPECT_TRUE(get_metrics(port, "prometheus:wrong").starts_with("HTTP/1.1 401"));
  EXPECT_TRUE(get_metrics(port, "nobody:scrape-pw").starts_with("HTTP/1.1 401"));
  const auto allowed = get_metrics(port, "prometheus:scrape-pw");
  EXPECT_TRUE(allowed.starts_with("HTTP/1.1 200")) << allowed.substr(0, 200);
  EXPECT_NE(allowed.find("pgwaitprof_build_info"), std::string::npos);
}

// Smaller defect: control characters and ANSI escapes in --label are written out, not passed
// to the terminal or the reports.
TEST_F(InputFaults, ControlCharactersInTheLabelAreEscaped) {
  const auto dir = temp_dir("label");
  auto run = engine::run_command({pgwaitprof_binary(), "run", test_conninfo(), "--no-daemon",
                                  "--label", "red\x1b[31mbell\x07end", "--data-dir", dir.string(),
                                  "--", "-c", "1", "-R", kModestRate, "-T", "1"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output.find('\x1b'), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find('\x07'), std::string::npos) << run.output;
  for (const char* name : {"report.txt", "report.md", "report.json", "report.html"}) {
    const auto text = read_text(only_run(dir) / name);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << name;
    EXPECT_EQ(text.find('\x07'), std::string::npos) << name;
  }
  EXPECT_NE(read_text(only_run(dir) / "report.txt").find("red"), std::string::npos);
}

// Smaller defect: an unknown workload is a usage error before a scratch cluster is made.
TEST_F(InputFaults, UnknownWorkloadExitsTwoBeforeAnyWork) {
  const auto dir = temp_dir("nosuch");
  auto run = engine::run_command(without_pg_environment(
      {pgwaitprof_binary(), "run", "--workload", "nosuch", "--data-dir", dir.string()}));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(run.output.find("scratch"), std::string::npos) << run.output;
  EXPECT_TRUE(run.output.starts_with("pgwaitprof: --workload: nosuch not in")) << run.output;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

// Issue 40 item 4: a FIFO named as a plan, a configuration or a report is
// refused at once with one line; before, the open of a FIFO waited for a writer forever.
TEST_F(InputFaults, FifosAreRefusedAsFilesAtOnce) {
  const auto dir = temp_dir("fifo");
  const auto fifo = dir / "plan.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_directories(dir / "run");
  ASSERT_EQ(::mkfifo((dir / "run" / "report.json").c_str(), 0600), 0);
  const std::vector<std::vector<std::string>> commands = {
      {pgwaitprof_binary(), "matrix", fifo.string(), "--data-dir", (dir / "data").string()},
      {pgwaitprof_binary(), "daemon", "-c", fifo.string()},
      {pgwaitprof_binary(), "report", (dir / "run").string()},
  };
  int index = 0;
  for (const auto& argv : commands) {
    ChildProcess child(argv, dir / fmt::format("command-{}.log", index++));
    const auto code = child.wait(10s);
    ASSERT_TRUE(code.has_value()) << argv[1] << " still waits on the FIFO";
    EXPECT_NE(*code, 0) << argv[1];
    const auto log = child.log();
    EXPECT_NE(log.find("is not a regular file"), std::string::npos) << argv[1] << ": " << log;
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << argv[1] << ": " << log;
  }
}

// Smaller defect: the failed-run summary says what happened, not pgbench's last line.
TEST_F(InputFaults, FailedRunSaysWhatHappened) {
  const auto dir = temp_dir("failed-summary");
  auto bad_option =
      engine::run_command({pgwaitprof_binary(), "run", test_conninfo(), "--no-daemon", "--data-dir",
                           (dir / "a").string(), "--", "--no-such-option"});
  EXPECT_NE(bad_option.exit_code, 0);
  const auto failed_line = bad_option.output.find("pgwaitprof: run failed:");
  ASSERT_NE(failed_line, std::string::npos) << bad_option.output;
  const auto line = bad_option.output.substr(
      failed_line, bad_option.output.find('\n', failed_line) - failed_line);
  EXPECT_NE(line.find("no-such-option"), std::string::npos) << line;

  ChildProcess run({pgwaitprof_binary(), "run", test_conninfo(), "--no-daemon", "--data-dir",
                    (dir / "b").string(), "--", "-c", "1", "-R", kModestRate, "-T", "30"},
                   dir / "killed.log");
  std::vector<pid_t> pgbench;
  ASSERT_TRUE(eventually(20s, [&] {
    pgbench.clear();
    // This run's pgbench: its log prefix is in the run's directory (another lane's pgbench may
    // have "-T 30" too, and was once killed in its place).
    for (pid_t pid : processes_with((dir / "b").string())) {
      if (runs_program(pid, "pgbench")) pgbench.push_back(pid);
    }
    return !pgbench.empty();
  })) << run.log();
  std::this_thread::sleep_for(1s);
  ::kill(pgbench.front(), SIGKILL);
  ASSERT_TRUE(run.wait(30s).has_value()) << run.log();
  EXPECT_NE(run.log().find("killed by signal 9 (SIGKILL)"), std::string::npos) << run.log();
}

// Smaller defect: a daemon socket that refuses us (permission) is reported before sampling in
// this process.
TEST_F(InputFaults, RefusedDaemonSocketIsReportedOnStderr) {
  const auto dir = temp_dir("refused-socket");
  const auto socket_path = dir / "pgwaitprof.sock";
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ::chmod(socket_path.c_str(), 0600);  // root's: the unprivileged account may not connect
  const auto account = engine::unprivileged_account();
  ASSERT_TRUE(account.has_value()) << "needs to run as root";
  const auto data = dir / "data";
  std::filesystem::create_directories(data);
  ASSERT_EQ(::chown(data.c_str(), account->uid, account->gid), 0);
  ::chmod(dir.c_str(), 0755);
  auto run = engine::run_command(
      {pgwaitprof_binary(), "run", test_conninfo(), "--data-dir", data.string(), "--", "-c", "1",
       "-T", "1"},
      {account, {"PGWAITPROF_SOCKET=" + socket_path.string(), "HOME=" + data.string()}});
  EXPECT_NE(run.output.find("could not use the daemon at \"" + socket_path.string() + "\""),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("sampling in this process"), std::string::npos) << run.output;
  ::close(listener);
  // A daemon's data directory (0700) the account may not enter: said too.
  const auto private_dir = dir / "private";
  std::filesystem::create_directories(private_dir);
  ::chmod(private_dir.c_str(), 0700);
  auto hidden =
      engine::run_command({pgwaitprof_binary(), "run", test_conninfo(), "--data-dir", data.string(),
                           "--", "-c", "1", "-T", "1"},
                          {account,
                           {"PGWAITPROF_SOCKET=" + (private_dir / "pgwaitprof.sock").string(),
                            "HOME=" + data.string()}});
  EXPECT_NE(hidden.output.find("Permission denied; sampling in this process"), std::string::npos)
      << hidden.output;
}

}  // namespace
}  // namespace pgwaitprof::testing
