// Faults around the processes pgwaitprof starts (issue 8 items 3, 8, 10): a signal while the
// scratch cluster is created or pgbench -i runs leaves nothing behind; pgbench dies with a
// killed daemon and starts with default signal dispositions; the password is never in a
// pgbench command line; the sampler's session ended by the server is an outage, seen at once.
#include <fmt/format.h>

#include <iostream>

#include "base/programs.h"
#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

class ProcessFaults : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

struct Stage {
  const char* name;
  const char* process;  // what runs when the signal comes
  int signal_number;
  std::chrono::milliseconds after;  // how long after it started
};
void PrintTo(const Stage& stage, std::ostream* out) { *out << stage.name; }

class ScratchInterrupt : public ProcessFaults, public ::testing::WithParamInterface<Stage> {};

// Item 3: Ctrl-C or SIGTERM during initdb, pg_ctl start, pgbench -i or the load itself: no
// server, no directory, no pgbench.
TEST_P(ScratchInterrupt, LeavesNoServerDirectoryOrPgbenchBehind) {
  const Stage stage = GetParam();
  const auto dir = temp_dir(std::string("scratch-") + stage.name);
  ChildProcess run(
      without_pg_environment({pgwaitprof_binary(), "run", "--data-dir", (dir / "data").string(),
                              "--scale", "30", "--", "-c", "1", "-T", "5"}),
      dir / "run.log");
  std::string scratch;
  ASSERT_TRUE(eventually(30s, [&] {
    scratch = scratch_directory(run.log());
    return !scratch.empty();
  })) << run.log();
  // A process of the stage, working on our cluster.
  ASSERT_TRUE(eventually(60s,
                         [&] {
                           for (pid_t pid : processes_with(scratch)) {
                             if (cmdline_of(pid).find(stage.process) != std::string::npos)
                               return true;
                           }
                           return false;
                         }))
      << stage.process << " never ran: " << run.log();
  std::this_thread::sleep_for(stage.after);
  run.signal(stage.signal_number);
  const auto code = run.wait(60s);
  ASSERT_TRUE(code.has_value()) << run.log();
  EXPECT_NE(*code, 0);
  EXPECT_TRUE(eventually(5s, [&] { return processes_with(scratch).empty(); }))
      << cmdline_of(processes_with(scratch).front());
  EXPECT_FALSE(std::filesystem::exists(scratch)) << run.log();
  EXPECT_EQ(run.log().find("Operation aborted"), std::string::npos) << run.log();
  // The signal came while the cluster was being made: pgbench -i never started.
  if (std::string_view(stage.process) == "initdb" || std::string_view(stage.process) == "pg_ctl") {
    EXPECT_EQ(run.log().find("initialising pgbench data"), std::string::npos) << run.log();
  }
}

INSTANTIATE_TEST_SUITE_P(Stages, ScratchInterrupt,
                         ::testing::Values(Stage{"initdb_sigint", "initdb", SIGINT, 0ms},
                                           Stage{"initdb_sigterm", "initdb", SIGTERM, 200ms},
                                           Stage{"start_sigint", "pg_ctl", SIGINT, 0ms},
                                           Stage{"start_sigterm", "pg_ctl", SIGTERM, 0ms},
                                           Stage{"init_sigint", "pgbench -i", SIGINT, 0ms},
                                           Stage{"init_sigterm", "pgbench -i", SIGTERM, 500ms},
                                           Stage{"load_sigint", " -T 5", SIGINT, 1000ms},
                                           Stage{"load_sigterm", " -T 5", SIGTERM, 1500ms}),
                         [](const auto& info) { return std::string(info.param.name); });

// The pid of the pgbench running the load whose command line contains `needle`.
std::optional<pid_t> pgbench_running(const std::string& needle) {
  for (pid_t pid : processes_with(needle)) {
    const auto cmdline = cmdline_of(pid);
    if (runs_program(pid, "pgbench") && cmdline.find(" -i ") == std::string::npos &&
        cmdline.find(" -T ") != std::string::npos)
      return pid;
  }
  return std::nullopt;
}

