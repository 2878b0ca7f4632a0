// A matrix leaves the server as it found it (issue 8 item 9), and keeps its files private
// (item 12): postgresql.auto.conf byte-identical after a completed plan with a failing variant,
// after an interrupt, and after plans refused before anything changed; the plan's copy without
// the password; modes 0600/0640 in a 0700 data directory; a failed matrix marked failed.
#include <fmt/format.h>

#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

class MatrixSettingsFaults : public ::testing::Test {
 protected:
  // A server with a value the user set before, which the plan also changes.
  void SetUp() override {
    require_cluster();
    ASSERT_EQ(psql("ALTER SYSTEM SET work_mem = '77MB'").exit_code, 0);
    ASSERT_EQ(psql("SELECT pg_reload_conf()").exit_code, 0);
    // A line by hand, which ALTER SYSTEM would drop: only the journal's bytes bring it back.
    std::ofstream(auto_conf(), std::ios::app) << "# hand edit  trailing spaces   \n";
    before_ = read_text(auto_conf());
    ASSERT_NE(before_.find("work_mem = '77MB'"), std::string::npos) << before_;
    written_ = std::filesystem::last_write_time(auto_conf());
  }
  void TearDown() override {
    psql("ALTER SYSTEM RESET maintenance_work_mem");
    psql("ALTER SYSTEM RESET work_mem");
    psql("SELECT pg_reload_conf()");
  }
  void expect_server_as_found() {
    EXPECT_EQ(read_text(auto_conf()), before_);
    EXPECT_TRUE(eventually(3s, [] { return psql("SHOW work_mem").output == "77MB\n"; }))
        << psql("SHOW work_mem").output;
  }
  std::string plan(const std::string& variants, int duration = 2,
                   const std::string& target = test_conninfo()) const {
    return fmt::format(
        "name: faults\ntarget: \"{}\"\nscale: 2\nclients: [1]\nduration: {}\nrepeats: 1\n"
        "hz: 100\nwarmup: 0\ncheckpoint: false\npgbench_args: [-R, '{}']\nvariants:\n{}",
        target, duration, kModestRate, variants);
  }
  engine::CommandResult matrix(const std::filesystem::path& dir, const std::string& plan_text) {
    write_text(dir / "plan.yaml", plan_text);
    return engine::run_command({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(),
                                "--data-dir", (dir / "data").string()});
  }
  std::string before_;
  std::filesystem::file_time_type written_;
};

std::filesystem::path only_matrix(const std::filesystem::path& data) {
  std::filesystem::path found;
  for (const auto& entry : std::filesystem::directory_iterator(data / "matrix"))
    found = entry.path();
  return found;
}

// A completed variant and a failing one (read-only transactions make tpcb's updates fail):
// afterwards the prior work_mem is back, byte for byte. The plan's password stays out of the
// copy, and every file is private.
TEST_F(MatrixSettingsFaults, FailingVariantLeavesAutoConfByteIdenticalAndFilesPrivate) {
  const auto dir = temp_dir("matrix-failing");
  const std::string secret = "matrix-Secr3t";
  auto result =
      matrix(dir, plan("  - name: small\n    settings: {work_mem: 8MB, "
                       "maintenance_work_mem: 100MB}\n"
                       "  - name: readonly\n    settings: {default_transaction_read_only: "
                       "\"on\", work_mem: 16MB}\n",
                       2, test_conninfo() + " password=" + secret));
  expect_server_as_found();
  EXPECT_EQ(result.output.find(secret), std::string::npos) << result.output;
  const auto matrix_dir = only_matrix(dir / "data");
  const auto copy = read_text(matrix_dir / "plan.yaml");
  EXPECT_EQ(copy.find(secret), std::string::npos) << copy;
  EXPECT_NE(copy.find("work_mem: 8MB"), std::string::npos) << copy;
  EXPECT_EQ(permissions_of(dir / "data"), 0700u);
  for (const auto& file : files_under(dir / "data")) {
    const auto mode = permissions_of(file);
    EXPECT_TRUE(mode == 0600 || mode == 0640) << file << fmt::format(" has mode {:o}", mode);
    EXPECT_EQ(read_text(file).find(secret), std::string::npos) << file;
  }
  const auto status = nlohmann::json::parse(read_text(matrix_dir / "status.json"));
  EXPECT_NE(status["status"], "completed") << status.dump();
}

