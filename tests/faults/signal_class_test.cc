// The whole class of ways a foreground command can end (issue 23): `run` and `matrix`, on a
// scratch cluster and on an external server, ended by a terminating signal (SIGHUP, SIGINT,
// SIGTERM, SIGQUIT: one handler), a closed pipe (SIGPIPE) and SIGKILL at each point of their
// work: set-up, load, report writing, between matrix cells. Afterwards, within a bound or after the
// next invocation: no postmaster or pgbench left, no scratch directory left, the external server's
// postgresql.auto.conf byte-identical to before, and every run directory complete or marked failed
// with a reason. Fault points (daemon/engine/fault_point.h) hold the program at the exact point.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>

#include <sstream>

#include "tests/faults/fault_harness.h"
#include "tests/faults/piped_program.h"

namespace pgwaitprof::testing {
namespace {

struct Ending {
  const char* command;  // run, matrix
  const char* target;   // scratch, external
  const char* phase;    // setup, load, report, between-cells
  int signal_number;    // SIGPIPE: the read end of its output pipe closed
};

std::string name_of(const Ending& ending) {
  std::string name = fmt::format("{}_{}_{}_{}", ending.command, ending.target, ending.phase,
                                 ::sigabbrev_np(ending.signal_number));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}
void PrintTo(const Ending& ending, std::ostream* out) { *out << name_of(ending); }

// The sanitizers' options of this process, with their reports sent to `path`.PID files.
void add_sanitizer_log_path(std::vector<std::string>& environment, const std::string& path) {
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS"}) {
    const char* options = std::getenv(name);
    if (options == nullptr) continue;
    environment.push_back(fmt::format("{}={}:log_path={}", name, options, path));
  }
}

// The reports in `dir` whose names start with `prefix`, for a failure message.
std::string sanitizer_reports(const std::filesystem::path& dir, std::string_view prefix) {
  std::string reports;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.path().filename().string().starts_with(prefix)) continue;
    reports += fmt::format("\n{}:\n{}", entry.path().string(), read_text(entry.path()));
  }
  return reports;
}

// A pgbench of the load (not pgbench -i) whose command line names `needle`.
bool load_running(const std::string& needle) {
  for (const pid_t pid : processes_with(needle)) {
    if (runs_program(pid, "pgbench") && cmdline_of(pid).find(" -i ") == std::string::npos) {
      return true;
    }
  }
  return false;
}

// Every report.json under `dir`: completed, or not completed with a reason.
// No postmaster, backend or child of the scratch cluster is left, nor its directory: the
// watchdog's work when pgwaitprof was killed, so within a bound.
void expect_scratch_gone(const std::string& scratch, const std::string& output) {
  const bool gone = eventually(
      30s, [&] { return processes_with(scratch).empty() && !std::filesystem::exists(scratch); });
  std::string left;
  for (const pid_t pid : processes_with(scratch)) {
    const std::string status = read_text("/proc/" + std::to_string(pid) + "/status");
    auto field = [&](const std::string& name) {
      const auto at = status.find("\n" + name + ":");
      return at == std::string::npos ? std::string()
                                     : status.substr(at + 1, status.find('\n', at + 1) - at - 1);
    };
    left += fmt::format("  pid {} ({}, {}, {}): {}\n", pid, field("State"), field("PPid"),
                        field("Uid"), cmdline_of(pid));
  }
  EXPECT_TRUE(gone) << scratch << (std::filesystem::exists(scratch) ? " is still there" : "")
                    << ", processes left:\n"
                    << left << output;
}

// No pgbench of the run in `dir` is still running.
void expect_load_gone(const std::filesystem::path& dir) {
  EXPECT_TRUE(eventually(15s, [&] { return !load_running(dir.string()); }))
      << "a pgbench of the run is still running";
}