std::string status_field(pid_t pid, const std::string& field) {
  const std::string status = read_text("/proc/" + std::to_string(pid) + "/status");
  const auto at = status.find(field + ":");
  if (at == std::string::npos) return "";
  const auto start = status.find_first_not_of(" \t", at + field.size() + 1);
  return status.substr(start, status.find('\n', start) - start);
}

// Item 8: a daemon run's pgbench has default signal dispositions and dies with the daemon.
// Item 10: its command line has no password, in the daemon and in the foreground.
TEST_F(ProcessFaults, PgbenchDiesWithAKilledDaemonAndNeverShowsThePassword) {
  const std::string secret = "daemon-Secr3t";
  FaultDaemon daemon("pdeathsig", "", test_conninfo() + " password=" + secret);
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  const int client = connect_unix(daemon.socket());
  ASSERT_GE(client, 0);
  const std::string request =
      nlohmann::json{{"type", "run"},
                     {"target", "local"},
                     {"pgbench_args", {"-c", "1", "-R", kModestRate, "-T", "60"}}}
          .dump() +
      "\n";
  ASSERT_TRUE(send_all(client, request));
  std::optional<pid_t> pgbench;
  ASSERT_TRUE(eventually(20s, [&] {
    return (pgbench = pgbench_running(env("PGHOST"))).has_value();
  })) << daemon.process->log();
  EXPECT_EQ(cmdline_of(*pgbench).find(secret), std::string::npos) << cmdline_of(*pgbench);
  EXPECT_EQ(status_field(*pgbench, "SigIgn"), "0000000000000000");
  EXPECT_EQ(status_field(*pgbench, "SigBlk"), "0000000000000000");
  daemon.process->signal(SIGKILL);
  daemon.process->wait(5s);
  EXPECT_TRUE(eventually(3s,
                         [&] {
                           return !std::filesystem::exists("/proc/" + std::to_string(*pgbench)) ||
                                  status_field(*pgbench, "State").starts_with("Z");
                         }))
      << "pgbench " << *pgbench << " outlived the daemon";
  ::close(client);

  const auto dir = temp_dir("cmdline-foreground");
  ChildProcess run(
      {pgwaitprof_binary(), "run", test_conninfo() + " password=" + secret, "--no-daemon",
       "--data-dir", dir.string(), "--", "-c", "1", "-R", kModestRate, "-T", "3"},
      dir / "run.log");
  ASSERT_TRUE(eventually(20s, [&] {
    return (pgbench = pgbench_running(env("PGHOST"))).has_value();
  })) << run.log();
  EXPECT_EQ(cmdline_of(*pgbench).find(secret), std::string::npos) << cmdline_of(*pgbench);
  ASSERT_TRUE(run.wait(30s).has_value());
  EXPECT_EQ(run.log().find(secret), std::string::npos) << run.log();
}

// Item 7: the sampler losing its connection during a run is an outage in report.json (start,
// duration, missed ticks), in the warnings, on the timeline and on the HTML chart. pgbench keeps
// its connection: the sampler's is terminated and new ones refused for 1.5 s.
engine::CommandResult psql_elsewhere(const std::string& sql) {
  return engine::run_command({base::find_executable("psql"), "-X", "-q", "-At", "-c", sql,
                              test_conninfo() + " dbname=template1"});
}