// SIGINT in the middle of a variant's run: the settings are restored before the exit.
TEST_F(MatrixSettingsFaults, InterruptedMatrixLeavesAutoConfByteIdentical) {
  const auto dir = temp_dir("matrix-interrupted");
  write_text(dir / "plan.yaml", plan("  - name: a\n    settings: {work_mem: 8MB}\n"
                                     "  - name: b\n    settings: {work_mem: 16MB}\n",
                                     30));
  ChildProcess matrix({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(), "--data-dir",
                       (dir / "data").string()},
                      dir / "matrix.log");
  ASSERT_TRUE(eventually(30s, [&] { return psql("SHOW work_mem").output == "8MB\n"; }))
      << matrix.log();
  std::this_thread::sleep_for(1s);
  matrix.signal(SIGINT);
  const auto code = matrix.wait(30s);
  ASSERT_TRUE(code.has_value()) << matrix.log();
  EXPECT_NE(*code, 0);
  expect_server_as_found();
  const auto status = nlohmann::json::parse(read_text(only_matrix(dir / "data") / "status.json"));
  EXPECT_EQ(status["status"], "interrupted") << status.dump();
}

// Names that are not settings (`all` among them), bad values and restart-only settings on a
// server pgwaitprof may not restart: refused before the first change, the matrix marked failed.
TEST_F(MatrixSettingsFaults, BadPlansAreRefusedBeforeAnythingChanges) {
  const std::pair<std::string, std::string> cases[] = {
      {"{work_mem: 8MB, all: \"x\"}", "\"all\""},
      {"{work_mem: 8MB, no_such_setting: \"1\"}", "no_such_setting"},
      {"{work_mem: banana}", "invalid value for parameter \"work_mem\""},
      {"{work_mem: 8TB}", "work_mem"},
      {"{shared_buffers: 256MB}", "needs a server restart"},
  };
  int index = 0;
  for (const auto& [settings, expected] : cases) {
    const auto dir = temp_dir("matrix-refused-" + std::to_string(index++));
    auto result = matrix(dir, plan("  - name: fine\n    settings: {work_mem: 8MB}\n"
                                   "  - name: bad\n    settings: " +
                                   settings + "\n"));
    EXPECT_NE(result.exit_code, 0) << settings;
    EXPECT_NE(result.output.find(expected), std::string::npos) << settings << ": " << result.output;
    // Not even restored: never changed (ALTER SYSTEM rewrites the file).
    EXPECT_EQ(std::filesystem::last_write_time(auto_conf()), written_) << settings;
    EXPECT_EQ(read_text(auto_conf()), before_) << settings;
    if (std::filesystem::exists(dir / "data" / "matrix")) {
      const auto matrix_dir = only_matrix(dir / "data");
      EXPECT_TRUE(std::filesystem::is_empty(matrix_dir / "runs")) << settings;
      const auto status = nlohmann::json::parse(read_text(matrix_dir / "status.json"));
      EXPECT_EQ(status["status"], "failed") << settings;
      EXPECT_NE(status["error"].get<std::string>().find(expected), std::string::npos)
          << status.dump();
    }
  }
}

// Another session's ALTER SYSTEM while the matrix runs (issue 47 item 2) is kept and named in
// one warning; what the matrix changed comes back. The file is then what the other session's
// ALTER SYSTEM would have made of it without the matrix (ALTER SYSTEM rewrites the whole file,
// so the hand-edited line goes as it would have gone).
TEST_F(MatrixSettingsFaults, AnotherSessionsAlterSystemMidMatrixIsKeptAndNamed) {
  const auto dir = temp_dir("matrix-other-session");
  write_text(dir / "plan.yaml", plan("  - name: a\n    settings: {work_mem: 8MB}\n"
                                     "  - name: b\n    settings: {work_mem: 16MB}\n",
                                     3));
  ChildProcess matrix({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(), "--data-dir",
                       (dir / "data").string()},
                      dir / "matrix.log");
  ASSERT_TRUE(eventually(30s, [&] { return psql("SHOW work_mem").output == "8MB\n"; }))
      << matrix.log();
  ASSERT_EQ(psql("ALTER SYSTEM SET maintenance_work_mem = '123MB'").exit_code, 0);
  const auto code = matrix.wait(90s);
  ASSERT_TRUE(code.has_value()) << matrix.log();
  EXPECT_EQ(*code, 0) << matrix.log();
  EXPECT_EQ(read_text(auto_conf()),
            "# Do not edit this file manually!\n"
            "# It will be overwritten by the ALTER SYSTEM command.\n"
            "work_mem = '77MB'\n"
            "maintenance_work_mem = '123MB'\n");
  EXPECT_TRUE(eventually(3s, [] { return psql("SHOW work_mem").output == "77MB\n"; }));
  EXPECT_TRUE(eventually(3s, [] { return psql("SHOW maintenance_work_mem").output == "123MB\n"; }));
  const auto log = matrix.log();
  const auto warning = log.find("another session changed");
  ASSERT_NE(warning, std::string::npos) << log;
  EXPECT_NE(log.find("maintenance_work_mem", warning), std::string::npos) << log;
  EXPECT_EQ(log.find("another session changed", warning + 1), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(only_matrix(dir / "data") / "settings-journal.json"));
}