void expect_runs_complete_or_failed_with_reason(const std::filesystem::path& dir) {
  for (const auto& file : files_under(dir)) {
    if (file.filename() != "report.json") continue;
    const auto report = nlohmann::json::parse(read_text(file), nullptr, false);
    ASSERT_TRUE(report.is_object()) << file;
    const auto status = report.value("status", "");
    if (status == "completed") continue;
    EXPECT_TRUE(status == "failed" || status == "interrupted") << file << ": " << status;
    EXPECT_FALSE(report.value("error", "").empty()) << file << " says " << status << " without why";
  }
}

class SignalClass : public ::testing::TestWithParam<Ending> {
 protected:
  void SetUp() override {
    require_cluster();
    // Values the user set before, which the plan's variants change.
    ASSERT_EQ(psql("ALTER SYSTEM SET work_mem = '77MB'").exit_code, 0);
    ASSERT_EQ(psql("ALTER SYSTEM SET commit_delay = 5").exit_code, 0);
    ASSERT_EQ(psql("SELECT pg_reload_conf()").exit_code, 0);
    // A line by hand, which ALTER SYSTEM would drop: only the journal's bytes bring it back.
    std::ofstream(auto_conf(), std::ios::app) << "# hand edit  trailing spaces   \n";
    before_ = read_text(auto_conf());
  }
  void TearDown() override {
    psql("ALTER SYSTEM RESET work_mem");
    psql("ALTER SYSTEM RESET commit_delay");
    psql("SELECT pg_reload_conf()");
  }
  std::string before_;
};

std::vector<std::string> command_line(const Ending& ending, const std::filesystem::path& dir) {
  const bool scratch = std::string_view(ending.target) == "scratch";
  const auto data = (dir / "data").string();
  std::vector<std::string> argv;
  if (std::string_view(ending.command) == "run") {
    argv = {pgwaitprof_binary(),
            "run",
            "--no-daemon",
            "--data-dir",
            data,
            "--scale",
            "1",
            "--",
            "-c",
            "1",
            "-R",
            kModestRate,
            "-T",
            "3"};
  } else {
    // Two variants that change the server, one run each: a change between the cells.
    write_text(
        dir / "plan.yaml",
        fmt::format("name: signals\n{}scale: 1\nclients: [1]\nduration: 2\nrepeats: 1\n"
                    "hz: 100\nwarmup: 0\ncheckpoint: false\npgbench_args: [-R, '{}']\nvariants:\n"
                    "  - name: a\n    settings: {{work_mem: 8MB, commit_delay: '10'}}\n"
                    "  - name: b\n    settings: {{synchronous_commit: 'off'}}\n",
                    scratch ? "" : "target: \"" + test_conninfo() + "\"\n", kModestRate));
    argv = {pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(), "--data-dir", data};
  }
  return scratch ? without_pg_environment(argv) : argv;
}