TEST_F(ProcessFaults, SamplerOutageMidRunIsRecorded) {
  const auto dir = temp_dir("outage");
  // The memory source (named: auto would trace the server, and the traced source reads the
  // kernel's maps, not a session: TraceServerFaults has its own outages).
  ChildProcess run(
      {pgwaitprof_binary(), "run", test_conninfo(), "--no-daemon", "--hz", "100", "--source",
       "memory", "--data-dir", dir.string(), "--", "-c", "1", "-R", kModestRate, "-T", "8"},
      dir / "run.log");
  ASSERT_TRUE(eventually(20s, [&] { return progress_reached(run.log(), 2.0); })) << run.log();
  struct Reopen {
    ~Reopen() { psql_elsewhere("ALTER DATABASE postgres ALLOW_CONNECTIONS true"); }
  } reopen;
  ASSERT_EQ(psql_elsewhere("ALTER DATABASE postgres ALLOW_CONNECTIONS false").exit_code, 0);
  ASSERT_EQ(psql_elsewhere("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                           "application_name = 'pgwaitprof'")
                .exit_code,
            0);
  std::this_thread::sleep_for(1500ms);
  ASSERT_EQ(psql_elsewhere("ALTER DATABASE postgres ALLOW_CONNECTIONS true").exit_code, 0);
  ASSERT_TRUE(run.wait(60s).has_value()) << run.log();
  std::filesystem::path run_dir;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "runs"))
    run_dir = entry.path();
  const auto report = nlohmann::json::parse(read_text(run_dir / "report.json"));
  ASSERT_FALSE(report["outages"].empty()) << report.dump().substr(0, 2000);
  const auto& outage = report["outages"][0];
  EXPECT_GT(outage["start_s"].get<double>(), 1.0);
  EXPECT_GT(outage["duration_s"].get<double>(), 1.0);
  EXPECT_GT(outage["missed_ticks"].get<uint64_t>(), 50u);
  EXPECT_NE(report["warnings"].dump().find("sampler"), std::string::npos) << report["warnings"];
  bool marked = false;
  for (const auto& slice : report["timeline"])
    marked = marked || slice.value("sampler_outage", false);
  EXPECT_TRUE(marked);
  // The HTML chart shades it.
  EXPECT_NE(read_text(run_dir / "report.html").find("\"outages\":[["), std::string::npos);
}

// Issue 47 item 13: the memory source's sampler sends no query for seconds at a time (none
// while there is no Lock wait, no new statement, database or background worker), so a session
// the server ended was noticed only at the next query, if one came. Its backend is ended here
// the way pg_terminate_backend ends it (SIGTERM), from outside, so that no new session or
// statement gives the sampler a reason to query: the daemon says so at once and reconnects.
TEST_F(ProcessFaults, ATerminatedSamplerSessionIsNoticedAtOnceWithTheMemorySource) {
  FaultDaemon daemon("terminated-session", "    source: memory\n");
  ASSERT_TRUE(daemon.up()) << daemon.process->log();
  // The daemon's one session (earlier tests' sessions may take a moment to go).
  engine::CommandResult found;
  ASSERT_TRUE(eventually(
      5s,
      [&] {
        found = psql("SELECT pid FROM pg_stat_activity WHERE application_name = 'pgwaitprof'");
        return found.exit_code == 0 &&
               std::count(found.output.begin(), found.output.end(), '\n') == 1;
      }))
      << "the daemon's sessions: " << found.output;
  const pid_t backend = std::atoi(found.output.c_str());
  ASSERT_GT(backend, 0) << found.output;
  // That look-up's own session and statement have been seen (and their names fetched) before
  // the backend goes.
  std::this_thread::sleep_for(1500ms);
  const auto lost = "lost connection to target=local";
  ASSERT_EQ(daemon.process->log().find(lost), std::string::npos) << daemon.process->log();
  const auto terminated = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(backend, SIGTERM), 0);
  const bool noticed =
      eventually(5s, [&] { return daemon.process->log().find(lost) != std::string::npos; });
  const double after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - terminated).count();
  std::cout << fmt::format(
      "the terminated session was noticed after {:.3f} s (polled every 50 ms)\n", after);
  ASSERT_TRUE(noticed) << "not noticed in 5 s:\n" << daemon.process->log();
  EXPECT_LT(after, 1.0);
  // The server's own words, not libpq's "server closed the connection unexpectedly".
  EXPECT_NE(daemon.process->log().find("terminating connection due to administrator command"),
            std::string::npos)
      << daemon.process->log();
  // Sampling again on a new session.
  EXPECT_TRUE(eventually(10s, [&] {
    return daemon.process->log().find("connection restored target=local") != std::string::npos;
  })) << daemon.process->log();
  EXPECT_TRUE(daemon.up()) << daemon.process->log();
}

}  // namespace
}  // namespace pgwaitprof::testing
