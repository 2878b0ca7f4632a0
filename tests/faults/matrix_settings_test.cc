// A matrix leaves the server as it found it (issue 8 item 9), and keeps its files private
// (item 12): postgresql.auto.conf byte-identical after a completed plan with a failing variant,
// after an interrupt, and after plans refused before anything changed; the plan's copy without
// the password; modes 0600/0640 in a 0700 data directory; a failed matrix marked failed.
#include <fmt/format.h>

#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

std::filesystem::path auto_conf() {
  return std::filesystem::path(env("PGWAITPROF_TEST_PGDATA")) / "postgresql.auto.conf";
}

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
        "hz: 100\nwarmup: 0\ncheckpoint: false\nvariants:\n{}",
        target, duration, variants);
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

}  // namespace
}  // namespace pgwaitprof::testing
