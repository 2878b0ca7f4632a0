// The version matrix (issue 29): every supported major against a real server of that major.
// deploy/version-matrix.sh starts one scratch cluster per major (servers from
// deploy/fetch-servers.sh, Debian's 15) and names each in PGWAITPROF_TEST_PG<major> (a
// connection string); Debian's pgbench and psql 15 drive them all. Per major: a short profiled
// run with a CHECKPOINT during it (the timeline's "ch" mark, every report format, top SQL from
// pg_stat_statements) sampled by the default source, which must be the memory source with its
// kernel check within bounds; every backend state read from memory as pg_stat_activity shows it;
// the blocker case; and the daemon's /metrics. A major without its variable fails: the matrix
// is run through deploy/version-matrix.sh.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/programs.h"
#include "daemon/engine/process.h"
#include "daemon/engine/scratch_cluster.h"
#include "tests/integration/backend_states.h"
#include "tests/integration/harness.h"
#include "tests/versions/major_fixture.h"

namespace pgwaitprof::testing {
namespace {

using namespace std::chrono_literals;

class VersionMatrixTest : public MajorTest {
 protected:
  engine::CommandResult psql(const std::string& sql) const {
    return engine::run_command({base::find_executable("psql"), "-X", "-q", "-At", "-v",
                                "ON_ERROR_STOP=1", "-c", sql, conninfo_});
  }
  // `pgwaitprof run` of pgbench (2 clients at a modest rate, `seconds`) on this major's cluster;
  // `during` is called once pgbench reported its first second.
  template <typename During>
  RunResult profiled_run(const std::filesystem::path& data, int seconds, During during) const {
    ChildProcess run({pgwaitprof_binary(), "run", conninfo_, "--hz", "100", "--cpu-profile",
                      "--label", name("run"), "--data-dir", data.string(), "--", "-c", "2", "-j",
                      "2", "-R", kModestRate, "-T", std::to_string(seconds)},
                     data.parent_path() / (data.filename().string() + ".log"));
    const bool started =
        eventually(20s, [&] { return progress_reached(run.log(), 1.0) || !run.running(); });
    if (started && run.running()) {
      during();
    } else {
      ADD_FAILURE() << "the run ended before pgbench's first progress report:\n" << run.log();
    }
    const auto code = run.wait(60s);
    RunResult result{code.value_or(-1), run.log(), {}, {}};
    if (std::filesystem::exists(data / "runs")) {
      for (const auto& entry : std::filesystem::directory_iterator(data / "runs")) {
        result.dir = entry.path();
      }
    }
    if (std::filesystem::exists(result.dir / "report.json")) {
      result.report = nlohmann::json::parse(read_text(result.dir / "report.json"));
    }
    return result;
  }
  // No collector failed during the run (what PostgreSQL 17's pg_stat_checkpointer broke).
  static void expect_no_collector_failure(const RunResult& run) {
    EXPECT_EQ(run.output.find("collection failed"), std::string::npos) << run.output;
    for (const auto& warning : run.report.value("warnings", nlohmann::json::array())) {
      EXPECT_EQ(warning.dump().find("collect"), std::string::npos) << warning.dump();
    }
  }
};

TEST_P(VersionMatrixTest, ProfiledRunMarksTheCheckpointAndShowsTopSql) {
  const int major = GetParam();
  const auto dir = temp_dir(name("checkpoint"));
  ASSERT_EQ(psql("SELECT pg_stat_statements_reset()").exit_code, 0);
  // 5 s: the CHECKPOINT (issued after pgbench's first second) can take 2 s on a busy machine, and
  // before 15 its counters reach pg_stat_bgwriter through the statistics collector up to a second
  // later; with 3 s a CI run ended before 14's counter moved.
  auto run = profiled_run(dir / "data", 5, [&] { EXPECT_EQ(psql("CHECKPOINT").exit_code, 0); });
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ASSERT_TRUE(run.report.is_object()) << run.output;
  EXPECT_EQ(run.report["status"], "completed");
  EXPECT_EQ(run.report["environment"]["server_version_num"].get<int>() / 10000, major);
  expect_no_collector_failure(run);
  EXPECT_GT(run.report["loadgen"]["tps"].get<double>(), 0);
  EXPECT_GE(run.report["timeline"].size(), 2u);
  // No --source: auto traces a local server (root, BTF), and the client backends' traced time
  // agrees with the kernel's own accounting of them within 2 % (the report's check).
  const auto& sampler = run.report["sampler"];
  EXPECT_EQ(sampler["requested_source"], "auto");
  EXPECT_EQ(sampler["source"], "trace") << sampler.dump() << run.output;
  EXPECT_EQ(sampler["source_reason"], "local server, traced in the kernel");
  ASSERT_TRUE(sampler["trace"].is_object()) << sampler.dump();
  const auto& witness = sampler["trace"]["witness"];
  const double traced = witness["on_cpu_s"].get<double>() + witness["runqueue_s"].get<double>();
  const double kernel =
      witness["kernel_on_cpu_s"].get<double>() + witness["kernel_runqueue_s"].get<double>();
  EXPECT_GT(kernel, 0.1) << witness.dump();
  EXPECT_NEAR(traced, kernel, 0.02 * kernel + 0.01) << witness.dump();
  EXPECT_NE(read_text(run.dir / "report.txt").find("within 2 %"), std::string::npos);

  // --cpu-profile: the client backends' on-CPU samples with the server's own functions named
  // (from .dynsym or .symtab of this major's postgres), and the section in the reports.
  const auto& cpu = run.report["cpu_profile"];
  ASSERT_TRUE(cpu.is_object()) << run.output;
  const auto& clients = cpu["groups"]["client backend"];
  EXPECT_GT(clients.value("samples", 0), 0) << cpu.dump();
  bool named = false;
  for (const auto& function : clients.value("self", nlohmann::json::array())) {
    const auto name = function["function"].get<std::string>();
    if (!function["kernel"].get<bool>() && !name.starts_with("[")) named = true;
  }
  EXPECT_TRUE(named) << clients.dump();
  EXPECT_TRUE(run.report["summary"]["cpu"].is_object());
  EXPECT_TRUE(std::filesystem::exists(run.dir / "cpu.folded"));
  EXPECT_NE(read_text(run.dir / "report.txt").find("where the CPU went: client backends"),
            std::string::npos);

  // The CHECKPOINT is in the timeline, in report.json and as the text report's "ch" mark.
  bool checkpoint = false;
  for (const auto& slice : run.report["timeline"]) {
    if (slice.contains("background") && slice["background"].value("checkpoint", false)) {
      checkpoint = true;
    }
  }
  EXPECT_TRUE(checkpoint) << run.report["timeline"].dump();
  // The timeline's bg column, its last: "ch", alone or beside "av" and "vac" (not "check").
  EXPECT_TRUE(std::regex_search(read_text(run.dir / "report.txt"),
                                std::regex(R"(  (av )?ch( vac)?( |\n))")))
      << read_text(run.dir / "report.txt");

  // Top SQL: pgbench's statements with their waits and pg_stat_statements' calls (14+: query
  // ids in pg_stat_activity); 13 says why there are none.
  if (major >= 14) {
    ASSERT_FALSE(run.report["statements"].empty()) << run.report.dump();
    bool with_calls = false;
    for (const auto& statement : run.report["statements"]) {
      if (statement.value("calls", 0) > 0 &&
          statement["text"].get<std::string>().find("pgbench_") != std::string::npos) {
        with_calls = true;
      }
    }
    EXPECT_TRUE(with_calls) << run.report["statements"].dump();
  } else {
    EXPECT_NE(run.report["statements_note"].get<std::string>().find("13"), std::string::npos)
        << run.report.dump();
  }
  // Every format renders from report.json.
  for (const char* format : {"text", "md", "json", "csv", "timeline-csv", "folded", "html"}) {
    auto rendered =
        engine::run_command({pgwaitprof_binary(), "report", run.dir.string(), "--format", format});
    EXPECT_EQ(rendered.exit_code, 0) << format << ": " << rendered.output;
    EXPECT_GT(rendered.output.size(), 20u) << format;
  }
}

// Issue 47: the kernel check never cries wolf on a busy host. The memory source at pgbench -c 2
// (TPC-B) with a second pgbench beside it: 13 said "sampled CPU 0.52 AAS against the kernel's
// 0.85 on a CPU: OUTSIDE" for the CPU backends spend inside waits; compared like with like
// (backends sampled running, waiting or not, against on-CPU + run queue) there is no warning.
// On 13 and 18, as the issue asks (15: MemorySourceTest's test of the same name): two pgbench
// runs at full speed load both CPUs, which the other majors' runs beside it in the test command
// do not need to repeat.
TEST_P(VersionMatrixTest, KernelCheckRaisesNoWarningBesideASecondPgbench) {
  if (GetParam() != 13 && GetParam() != 18) GTEST_SKIP() << "run on 13 and 18 only";
  const auto dir = temp_dir(name("busy"));
  // Ended when the run has ended: a machine that is slow to start the run still has it beside.
  ChildProcess beside(
      {base::find_executable("pgbench"), "-n", "-c", "2", "-j", "2", "-T", "60", conninfo_},
      dir / "beside.log");
  const auto command = engine::run_command({pgwaitprof_binary(), "run", conninfo_, "--source",
                                            "memory", "--data-dir", (dir / "data").string(), "--",
                                            "-c", "2", "-j", "2", "-T", "6"});
  const bool beside_throughout = beside.end();
  ASSERT_EQ(command.exit_code, 0) << command.output;
  EXPECT_TRUE(beside_throughout) << "the second pgbench ended before the run did";
  nlohmann::json report;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "data" / "runs")) {
    report = nlohmann::json::parse(read_text(entry.path() / "report.json"));
  }
  const auto& check = report["summary"]["kernel_check"];
  ASSERT_TRUE(check.is_object()) << command.output;
  std::cout << "pg" << GetParam() << " kernel check beside a second pgbench: " << check.dump()
            << "\n";
  EXPECT_TRUE(check["judged"].get<bool>()) << check.dump();
  EXPECT_TRUE(check["sampled_running_aas"].is_number()) << check.dump();
  EXPECT_TRUE(check["within"].get<bool>()) << check.dump();
  for (const auto& warning : report["warnings"]) {
    EXPECT_EQ(warning.get<std::string>().find("the kernel's"), std::string::npos) << warning;
  }
}

