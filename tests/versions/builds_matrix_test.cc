// A build as a variant (issue 29): a matrix plan whose variants name server_bin runs each build
// in a scratch cluster of its own, interleaved, and its table states each build's version()
// and the majors it mixes. Two majors of the version matrix's servers stand in for master and
// patched: deploy/version-matrix.sh names their bin directories in PGWAITPROF_TEST_SERVER_BINS
// ("16=/dir 17=/dir ...", directories the postgres user can enter). Also: an interrupted matrix
// of builds leaves neither cluster behind.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/engine/process.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kMaster = 16;
constexpr int kPatched = 17;

class BuildsMatrixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::istringstream entries(env("PGWAITPROF_TEST_SERVER_BINS"));
    for (std::string entry; entries >> entry;) {
      const auto equals = entry.find('=');
      if (equals == std::string::npos) continue;
      bins_[std::stoi(entry.substr(0, equals))] = entry.substr(equals + 1);
    }
    if (!bins_.contains(kMaster) || !bins_.contains(kPatched)) {
      FAIL() << "PGWAITPROF_TEST_SERVER_BINS names no servers of " << kMaster << " and " << kPatched
             << ": run it through deploy/version-matrix.sh";
    }
  }
  std::filesystem::path write_plan(const std::filesystem::path& dir, int duration_s) const {
    const auto plan = dir / "builds.yaml";
    write_text(
        plan, "name: builds\nscale: 1\nclients: [1, 2]\nduration: " + std::to_string(duration_s) +
                  "\nrepeats: 1\nvariants:\n"
                  "  - name: master\n    server_bin: " +
                  bins_.at(kMaster) + "\n  - name: patched\n    server_bin: " + bins_.at(kPatched) +
                  "\n");
    return plan;
  }
  // The scratch cluster directories the matrix said it created.
  static std::vector<std::string> scratch_dirs(const std::string& log) {
    std::vector<std::string> dirs;
    const std::regex created("creating scratch cluster dir=(\\S+)");
    for (auto match = std::sregex_iterator(log.begin(), log.end(), created);
         match != std::sregex_iterator(); ++match) {
      dirs.push_back((*match)[1]);
    }
    return dirs;
  }
  static std::filesystem::path matrix_dir(const std::filesystem::path& data) {
    std::filesystem::path found;
    for (const auto& entry : std::filesystem::directory_iterator(data / "matrix")) {
      found = entry.path();
    }
    return found;
  }

  std::map<int, std::string> bins_;
};