TEST_P(SignalClass, LeavesNothingRunningNoScratchDirectoryTheServerAsFoundAndEveryRunMarked) {
  const Ending ending = GetParam();
  const auto dir = temp_dir("signals-" + name_of(ending));
  const std::string phase = ending.phase;
  const bool hold = phase != "load";
  const bool pipe_closed = ending.signal_number == SIGPIPE;
  std::vector<std::string> environment{"PGWAITPROF_FAULT_HOLD=" +
                                       (phase == "setup" ? std::string("scratch-started") : phase)};
  // A closed pipe does not end the command: the hold then only has to outlast closing it.
  environment.push_back(std::string("PGWAITPROF_FAULT_HOLD_SECONDS=") + (pipe_closed ? "1" : "60"));
  // With the pipe closed a sanitizer's report would go nowhere: into files, shown on failure.
  const auto reports = dir / "sanitizer";
  if (pipe_closed) add_sanitizer_log_path(environment, reports.string());
  PipedProgram program(command_line(ending, dir), environment);

  const std::string at =
      hold ? "holding at " + (phase == "setup" ? "scratch-started" : phase) : std::string();
  ASSERT_TRUE(program.until(90s,
                            [&] {
                              return hold ? program.output().find(at) != std::string::npos
                                          : load_running(dir.string());
                            }))
      << "never reached " << phase << ":\n"
      << program.output();
  const std::string scratch = scratch_directory(program.output());
  if (std::string_view(ending.target) == "scratch") {
    ASSERT_FALSE(scratch.empty());
  }

  if (pipe_closed) {
    program.close_pipe();
  } else {
    ::kill(program.pid(), ending.signal_number);
  }
  const auto code = program.wait(120s);
  ASSERT_TRUE(code.has_value()) << "still running:\n" << program.output();
  if (ending.signal_number == SIGKILL) {
    EXPECT_EQ(*code, 128 + SIGKILL);
  } else if (pipe_closed || (phase == "report" && std::string_view(ending.command) == "run")) {
    // A reader gone ends the output, not the work: the command finished as it would have. A
    // signal while the report is written comes after the load: the run is complete.
    EXPECT_EQ(*code, 0) << program.output() << sanitizer_reports(dir, "sanitizer");
  } else {
    EXPECT_NE(*code, 0) << program.output();
  }

  // No postmaster, backend or pgbench of the scratch cluster, and no directory (for SIGKILL
  // the watchdog's work, so within a bound).
  if (!scratch.empty()) expect_scratch_gone(scratch, program.output());
  expect_load_gone(dir);

  if (std::string_view(ending.target) == "external") {
    if (ending.signal_number == SIGKILL) {
      // The next invocation that touches the server puts back what the killed one changed.
      const auto next =
          engine::run_command({pgwaitprof_binary(), "run", "--no-daemon", "--data-dir",
                               (dir / "next").string(), "--", "-c", "1", "-t", "20"});
      EXPECT_EQ(next.exit_code, 0) << next.output;
    }
    EXPECT_EQ(read_text(auto_conf()), before_);
    EXPECT_EQ(psql("SHOW synchronous_commit").output, "on\n");
  }
  expect_runs_complete_or_failed_with_reason(dir);
}

// Every point of the work, each ended by one signal of each class: a terminating signal
// (SIGHUP, SIGINT, SIGTERM and SIGQUIT share one handler, kTerminatingSignals in
// daemon/commands/foreground.h, for `run` and `matrix` alike), a closed pipe, and SIGKILL (the
// watchdog's work). The four terminating signals take turns over the points, so each ends two
// of them. The list is the test's own, not kTerminatingSignals: a signal dropped from the handler
// must fail here. (All six signals at every point took 48 tests and 425 s of the sanitizer lane,
// 2026-12-06, and tested the one handler four times over.)
std::vector<Ending> endings() {
  std::vector<Ending> points;
  for (const char* phase : {"setup", "load", "report"})
    points.push_back({"run", "scratch", phase, 0});
  for (const char* phase : {"load", "report"}) points.push_back({"run", "external", phase, 0});
  for (const char* phase : {"load", "between-cells"}) {
    points.push_back({"matrix", "external", phase, 0});
  }
  points.push_back({"matrix", "scratch", "between-cells", 0});
  const int terminating[] = {SIGHUP, SIGINT, SIGTERM, SIGQUIT};
  std::vector<Ending> all;
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (const int signal_number : {terminating[i % std::size(terminating)], SIGPIPE, SIGKILL}) {
      all.push_back(points[i]);
      all.back().signal_number = signal_number;
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Endings, SignalClass, ::testing::ValuesIn(endings()),
                         [](const auto& info) { return name_of(info.param); });

// The watchdog as a victim (issue 40 item 2): `pgwaitprof __supervise` killed alone, then
// followed by its parent, then together with it, at each point of a scratch-cluster run.
struct WatchdogEnding {
  const char* phase;    // setup, load, report
  const char* victims;  // watchdog, watchdog_then_parent, both
};
void PrintTo(const WatchdogEnding& ending, std::ostream* out) {
  *out << ending.phase << "_" << ending.victims;
}

// The live watchdog whose parent is `parent`; -1 when there is none.
pid_t watchdog_of(pid_t parent) {
  for (const pid_t pid : processes_with("pgwaitprof __supervise")) {
    const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto paren = stat.rfind(") ");
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));
    std::string state;
    pid_t parent_pid = 0;
    fields >> state >> parent_pid;
    if (parent_pid == parent) return pid;
  }
  return -1;
}

