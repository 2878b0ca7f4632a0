// The user's pgbench script options are the workload (issue 47 item 1), against the scratch
// cluster of deploy/test.sh with real pgbench: `run -- -S` runs pgbench's select-only script
// alone (no TPC-B beside it: "transaction type: multiple scripts" was half and half) and the
// report names it; a script file of the user's is named after its file; a built-in workload
// named beside a script option is refused in one line before anything runs.
#include <nlohmann/json.hpp>
#include <string>

#include "model/run.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

class WorkloadTest : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

bool has(const std::vector<std::string>& argv, const std::string& word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

TEST_F(WorkloadTest, SelectOnlyGivenToPgbenchRunsAloneAndNamesTheRun) {
  const auto data = temp_dir("workload-select-only");
  auto run = pgwaitprof_run(data, {test_conninfo(), "--source", "activity", "--brief"},
                            {"-S", "-c", "2", "-R", kModestRate, "-T", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const model::Run report = model::run_from_json(run.report);
  EXPECT_EQ(report.workload, "select-only");
  EXPECT_FALSE(has(report.loadgen_argv, "tpcb-like")) << run.report["loadgen_argv"].dump();
  ASSERT_TRUE(report.loadgen.has_value());
  EXPECT_NE(report.loadgen->transaction_type.find("select only"), std::string::npos)
      << report.loadgen->transaction_type;
  // pgbench's own word, in its output kept in the run directory.
  const auto log = read_text(run.dir / "pgbench.log");
  EXPECT_NE(log.find("transaction type: <builtin: select only>"), std::string::npos) << log;
  EXPECT_EQ(log.find("multiple scripts"), std::string::npos) << log;
  EXPECT_NE(read_text(run.dir / "report.txt").find("select-only"), std::string::npos);
}

TEST_F(WorkloadTest, TheUsersScriptFileIsTheWorkloadAndNamesTheRun) {
  const auto data = temp_dir("workload-file");
  const auto script = data / "one_select.sql";
  write_text(script, "SELECT 1;\n");
  auto run = pgwaitprof_run(data, {test_conninfo(), "--source", "activity", "--brief"},
                            {"--file=" + script.string(), "-c", "2", "-R", kModestRate, "-T", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const model::Run report = model::run_from_json(run.report);
  EXPECT_EQ(report.workload, "file:one_select.sql");
  EXPECT_FALSE(has(report.loadgen_argv, "tpcb-like")) << run.report["loadgen_argv"].dump();
  const auto log = read_text(run.dir / "pgbench.log");
  EXPECT_NE(log.find("transaction type: " + script.string()), std::string::npos) << log;
  EXPECT_EQ(log.find("multiple scripts"), std::string::npos) << log;
}

TEST_F(WorkloadTest, ABuiltinWorkloadBesideAScriptOptionIsRefusedInOneLine) {
  const auto data = temp_dir("workload-refused");
  auto run =
      pgwaitprof_run(data, {test_conninfo(), "--source", "activity", "--workload", "select-only"},
                     {"-N", "-c", "2", "-T", "3"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(run.output,
            "pgwaitprof: workload \"select-only\" and pgbench's script option \"-N\" cannot be "
            "used together\n");
  EXPECT_FALSE(std::filesystem::exists(data / "runs"));
}

}  // namespace
}  // namespace pgwaitprof::testing