// The -T of a run's load generator; 0 when it has none.
int run_seconds(const std::filesystem::path& run_dir) {
  const auto report = nlohmann::json::parse(read_text(run_dir / "report.json"));
  const auto& argv = report["loadgen_argv"];
  for (size_t index = 0; index + 1 < argv.size(); ++index) {
    if (argv[index] == "-T") return std::stoi(argv[index + 1].get<std::string>());
  }
  return 0;
}

// `matrix --resume` runs the rest as the matrix was started (issue 47 item 3): a plan without a
// target run with --target and --duration, killed between its cells, resumes on that server
// (whose settings the killed matrix left in its variant's state, with the journal's marker)
// with 2 s runs; the saved invocation holds no password; a resume whose options contradict it is
// refused in one line, changing nothing.
TEST_F(MatrixSettingsFaults, ResumeRunsWithTheOptionsTheMatrixWasStartedWith) {
  const auto dir = temp_dir("matrix-resume-options");
  const std::string secret = "resume-Secr3t";
  write_text(dir / "plan.yaml",
             "name: resumed\nscale: 2\nclients: [1]\nduration: 6\nrepeats: 1\nhz: 100\n"
             "warmup: 0\ncheckpoint: false\npgbench_args: [-R, '" +
                 std::string(kModestRate) +
                 "']\nvariants:\n"
                 "  - name: a\n    settings: {work_mem: 8MB}\n"
                 "  - name: b\n    settings: {work_mem: 16MB}\n");
  ChildProcess first({"/usr/bin/env", "PGWAITPROF_FAULT_HOLD=between-cells", pgwaitprof_binary(),
                      "matrix", (dir / "plan.yaml").string(), "--data-dir", (dir / "data").string(),
                      "--target", test_conninfo() + " password=" + secret, "--duration", "2"},
                     dir / "first.log");
  ASSERT_TRUE(eventually(90s, [&] {
    return first.log().find("holding at between-cells") != std::string::npos;
  })) << first.log();
  first.signal(SIGKILL);
  ASSERT_TRUE(first.wait(30s).has_value());
  ASSERT_EQ(psql("SHOW work_mem").output, "8MB\n");  // left in variant a's settings
  const auto matrix_dir = only_matrix(dir / "data");
  for (const auto& file : files_under(matrix_dir)) {
    EXPECT_EQ(read_text(file).find(secret), std::string::npos) << file;
  }

  const auto refused = engine::run_command(
      {pgwaitprof_binary(), "matrix", "--resume", matrix_dir.string(), "--duration", "5"});
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("--duration 5 contradicts the matrix's 2 s runs"),
            std::string::npos)
      << refused.output;
  EXPECT_EQ(std::count(refused.output.begin(), refused.output.end(), '\n'), 1) << refused.output;
  const auto other = engine::run_command({pgwaitprof_binary(), "matrix", "--resume",
                                          matrix_dir.string(), "--target", "host=elsewhere"});
  EXPECT_NE(other.exit_code, 0) << other.output;
  EXPECT_NE(other.output.find("contradicts the matrix's target"), std::string::npos)
      << other.output;

  const auto resumed =
      engine::run_command({pgwaitprof_binary(), "matrix", "--resume", matrix_dir.string()});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("2 of 2 runs completed, 1 from before"), std::string::npos)
      << resumed.output;
  EXPECT_EQ(resumed.output.find("scratch cluster"), std::string::npos) << resumed.output;
  EXPECT_EQ(run_seconds(matrix_dir / "runs" / "a-c1-r1"), 2);
  EXPECT_EQ(run_seconds(matrix_dir / "runs" / "b-c1-r1"), 2);
  expect_server_as_found();
}

}  // namespace
}  // namespace pgwaitprof::testing