class WatchdogVictim : public ::testing::TestWithParam<WatchdogEnding> {};

TEST_P(WatchdogVictim, ReplacedAtOnceOrItsLeftoversSweptByTheNextInvocation) {
  require_cluster();
  const auto ending = GetParam();
  const std::string phase = ending.phase;
  const std::string victims = ending.victims;
  const auto dir = temp_dir(fmt::format("watchdog-{}-{}", phase, victims));
  const std::string hold = phase == "setup" ? "scratch-started" : phase;
  // Killed alone, the watchdog is replaced and the run goes on to its end.
  const bool alone = victims == "watchdog";
  PipedProgram program(command_line({"run", "scratch", ending.phase, SIGKILL}, dir),
                       {"PGWAITPROF_FAULT_HOLD=" + hold,
                        std::string("PGWAITPROF_FAULT_HOLD_SECONDS=") + (alone ? "2" : "60")});
  ASSERT_TRUE(program.until(90s,
                            [&] {
                              return phase == "load"
                                         ? load_running(dir.string())
                                         : program.output().find("holding at " + hold) !=
                                               std::string::npos;
                            }))
      << "never reached " << phase << ":\n"
      << program.output();
  const std::string scratch = scratch_directory(program.output());
  ASSERT_FALSE(scratch.empty()) << program.output();
  const pid_t first = watchdog_of(program.pid());
  ASSERT_GT(first, 0) << "no watchdog";
  ::kill(first, SIGKILL);
  if (victims == "both") ::kill(program.pid(), SIGKILL);
  if (victims != "both") {
    // Noticed at once: a new watchdog within a second.
    pid_t second = -1;
    EXPECT_TRUE(eventually(1s, [&] {
      second = watchdog_of(program.pid());
      return second > 0 && second != first;
    })) << program.output();
    if (victims == "watchdog_then_parent") ::kill(program.pid(), SIGKILL);
  }
  const auto code = program.wait(120s);
  ASSERT_TRUE(code.has_value()) << "still running:\n" << program.output();
  if (alone) {
    EXPECT_EQ(*code, 0) << program.output();
  } else {
    EXPECT_EQ(*code, 128 + SIGKILL);
  }
  if (victims == "both") {
    // Nobody left to clean up, perhaps: the next pgwaitprof does, whatever its subcommand.
    const auto next = engine::run_command({pgwaitprof_binary(), "explain", "ClientRead"});
    EXPECT_EQ(next.exit_code, 0) << next.output;
  }
  expect_scratch_gone(scratch, program.output());
  expect_load_gone(dir);
  expect_runs_complete_or_failed_with_reason(dir);
}