TEST_P(VersionMatrixTest, MemorySourceReadsEveryStateAsPgStatActivityShowsIt) {
  expect_every_state_matches(conninfo_);
}

TEST_P(VersionMatrixTest, LockWaitNamesItsBlocker) {
  const auto dir = temp_dir(name("blocker"));
  std::unique_ptr<ChildProcess> holder;
  auto run = profiled_run(dir / "data", 4, [&] {
    holder = std::make_unique<ChildProcess>(
        std::vector<std::string>{base::find_executable("psql"), "-X", "-q", "-c", "BEGIN", "-c",
                                 "LOCK TABLE pgbench_branches", "-c", "SELECT pg_sleep(1.5)", "-c",
                                 "COMMIT", conninfo_},
        dir / "holder.log");
  });
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ASSERT_NE(holder, nullptr);
  EXPECT_EQ(holder->wait(10s), 0) << holder->log();
  expect_no_collector_failure(run);
  ASSERT_FALSE(run.report["lock_blockers"].empty()) << run.report.dump();
  const auto& blocker = run.report["lock_blockers"][0];
  EXPECT_NE(blocker["object"].get<std::string>().find("pgbench_branches"), std::string::npos)
      << blocker.dump();
  // The holder's statement when the look-up saw it: mostly its pg_sleep, but on a loaded machine
  // the one look-up of a run may come as the sleep ends (CI, pg18: "COMMIT", active, in a
  // transaction 1.56 s old).
  const auto statement = blocker["blocker_statement"].get<std::string>();
  EXPECT_TRUE(statement.find("pg_sleep") != std::string::npos || statement == "COMMIT")
      << blocker.dump();
  EXPECT_EQ(blocker["blocker_application"], "psql") << blocker.dump();
}

