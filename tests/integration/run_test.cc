// `pgwaitprof run` against the real scratch cluster of deploy/test.sh with real pgbench:
// complete, failed and interrupted runs, every built-in workload, both sample sources, bad
// input, and passwords kept out of everything written.
#include "model/run.h"

#include <nlohmann/json.hpp>

#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

using namespace std::chrono_literals;

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

TEST_F(RunTest, CompletedRunWritesEveryFileWithConsistentTotals) {
  const auto data = temp_dir("run-complete");
  auto run = pgwaitprof_run(
      data, {test_conninfo(), "--source", "activity", "--hz", "200", "--label", "it"},
      {"-c", "2", "-j", "1", "-T", "4"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const char* file : {"report.json", "report.txt", "report.md", "profile.csv", "timeline.csv",
                           "waits.folded", "report.html", "pgbench.log"}) {
    EXPECT_TRUE(std::filesystem::exists(run.dir / file)) << file;
  }
  EXPECT_NE(run.output.find("wait events"), std::string::npos) << run.output;
  const model::Run report = model::run_from_json(run.report);
  EXPECT_EQ(report.status, model::RunStatus::kCompleted);
  EXPECT_EQ(report.sampler.source, model::SamplerSource::kActivity);
  EXPECT_EQ(report.clients, 2);

  // The profile is exactly the sum of the timeline's intervals.
  model::Profile summed;
  for (const auto& slice : report.timeline) summed.merge(slice.profile);
  EXPECT_EQ(summed.snapshots(), report.profile.snapshots());
  EXPECT_EQ(summed.counts(), report.profile.counts());
  // Snapshots ~ hz x duration.
  EXPECT_NEAR(static_cast<double>(report.profile.snapshots()), 200 * report.duration.count(),
              0.15 * 200 * report.duration.count());
  ASSERT_TRUE(report.loadgen.has_value());
  EXPECT_GT(report.loadgen->tps, 0);
  EXPECT_EQ(report.loadgen->clients, 2);
  int progress_intervals = 0;
  for (const auto& slice : report.timeline) {
    if (slice.loadgen) ++progress_intervals;
  }
  EXPECT_GE(progress_intervals, 3);
  EXPECT_GE(report.environment.server_version_num, 150000);
  EXPECT_FALSE(report.environment.settings.empty());
  EXPECT_NE(read_text(run.dir / "report.html").find("<svg"), std::string::npos);
  EXPECT_NE(read_text(run.dir / "pgbench.log").find("tps = "), std::string::npos);

  // report re-renders from report.json alone, in every format.
  for (const char* format : {"text", "md", "json", "csv", "timeline-csv", "folded", "html"}) {
    auto rendered =
        engine::run_command({pgwaitprof_binary(), "report", run.dir.string(), "--format", format});
    EXPECT_EQ(rendered.exit_code, 0) << format << ": " << rendered.output;
    EXPECT_GT(rendered.output.size(), 20u) << format;
  }
  auto json =
      engine::run_command({pgwaitprof_binary(), "report", run.dir.string(), "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(json.output), run.report);
}

TEST_F(RunTest, FailingPgbenchStillWritesAFailedReport) {
  const auto data = temp_dir("run-failed");
  auto run = pgwaitprof_run(data, {test_conninfo(), "--source", "activity"}, {"--no-such-option"});
  EXPECT_NE(run.exit_code, 0);
  ASSERT_FALSE(run.report.is_null()) << run.output;
  EXPECT_EQ(run.report["status"], "failed");
  EXPECT_NE(run.report["loadgen_stderr"].get<std::string>().find("no-such-option"),
            std::string::npos);
  EXPECT_NE(run.output.find("pgwaitprof: run failed: pgbench exited with code 1"),
            std::string::npos)
      << run.output;
  EXPECT_NE(read_text(run.dir / "report.txt").find("FAILED"), std::string::npos);
}

TEST_F(RunTest, AbortedClientsFailTheRun) {
  const auto data = temp_dir("run-aborted");
  write_text(data / "bad.sql", "SELECT no_such_column FROM pgbench_branches;\n");
  auto run = pgwaitprof_run(data, {test_conninfo(), "--source", "activity"},
                            {"-n", "-f", (data / "bad.sql").string(), "-c", "2", "-T", "2"});
  EXPECT_NE(run.exit_code, 0);
  ASSERT_FALSE(run.report.is_null()) << run.output;
  EXPECT_EQ(run.report["status"], "failed");
  EXPECT_NE(run.report["loadgen_stderr"].get<std::string>().find("aborted"), std::string::npos);
}

TEST_F(RunTest, InterruptedRunWritesAnInterruptedReport) {
  const auto data = temp_dir("run-interrupted");
  ChildProcess run({pgwaitprof_binary(), "run", test_conninfo(), "--source", "activity",
                    "--data-dir", data.string(), "--", "-c", "2", "-T", "60"},
                   data / "out.log");
  ASSERT_TRUE(eventually(20s, [&] {
    return run.log().find("progress: 2.0 s") != std::string::npos;
  })) << run.log();
  run.signal(SIGINT);
  const auto code = run.wait(15s);
  ASSERT_TRUE(code.has_value()) << run.log();
  EXPECT_NE(*code, 0);
  std::filesystem::path dir;
  for (const auto& entry : std::filesystem::directory_iterator(data / "runs")) dir = entry.path();
  const auto report = model::run_from_json(nlohmann::json::parse(read_text(dir / "report.json")));
  EXPECT_EQ(report.status, model::RunStatus::kInterrupted);
  EXPECT_GE(report.timeline.size(), 2u);
  EXPECT_GT(report.profile.snapshots(), 0u);
  EXPECT_LT(report.duration, base::Seconds(30));
}

TEST_F(RunTest, EveryBuiltInWorkloadRuns) {
  for (const char* workload : {"tpcb", "tpcb-func", "select-only", "update-5rows", "bulk-copy"}) {
    const auto data = temp_dir(std::string("run-workload-") + workload);
    auto run =
        pgwaitprof_run(data, {test_conninfo(), "--source", "activity", "--workload", workload},
                       {"-c", "2", "-T", "2"});
    EXPECT_EQ(run.exit_code, 0) << workload << ": " << run.output;
    ASSERT_FALSE(run.report.is_null()) << workload;
    EXPECT_EQ(run.report["status"], "completed") << workload;
    EXPECT_EQ(run.report["workload"], workload);
    EXPECT_GT(run.report["loadgen"]["tps"].get<double>(), 0) << workload;
  }
}

TEST_F(RunTest, PgWaitSamplingSourceIsRecorded) {
  const auto data = temp_dir("run-wait-sampling");
  auto run = pgwaitprof_run(data, {test_conninfo(), "--source", "pg_wait_sampling"},
                            {"-c", "2", "-T", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.report["sampler"]["source"], "pg_wait_sampling");
  EXPECT_NEAR(run.report["sampler"]["period_s"].get<double>(), 0.01, 1e-9);
  EXPECT_GT(run.report["profile"]["snapshots"].get<uint64_t>(), 100u);
}

// The memory source in a run (and, in deploy/test.sh, under ASan/UBSan like the other sources):
// its reader thread, the view of the segment and the hand-over to the I/O thread. At 1 kHz
// every tick is a snapshot or a missed tick, and the report says which source it was.
TEST_F(RunTest, MemorySourceRunIsReported) {
  const auto data = temp_dir("run-memory");
  auto run = pgwaitprof_run(data, {test_conninfo(), "--source", "memory", "--hz", "1000"},
                            {"-c", "2", "-T", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.report["sampler"]["source"], "memory");
  const auto snapshots = run.report["profile"]["snapshots"].get<double>();
  const auto missed = run.report["sampler"]["missed_ticks"].get<double>();
  const auto seconds = run.report["duration_s"].get<double>();
  EXPECT_GT(snapshots, 0.5 * 1000 * seconds) << "missed " << missed;
  EXPECT_NEAR(snapshots + missed, 1000 * seconds, 0.15 * 1000 * seconds);
  bool client_waits = false;
  for (const auto& entry : run.report["profile"]["entries"]) {
    client_waits |= entry["backend_type"] == "client backend" && entry["state"] == "active";
  }
  EXPECT_TRUE(client_waits) << run.report["profile"].dump(1);
}

TEST_F(RunTest, BadInputGetsOneLineErrors) {
  auto hz = engine::run_command({pgwaitprof_binary(), "run", "--hz", "0"});
  EXPECT_EQ(hz.exit_code, 2);
  EXPECT_NE(hz.output.find("--hz"), std::string::npos) << hz.output;

  // An unknown workload is a usage error: refused before any work (no run directory).
  const auto data = temp_dir("run-bad-workload");
  auto workload = engine::run_command({pgwaitprof_binary(), "run", "--data-dir", data.string(),
                                       "--workload", "nope", test_conninfo(), "--", "-T", "1"});
  EXPECT_EQ(workload.exit_code, 2);
  EXPECT_NE(workload.output.find("--workload: nope not in"), std::string::npos) << workload.output;
  EXPECT_FALSE(std::filesystem::exists(data / "runs"));

  const auto unreachable_data = temp_dir("run-unreachable");
  auto unreachable =
      pgwaitprof_run(unreachable_data, {"host=/nonexistent port=1 dbname=x"}, {"-T", "1"});
  EXPECT_NE(unreachable.exit_code, 0);
  EXPECT_EQ(unreachable.report["status"], "failed");
  EXPECT_NE(unreachable.report["error"].get<std::string>().find(
                "could not connect to \"host=/nonexistent"),
            std::string::npos)
      << unreachable.report["error"];
}

TEST_F(RunTest, PasswordsNeverAppearInOutputOrFiles) {
  const auto data = temp_dir("run-password");
  // Trust authentication ignores the password, so the run works and we can look for it.
  auto run = pgwaitprof_run(data, {test_conninfo() + " password=sekr1t-pw", "--source", "activity"},
                            {"-c", "1", "-T", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output.find("sekr1t-pw"), std::string::npos);
  for (const auto& entry : std::filesystem::directory_iterator(run.dir)) {
    EXPECT_EQ(read_text(entry.path()).find("sekr1t-pw"), std::string::npos) << entry.path();
  }
  EXPECT_NE(run.report["target"].get<std::string>().find("password=********"), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::testing