std::vector<WatchdogEnding> watchdog_endings() {
  std::vector<WatchdogEnding> all;
  for (const char* phase : {"setup", "load", "report"}) {
    for (const char* victims : {"watchdog", "watchdog_then_parent", "both"}) {
      all.push_back({phase, victims});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Phases, WatchdogVictim, ::testing::ValuesIn(watchdog_endings()),
                         [](const auto& info) {
                           return std::string(info.param.phase) + "_" + info.param.victims;
                         });

// A stopped watchdog (issue 47 item 4): SIGSTOP of `pgwaitprof __supervise` is noticed at once;
// the stopped one is ended and a new one started, so a parent killed afterwards still leaves
// nothing; a stopped pair (both stopped, nobody left to replace anything) is dead to the next
// invocation's sweep; and when no new watchdog can start, the run stops itself cleanly.
class WatchdogStopped : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
  // Nothing stopped outlives the test, whatever it found.
  void TearDown() override {
    if (watchdog_ > 0 && !gone(watchdog_)) ::kill(watchdog_, SIGKILL);
  }
  // A scratch-cluster run held at `hold` (or in its load), its watchdog found.
  void start(const std::string& name, const std::string& hold,
             std::vector<std::string> environment = {}) {
    dir_ = temp_dir("watchdog-stopped-" + name);
    environment.push_back("PGWAITPROF_FAULT_HOLD=" + hold);
    environment.push_back("PGWAITPROF_FAULT_HOLD_SECONDS=60");
    program_ = std::make_unique<PipedProgram>(
        command_line({"run", "scratch", "load", SIGKILL}, dir_), environment);
    ASSERT_TRUE(program_->until(90s, [&] {
      return hold == "load" ? load_running(dir_.string())
                            : program_->output().find("holding at " + hold) != std::string::npos;
    })) << program_->output();
    scratch_ = scratch_directory(program_->output());
    ASSERT_FALSE(scratch_.empty()) << program_->output();
    watchdog_ = watchdog_of(program_->pid());
    ASSERT_GT(watchdog_, 0) << "no watchdog";
  }
  static bool gone(pid_t pid) {
    const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto paren = stat.rfind(") ");
    return paren == std::string::npos || stat[paren + 2] == 'Z';
  }
  std::filesystem::path dir_;
  std::unique_ptr<PipedProgram> program_;
  std::string scratch_;
  pid_t watchdog_ = -1;
};

TEST_F(WatchdogStopped, IsEndedAndReplacedSoAKilledParentStillLeavesNothing) {
  start("replaced", "report");
  ::kill(watchdog_, SIGSTOP);
  pid_t second = -1;
  EXPECT_TRUE(eventually(2s, [&] {
    second = watchdog_of(program_->pid());
    return second > 0 && second != watchdog_;
  })) << program_->output();
  EXPECT_TRUE(eventually(2s, [&] { return gone(watchdog_); })) << "the stopped one is left";
  ::kill(program_->pid(), SIGKILL);
  const auto code = program_->wait(60s);
  ASSERT_TRUE(code.has_value()) << program_->output();
  EXPECT_EQ(*code, 128 + SIGKILL);
  expect_scratch_gone(scratch_, program_->output());
  expect_load_gone(dir_);
}

TEST_F(WatchdogStopped, AStoppedPairIsSweptByTheNextInvocation) {
  start("pair", "report");
  // The parent first, so that nothing is left to notice the watchdog stop.
  ::kill(program_->pid(), SIGSTOP);
  ::kill(watchdog_, SIGSTOP);
  const auto next = engine::run_command({pgwaitprof_binary(), "explain", "ClientRead"});
  EXPECT_EQ(next.exit_code, 0) << next.output;
  expect_scratch_gone(scratch_, program_->output() + next.output);
  EXPECT_TRUE(eventually(5s, [&] { return gone(watchdog_); })) << "the stopped watchdog is left";
  if (!gone(watchdog_)) ::kill(watchdog_, SIGKILL);
  ::kill(program_->pid(), SIGKILL);
  program_->wait(30s);
}

TEST_F(WatchdogStopped, NoNewWatchdogStopsTheRunCleanly) {
  start("no-new", "load", {"PGWAITPROF_FAULT_FAIL=watchdog-restart"});
  ::kill(watchdog_, SIGSTOP);
  const auto code = program_->wait(60s);
  ASSERT_TRUE(code.has_value()) << program_->output();
  EXPECT_NE(*code, 0) << program_->output();
  EXPECT_NE(program_->output().find("could not start a new watchdog"), std::string::npos)
      << program_->output();
  expect_scratch_gone(scratch_, program_->output());
  expect_load_gone(dir_);
  expect_runs_complete_or_failed_with_reason(dir_);
  EXPECT_TRUE(eventually(2s, [&] { return gone(watchdog_); })) << "the stopped watchdog is left";
  if (!gone(watchdog_)) ::kill(watchdog_, SIGKILL);
}

}  // namespace
}  // namespace pgwaitprof::testing