TEST_P(VersionMatrixTest, DaemonServesMetricsOfEveryCollector) {
  const auto dir = temp_dir(name("daemon"));
  const int port = engine::free_port();
  write_text(dir / "pgwaitprof.yaml", "listen: 127.0.0.1:" + std::to_string(port) +
                                          "\ndata_dir: " + (dir / "data").string() +
                                          "\ntargets:\n  - name: v\n    dsn: \"" + conninfo_ +
                                          "\"\n    hz: 50\n");
  ChildProcess daemon({pgwaitprof_binary(), "daemon", "-c", (dir / "pgwaitprof.yaml").string()},
                      dir / "daemon.log");
  ChildProcess load(
      {base::find_executable("pgbench"), "-n", "-c", "2", "-R", kModestRate, "-T", "3", conninfo_},
      dir / "pgbench.log");
  std::string exposition;
  const bool sampled = eventually(15s, [&] {
    exposition = scrape(port);
    return metric(exposition,
                  "pgwaitprof_wait_samples_total{target=\"v\",backend_type=\"client "
                  "backend\",state=\"active\"")
                   .value_or(0) > 0 &&
           metric(exposition, "pgwaitprof_collector_success{target=\"v\",collector=\"statements\"}")
               .has_value();
  });
  ASSERT_TRUE(sampled) << exposition << daemon.log();
  EXPECT_EQ(metric(exposition, "pgwaitprof_up{target=\"v\"}"), 1.0);
  EXPECT_EQ(metric(exposition,
                   "pgwaitprof_sampler_info{target=\"v\",source=\"memory\","
                   "requested=\"auto\",hz=\"50\"}"),
            1.0)
      << exposition << daemon.log();
  // The kernel check of the last minute, judged from the fifth kernel reading on (one a second).
  EXPECT_TRUE(eventually(15s, [&] {
    exposition = scrape(port);
    return metric(exposition, "pgwaitprof_kernel_check_within_bounds{target=\"v\"}").has_value();
  })) << exposition;
  EXPECT_EQ(metric(exposition, "pgwaitprof_kernel_check_within_bounds{target=\"v\"}"), 1.0)
      << exposition;
  EXPECT_TRUE(metric(exposition,
                     "pgwaitprof_kernel_check_active_sessions{target=\"v\","
                     "view=\"kernel_on_cpu\"}")
                  .has_value());
  EXPECT_GT(metric(exposition, "pgwaitprof_snapshots_total{target=\"v\"}").value_or(0), 0);
  // Every collector the daemon runs on this major succeeded.
  std::istringstream lines(exposition);
  int collectors = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("pgwaitprof_collector_success{")) continue;
    ++collectors;
    EXPECT_TRUE(line.ends_with(" 1")) << line;
  }
  // activity, kernel, lock_blockers, statements (the background collector is a run's).
  EXPECT_GE(collectors, 4);
  EXPECT_EQ(load.wait(20s), 0) << load.log();
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(10s), 0) << daemon.log();
}

INSTANTIATE_TEST_SUITE_P(Majors, VersionMatrixTest, ::testing::Values(13, 14, 16, 17, 18),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "pg" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace pgwaitprof::testing