TEST_F(BuildsMatrixTest, TwoBuildsGiveATableACompareAndWaitProfiles) {
  const auto dir = temp_dir("builds-matrix");
  const auto plan = write_plan(dir, 2);
  ChildProcess matrix(
      {pgwaitprof_binary(), "matrix", plan.string(), "--data-dir", (dir / "data").string()},
      dir / "matrix.log");
  ASSERT_EQ(matrix.wait(120s), 0) << matrix.log();
  const std::string log = matrix.log();

  // One cluster per build, both gone afterwards.
  const auto clusters = scratch_dirs(log);
  ASSERT_EQ(clusters.size(), 2u) << log;
  EXPECT_NE(clusters[0], clusters[1]);
  for (const auto& cluster : clusters) EXPECT_FALSE(std::filesystem::exists(cluster)) << cluster;

  // Interleaved across the builds, each run on its variant's major.
  const auto matrix_path = matrix_dir(dir / "data");
  const auto master_at = log.find("variant=master clients=1");
  const auto patched_at = log.find("variant=patched clients=1");
  const auto master_again = log.find("variant=master clients=2");
  ASSERT_NE(master_at, std::string::npos) << log;
  EXPECT_LT(master_at, patched_at);
  EXPECT_LT(patched_at, master_again);
  std::map<std::string, std::string> versions;
  for (const auto& [variant, major] : {std::pair{"master", kMaster}, {"patched", kPatched}}) {
    for (const int clients : {1, 2}) {
      const auto run_dir =
          matrix_path / "runs" / (std::string(variant) + "-c" + std::to_string(clients) + "-r1");
      const auto report = nlohmann::json::parse(read_text(run_dir / "report.json"));
      EXPECT_EQ(report["status"], "completed") << run_dir;
      EXPECT_EQ(report["variant"], variant);
      EXPECT_EQ(report["environment"]["server_version_num"].get<int>() / 10000, major) << run_dir;
      EXPECT_GT(report["loadgen"]["tps"].get<double>(), 0) << run_dir;
      versions[variant] = report["environment"]["server_version"].get<std::string>();
      // The variant's own wait profile.
      const auto folded = engine::run_command(
          {pgwaitprof_binary(), "report", run_dir.string(), "--format", "folded"});
      EXPECT_EQ(folded.exit_code, 0) << folded.output;
      EXPECT_NE(folded.output.find("client backend"), std::string::npos) << folded.output;
    }
  }

  // The table says which build each variant was, and that the plan mixes majors.
  const std::string text = read_text(matrix_path / "table.txt");
  EXPECT_NE(text.find("mixed majors: 16, 17"), std::string::npos) << text;
  EXPECT_NE(text.find("master = " + versions["master"]), std::string::npos) << text;
  EXPECT_NE(text.find("patched = " + versions["patched"]), std::string::npos) << text;
  EXPECT_NE(read_text(matrix_path / "table.md").find("Mixed majors: 16, 17"), std::string::npos);
  EXPECT_NE(read_text(matrix_path / "matrix.html").find("Mixed majors: 16, 17"), std::string::npos);
  const auto table = nlohmann::json::parse(read_text(matrix_path / "table.json"));
  ASSERT_EQ(table["builds"].size(), 2u) << table.dump();
  EXPECT_EQ(table["builds"][0]["variant"], "master");
  EXPECT_EQ(table["builds"][0]["major"], kMaster);
  EXPECT_EQ(table["builds"][1]["server_version"], versions["patched"]);
  EXPECT_EQ(table["mixed_majors"], nlohmann::json::array({kMaster, kPatched}));
  // Per-variant wait profiles in the table: each variant's wait classes at every client count.
  for (const auto& cell : table["cells"]) {
    EXPECT_GT(cell["profile_runs"].get<int>(), 0) << cell.dump();
    EXPECT_FALSE(cell["classes"].empty()) << cell.dump();
  }

  // A compare of the two builds' runs.
  const auto runs = matrix_path / "runs";
  const auto compare = pgwaitprof_stdout(
      {"compare", (runs / "master-c1-r1").string() + "," + (runs / "master-c2-r1").string(),
       (runs / "patched-c1-r1").string() + "," + (runs / "patched-c2-r1").string(), "--format",
       "json"});
  ASSERT_EQ(compare.exit_code, 0) << compare.output;
  const auto comparison = nlohmann::json::parse(compare.output);
  EXPECT_NE(comparison.dump().find("patched"), std::string::npos) << compare.output;
}

// Whether a process names `dir` on its command line (a postmaster of that cluster).
bool process_names(const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string cmdline = read_text(entry.path() / "cmdline");
    if (cmdline.find(dir) != std::string::npos) return true;
  }
  return false;
}

// SIGINT: pgwaitprof stops both clusters itself; SIGKILL: its watchdog does
// (engine/supervisor.h).
TEST_F(BuildsMatrixTest, InterruptedOrKilledMatrixLeavesNoBuildsCluster) {
  for (const int signal_number : {SIGINT, SIGKILL}) {
    SCOPED_TRACE(signal_number == SIGINT ? "SIGINT" : "SIGKILL");
    const auto dir = temp_dir("builds-matrix-signal-" + std::to_string(signal_number));
    const auto plan = write_plan(dir, 20);
    ChildProcess matrix(
        {pgwaitprof_binary(), "matrix", plan.string(), "--data-dir", (dir / "data").string()},
        dir / "matrix.log");
    // Both clusters exist once the first run started.
    const bool started = eventually(60s, [&] {
      return matrix.log().find("matrix: run 1/") != std::string::npos || !matrix.running();
    });
    ASSERT_TRUE(started && matrix.running()) << matrix.log();
    const auto clusters = scratch_dirs(matrix.log());
    ASSERT_EQ(clusters.size(), 2u) << matrix.log();
    for (const auto& cluster : clusters) {
      EXPECT_TRUE(std::filesystem::exists(cluster)) << cluster;
      EXPECT_TRUE(process_names(cluster)) << cluster;
    }
    matrix.signal(signal_number);
    const auto code = matrix.wait(60s);
    if (signal_number == SIGINT) {
      EXPECT_EQ(code, 1) << matrix.log();
      const auto status =
          nlohmann::json::parse(read_text(matrix_dir(dir / "data") / "status.json"));
      EXPECT_EQ(status["status"], "interrupted") << status.dump();
    }
    for (const auto& cluster : clusters) {
      EXPECT_TRUE(eventually(30s, [&] {
        return !std::filesystem::exists(cluster) && !process_names(cluster);
      })) << cluster;
    }
  }
}

}  // namespace
}  // namespace pgwaitprof::testing
