// `pgwaitprof matrix` and `compare` on the real scratch cluster of deploy/test.sh, and run
// requests through a daemon's control socket.
#include <fmt/format.h>

#include <asio/local/stream_protocol.hpp>
#include <asio/read_until.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "model/adaptive_sweep.h"
#include "model/statistics.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

using namespace std::chrono_literals;

std::filesystem::path only_subdirectory(const std::filesystem::path& parent) {
  std::filesystem::path found;
  for (const auto& entry : std::filesystem::directory_iterator(parent)) found = entry.path();
  return found;
}

std::string plan_yaml() {
  return "name: it\ntarget: \"" + test_conninfo() +
         "\"\nscale: 2\nclients: [1, 2]\nduration: 2\nrepeats: 2\nhz: 100\n"
         "pgbench_args: [-R, '" +
         kModestRate +
         "']\n"
         "variants:\n  - name: sync-on\n    settings: {synchronous_commit: \"on\"}\n"
         "  - name: sync-off\n    settings: {synchronous_commit: \"off\"}\n";
}

// The wait profile of every cell of a real sweep: shares of the wait classes that add up to the
// cell's non-idle samples, AAS that add up to its total, errors from the two repeats, and the
// text table that shows them per variant.
void expect_composition(const std::filesystem::path& matrix, const nlohmann::json& table) {
  for (const auto& cell : table["cells"]) {
    EXPECT_EQ(cell["profile_runs"], 2) << cell.dump();
    EXPECT_EQ(cell["share_error"], "repeats") << cell.dump();
    ASSERT_FALSE(cell["classes"].empty()) << cell.dump();
    double share = 0, aas = 0;
    for (const auto& wait_class : cell["classes"]) {
      share += wait_class["share"].get<double>();
      aas += wait_class["aas"].get<double>();
      EXPECT_TRUE(wait_class["share_error"].is_number()) << wait_class.dump();
    }
    EXPECT_NEAR(share, 1.0, 1e-6) << cell.dump();
    EXPECT_NEAR(aas, cell["aas_total"].get<double>(), 1e-6) << cell.dump();
    EXPECT_GT(cell["p99_median_ms"].get<double>(), 0) << cell.dump();
  }
  const auto text = read_text(matrix / "table.txt");
  const auto profile = text.find("wait profile by clients");
  ASSERT_NE(profile, std::string::npos) << text;
  EXPECT_NE(text.find("\nsync-on\n", profile), std::string::npos) << text;
  EXPECT_NE(text.find("\nsync-off\n", profile), std::string::npos) << text;
  EXPECT_NE(text.find("p99 latency, ms"), std::string::npos) << text;
  const auto csv = read_text(matrix / "table.csv");
  EXPECT_NE(csv.find(",share_client,share_client_se"), std::string::npos) << csv;
  EXPECT_NE(read_text(matrix / "table.md").find("### Wait profile: sync-on"), std::string::npos);
}

class MatrixTest : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

TEST_F(MatrixTest, TwoVariantsTwoClientCountsTwoRepeatsGiveACompleteTable) {
  const auto dir = temp_dir("matrix-complete");
  write_text(dir / "plan.yaml", plan_yaml());
  auto result = engine::run_command({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(),
                                     "--data-dir", (dir / "data").string()});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("matrix: run 8/8"), std::string::npos);
  EXPECT_NE(result.output.find("8 of 8 runs completed"), std::string::npos) << result.output;
  // Interleaved: the first two runs are the two variants at the same clients and repeat.
  const auto first = result.output.find("run 1/8 variant=sync-on clients=1 repeat=1");
  const auto second = result.output.find("run 2/8 variant=sync-off clients=1 repeat=1");
  EXPECT_TRUE(first != std::string::npos && second != std::string::npos && first < second)
      << result.output;

  const auto matrix = only_subdirectory(dir / "data" / "matrix");
  for (const char* file :
       {"table.txt", "table.md", "table.csv", "table.json", "matrix.html", "plan.yaml"}) {
    EXPECT_TRUE(std::filesystem::exists(matrix / file)) << file;
  }
  const auto table = nlohmann::json::parse(read_text(matrix / "table.json"));
  ASSERT_EQ(table["cells"].size(), 4u) << table.dump();
  for (const auto& cell : table["cells"]) {
    EXPECT_EQ(cell["tps"].size(), 2u) << cell.dump();
    EXPECT_GT(cell["tps_median"].get<double>(), 0);
    EXPECT_FALSE(cell["dominant_wait"].get<std::string>().empty());
  }
  // The settings were reset afterwards.
  EXPECT_EQ(psql("SELECT count(*) FROM pg_file_settings WHERE sourcefile LIKE '%auto.conf'").output,
            "0\n");
  expect_composition(matrix, table);

  // compare: one variant's runs against the other's.
  std::string sync_on, sync_off;
  for (const auto& entry : std::filesystem::directory_iterator(matrix / "runs")) {
    auto& side = entry.path().filename().string().starts_with("sync_on") ? sync_on : sync_off;
    side += (side.empty() ? "" : ",") + entry.path().string();
  }
  auto compared = pgwaitprof_stdout({"compare", sync_on, sync_off, "--format", "json"});
  ASSERT_EQ(compared.exit_code, 0) << compared.output;
  const auto comparison = nlohmann::json::parse(compared.output);
  EXPECT_EQ(comparison["cells"].size(), 2u) << compared.output;
  // Each cell says how every wait class moved, and p99 is tested like tps (2 repeats a side).
  for (const auto& cell : comparison["cells"]) {
    EXPECT_FALSE(cell["classes"].empty()) << cell.dump();
    ASSERT_TRUE(cell.contains("p99_ms")) << cell.dump();
    EXPECT_EQ(cell["p99_ms"]["a"].size(), 2u) << cell.dump();
  }
  auto text = engine::run_command({pgwaitprof_binary(), "compare", sync_on, sync_off});
  EXPECT_NE(text.output.find("p99 latency, ms"), std::string::npos) << text.output;
}

// `clients: auto` on the real cluster: the sweep doubles the clients until tps stops rising or
// the maximum is reached and adds counts around there; the counts it ran are exactly those the
// sweep rule asks for given the tps it measured, and the scalability section is in every
// format. compare of the matrix with itself runs the scalability comparison on real fits and
// must find no difference.
TEST_F(MatrixTest, ClientsAutoFindsWhereThroughputStopsRisingAndFitsTheSweep) {
  const auto dir = temp_dir("matrix-auto");
  write_text(dir / "plan.yaml",
             "name: auto\ntarget: \"" + test_conninfo() +
                 "\"\nscale: 2\nclients: auto\nmax_clients: 8\nduration: 1\nrepeats: 2\nhz: 50\n"
                 "workload: select-only\nvariants:\n  - name: sync-on\n"
                 "    settings: {synchronous_commit: \"on\"}\n  - name: tpcb\n"
                 "    workload: tpcb\n");
  auto result = engine::run_command({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(),
                                     "--data-dir", (dir / "data").string()});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("matrix: clients auto: next 1\n"), std::string::npos)
      << result.output;
  const auto matrix = only_subdirectory(dir / "data" / "matrix");
  const auto table = nlohmann::json::parse(read_text(matrix / "table.json"));
  // The tps the sweep measured, per variant: asked again, the rule wants nothing more.
  std::map<std::string, std::map<int, double>> measured;
  for (const auto& cell : table["cells"]) {
    EXPECT_EQ(cell["tps"].size(), 2u) << cell.dump();
    measured[cell["variant"].get<std::string>()][cell["clients"].get<int>()] =
        cell["tps_median"].get<double>();
  }
  ASSERT_EQ(measured.size(), 2u) << table.dump();
  std::vector<std::map<int, double>> by_variant;
  for (const auto& [variant, counts] : measured) by_variant.push_back(counts);
  EXPECT_EQ(model::next_client_counts_of_variants(by_variant, {.max_clients = 8}),
            std::vector<int>{})
      << table.dump();
  const auto clients = table["clients"].get<std::vector<int>>();
  EXPECT_EQ(clients.front(), 1);
  EXPECT_LE(clients.back(), 8);
  // After 1 and 2 clients the sweep goes on exactly when the rule asks for more on those two: a
  // machine busy with other work (CI's other lanes) can make 2 clients no faster than 1, and the
  // sweep then rightly stops there.
  ASSERT_GE(clients.size(), 2u) << table.dump();
  ASSERT_EQ(clients[1], 2) << table.dump();
  std::vector<std::map<int, double>> first_two;
  for (const auto& counts : by_variant) first_two.push_back({{1, counts.at(1)}, {2, counts.at(2)}});
  const bool more_after_two =
      !model::next_client_counts_of_variants(first_two, {.max_clients = 8}).empty();
  EXPECT_EQ(clients.size() >= 3u, more_after_two) << table.dump();
  const auto done = fmt::format("{} of {} runs completed", clients.size() * 4, clients.size() * 4);
  EXPECT_NE(result.output.find(done), std::string::npos) << result.output;

  // The scalability section in every format (a fit, or why there is none).
  const auto scalability = table["scalability"];
  ASSERT_EQ(scalability.size(), 2u) << table.dump();
  for (const auto& variant : scalability) {
    EXPECT_EQ(variant["fitted"].get<bool>(), clients.size() >= 4) << variant.dump();
  }
  EXPECT_NE(read_text(matrix / "table.txt").find("\nscalability (Universal Scalability Law"),
            std::string::npos);
  EXPECT_NE(read_text(matrix / "table.md").find("### Scalability"), std::string::npos);
  EXPECT_NE(read_text(matrix / "matrix.html").find("<h2 id=\"scalability\">"), std::string::npos);

  auto compared =
      pgwaitprof_stdout({"compare", matrix.string(), matrix.string(), "--format", "json"});
  ASSERT_EQ(compared.exit_code, 0) << compared.output;
  const auto comparison = nlohmann::json::parse(compared.output);
  if (clients.size() >= 4) {
    ASSERT_EQ(comparison["scalability"].size(), 2u) << compared.output;
    for (const auto& shift : comparison["scalability"]) {
      EXPECT_NE(shift["sigma_differ"], true) << shift.dump();
      EXPECT_NE(shift["kappa_differ"], true) << shift.dump();
    }
  }
}

TEST_F(MatrixTest, ResumeAfterInterruptionCompletesOnlyTheMissingRuns) {
  const auto dir = temp_dir("matrix-resume");
  write_text(dir / "plan.yaml", plan_yaml());
  ChildProcess matrix({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(), "--data-dir",
                       (dir / "data").string()},
                      dir / "first.log");
  ASSERT_TRUE(eventually(60s, [&] {
    return matrix.log().find("matrix: run 4/8") != std::string::npos;
  })) << matrix.log();
  matrix.signal(SIGTERM);
  const auto code = matrix.wait(30s);
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  EXPECT_NE(matrix.log().find("resume with: pgwaitprof matrix --resume"), std::string::npos)
      << matrix.log();

  const auto matrix_dir = only_subdirectory(dir / "data" / "matrix");
  std::map<std::string, std::filesystem::file_time_type> finished;
  for (const auto& entry : std::filesystem::directory_iterator(matrix_dir / "runs")) {
    const auto report = nlohmann::json::parse(read_text(entry.path() / "report.json"));
    if (report["status"] == "completed")
      finished[entry.path().filename()] =
          std::filesystem::last_write_time(entry.path() / "report.json");
  }
  ASSERT_GE(finished.size(), 3u);
  ASSERT_LT(finished.size(), 8u);

  auto resumed =
      engine::run_command({pgwaitprof_binary(), "matrix", "--resume", matrix_dir.string()});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(
      resumed.output.find(fmt::format("8 of 8 runs completed, {} from before", finished.size())),
      std::string::npos)
      << resumed.output;
  // The runs finished before were not redone.
  for (const auto& [name, written] : finished) {
    EXPECT_EQ(std::filesystem::last_write_time(matrix_dir / "runs" / name / "report.json"), written)
        << name;
    EXPECT_EQ(resumed.output.find("run " + name), std::string::npos);
  }
  EXPECT_EQ(nlohmann::json::parse(read_text(matrix_dir / "table.json"))["cells"].size(), 4u);
}

// A matrix of sysbench runs (issue 26): two variants by their sysbench test, a clients list that
// becomes --threads, prepare and cleanup around every run; the table, and compare of two runs.
TEST_F(MatrixTest, SysbenchVariantsAndClientsGiveATableAndACompare) {
  const auto dir = temp_dir("matrix-sysbench");
  write_text(dir / "plan.yaml",
             "name: sb\ntarget: \"" + test_conninfo() +
                 "\"\nloadgen: sysbench\nargs: [\"--tables=1\", \"--table-size=2000\"]\n"
                 "setup: prepare\nteardown: cleanup\nclients: [1, 2]\nduration: 3\n"
                 "variants:\n  - name: read-only\n    args: [oltp_read_only]\n"
                 "  - name: read-write\n    args: [oltp_read_write]\n");
  auto result = engine::run_command({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(),
                                     "--data-dir", (dir / "data").string()});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("4 of 4 runs completed"), std::string::npos) << result.output;
  const auto matrix = only_subdirectory(dir / "data" / "matrix");
  const auto table = nlohmann::json::parse(read_text(matrix / "table.json"));
  ASSERT_EQ(table["cells"].size(), 4u) << table.dump();
  for (const auto& cell : table["cells"]) {
    EXPECT_GT(cell["tps_median"].get<double>(), 0) << cell.dump();
    EXPECT_FALSE(cell["dominant_wait"].get<std::string>().empty()) << cell.dump();
  }
  std::string read_only, read_write;
  for (const auto& entry : std::filesystem::directory_iterator(matrix / "runs")) {
    const auto report = nlohmann::json::parse(read_text(entry.path() / "report.json"));
    EXPECT_EQ(report["throughput_source"], "sysbench");
    const int clients = report["clients"];
    std::string argv;
    for (const auto& word : report["loadgen_argv"]) argv += word.get<std::string>() + " ";
    EXPECT_NE(argv.find("--threads=" + std::to_string(clients) + " --time=3"), std::string::npos)
        << argv;
    if (clients == 2) {
      (report["variant"] == "read-only" ? read_only : read_write) = entry.path().string();
    }
  }
  auto compared = pgwaitprof_stdout({"compare", read_only, read_write, "--format", "json"});
  ASSERT_EQ(compared.exit_code, 0) << compared.output;
  const auto comparison = nlohmann::json::parse(compared.output);
  EXPECT_EQ(comparison["cells"].size(), 1u) << compared.output;
  EXPECT_EQ(psql("SELECT to_regclass('sbtest1') IS NULL").output, "t\n");
}

class DaemonRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cluster();
    dir_ = temp_dir("daemon-run");
    port_ = engine::free_port();
    write_text(dir_ / "pgwaitprof.yaml",
               "listen: 127.0.0.1:" + std::to_string(port_) + "\ndata_dir: " +
                   (dir_ / "data").string() + "\ntargets:\n  - name: local\n    dsn: \"" +
                   test_conninfo() + "\"\n    hz: 200\n    source: activity\n");
    daemon_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{pgwaitprof_binary(), "daemon", "-c",
                                 (dir_ / "pgwaitprof.yaml").string()},
        dir_ / "daemon.log");
    ASSERT_TRUE(eventually(10s, [&] {
      return metric(scrape(port_), "pgwaitprof_up{target=\"local\"}") == 1.0;
    })) << daemon_->log();
  }
  std::filesystem::path dir_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> daemon_;
};

std::set<std::string> file_names(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    names.insert(entry.path().filename());
  return names;
}

TEST_F(DaemonRunTest, RunThroughTheDaemonWritesTheSameReportAsAForegroundRun) {
  const std::vector<std::string> pgbench{"--", "-c", "2", "-R", kModestRate, "-T", "3"};
  std::vector<std::string> through{pgwaitprof_binary(), "run", test_conninfo(), "--data-dir",
                                   (dir_ / "data").string()};
  through.insert(through.end(), pgbench.begin(), pgbench.end());
  auto remote = engine::run_command(through);
  ASSERT_EQ(remote.exit_code, 0) << remote.output;
  EXPECT_NE(remote.output.find("by the daemon at"), std::string::npos) << remote.output;
  EXPECT_NE(daemon_->log().find("run requested target=local"), std::string::npos);

  std::vector<std::string> foreground{
      pgwaitprof_binary(), "run",  test_conninfo(), "--no-daemon", "--source",
      "activity",          "--hz", "200",           "--data-dir",  (dir_ / "foreground").string()};
  foreground.insert(foreground.end(), pgbench.begin(), pgbench.end());
  auto local = engine::run_command(foreground);
  ASSERT_EQ(local.exit_code, 0) << local.output;
  EXPECT_EQ(local.output.find("by the daemon"), std::string::npos);

  const auto remote_dir = only_subdirectory(dir_ / "data" / "runs");
  const auto local_dir = only_subdirectory(dir_ / "foreground" / "runs");
  EXPECT_EQ(file_names(remote_dir), file_names(local_dir));
  const auto remote_report = nlohmann::json::parse(read_text(remote_dir / "report.json"));
  const auto local_report = nlohmann::json::parse(read_text(local_dir / "report.json"));
  EXPECT_EQ(remote_report["status"], "completed");
  for (const auto& [key, value] : local_report.items())
    EXPECT_TRUE(remote_report.contains(key)) << key;
  EXPECT_EQ(remote_report["sampler"]["source"], local_report["sampler"]["source"]);
  // The same pgbench command line but for the per-transaction log, which goes in each run's
  // own directory.
  auto without_log_prefix = [](nlohmann::json argv) {
    for (auto& arg : argv) {
      if (arg.get<std::string>().starts_with("--log-prefix=")) arg = "--log-prefix=RUN_DIR";
    }
    return argv;
  };
  EXPECT_EQ(without_log_prefix(remote_report["loadgen_argv"]),
            without_log_prefix(local_report["loadgen_argv"]));
}

// --keep-transaction-log reaches the daemon: its run keeps pgbench's per-transaction log in the
// run directory (a run without the flag removes it, as the test above shows by comparison).
TEST_F(DaemonRunTest, KeepTransactionLogIsHonouredThroughTheDaemon) {
  auto kept = engine::run_command({pgwaitprof_binary(), "run", test_conninfo(), "--data-dir",
                                   (dir_ / "data").string(), "--keep-transaction-log", "--", "-c",
                                   "2", "-j", "2", "-R", kModestRate, "-T", "2"});
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_NE(kept.output.find("by the daemon at"), std::string::npos) << kept.output;
  size_t logs = 0;
  for (const auto& name : file_names(only_subdirectory(dir_ / "data" / "runs"))) {
    if (name.starts_with("pgbench_log.")) ++logs;
  }
  EXPECT_EQ(logs, 2u) << "one log per pgbench thread";
}

TEST_F(DaemonRunTest, RequestForAnExecutableNotConfiguredIsRefused) {
  asio::io_context io;
  asio::local::stream_protocol::socket socket(io);
  socket.connect(
      asio::local::stream_protocol::endpoint((dir_ / "data" / "pgwaitprof.sock").string()));
  const std::string request = nlohmann::json{{"type", "run"},
                                             {"target", "local"},
                                             {"loadgen", "/bin/sh"},
                                             {"pgbench_args", {"-c", "touch /tmp/pwned"}}}
                                  .dump() +
                              "\n";
  asio::write(socket, asio::buffer(request));
  std::string reply;
  std::error_code error;
  asio::read_until(socket, asio::dynamic_buffer(reply), '\n', error);
  const auto event = nlohmann::json::parse(reply);
  EXPECT_EQ(event["event"], "error");
  EXPECT_EQ(event["code"], "refused");
  EXPECT_NE(event["message"].get<std::string>().find("load generator \"/bin/sh\" is not allowed"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "data" / "runs"));
  EXPECT_EQ(std::filesystem::status(dir_ / "data" / "pgwaitprof.sock").permissions() &
                std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

// `record` through the daemon that samples the target (issue 26): the window is the daemon's
// run, its tps the server's; a command the daemon's allow-list does not name is refused.
TEST_F(DaemonRunTest, RecordThroughTheDaemonAndACommandItDoesNotAllow) {
  ChildProcess pgbench(
      {base::find_executable("pgbench"), "-c", "2", "-T", "5", "-n", test_conninfo()},
      dir_ / "pgbench.out");
  auto record =
      engine::run_command({pgwaitprof_binary(), "record", test_conninfo(), "--duration", "3",
                           "--label", "app", "--data-dir", (dir_ / "data").string()});
  ASSERT_EQ(record.exit_code, 0) << record.output;
  EXPECT_NE(record.output.find("by the daemon at"), std::string::npos) << record.output;
  const auto report =
      nlohmann::json::parse(read_text(only_subdirectory(dir_ / "data" / "runs") / "report.json"));
  EXPECT_EQ(report["status"], "completed");
  EXPECT_EQ(report["workload"], "record");
  EXPECT_EQ(report["label"], "app");
  EXPECT_EQ(report["throughput_source"], "server");
  EXPECT_GT(report["loadgen"]["tps"].get<double>(), 0) << report["timeline"].dump();
  EXPECT_NE(daemon_->log().find("run requested target=local workload=record"), std::string::npos);
  EXPECT_EQ(pgbench.wait(30s), 0) << pgbench.log();

  auto refused =
      engine::run_command({pgwaitprof_binary(), "run", test_conninfo(), "--data-dir",
                           (dir_ / "data").string(), "--loadgen", "command", "--", "/bin/true"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find("load generator \"/bin/true\" is not allowed (allowed: pgbench)"),
            std::string::npos)
      << refused.output;
}

// Each run's report states where a repeat should land once the data directory holds three
// earlier runs of its configuration, and `compare` of two single runs tests against that spread.
TEST_F(MatrixTest, TheFourthRepeatStatesItsRunToRunSpread) {
  const auto dir = temp_dir("matrix-run-to-run");
  write_text(dir / "plan.yaml", "name: rr\ntarget: \"" + test_conninfo() +
                                    "\"\nscale: 2\nclients: [1]\nduration: 2\nrepeats: 4\n"
                                    "hz: 100\npgbench_args: [-R, '" +
                                    kModestRate + "']\n");
  auto result = engine::run_command({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(),
                                     "--data-dir", (dir / "data").string()});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::map<int, std::filesystem::path> by_repeat;
  for (const auto& entry :
       std::filesystem::directory_iterator(only_subdirectory(dir / "data" / "matrix") / "runs")) {
    const auto report = nlohmann::json::parse(read_text(entry.path() / "report.json"));
    by_repeat[report["repeat"].get<int>()] = entry.path();
  }
  ASSERT_EQ(by_repeat.size(), 4u);
  for (int repeat = 1; repeat <= 3; ++repeat) {
    const auto report = nlohmann::json::parse(read_text(by_repeat[repeat] / "report.json"));
    ASSERT_TRUE(report.contains("run_to_run")) << report.dump();
    EXPECT_EQ(report["run_to_run"]["runs"], repeat - 1);
    EXPECT_TRUE(report["run_to_run"]["figures"].empty());
  }
  EXPECT_NE(read_text(by_repeat[2] / "report.txt")
                .find("run to run: not estimated\n  (1 earlier comparable run in this data "
                      "directory"),
            std::string::npos)
      << read_text(by_repeat[2] / "report.txt");
  const auto fourth = nlohmann::json::parse(read_text(by_repeat[4] / "report.json"));
  const auto& spread = fourth["run_to_run"];
  EXPECT_EQ(spread["runs"], 3);
  ASSERT_GE(spread["figures"].size(), 2u) << spread.dump();  // tps and at least one wait
  const auto& tps = spread["figures"][0];
  EXPECT_EQ(tps["name"], "tps");
  EXPECT_GT(tps["value"].get<double>(), 0);
  EXPECT_GT(tps["sd"].get<double>(), 0);
  EXPECT_NEAR(tps["half_width"].get<double>(),
              model::student_t_quantile(0.975, 2) * std::sqrt(2.0) * tps["sd"].get<double>(), 1e-6);
  const auto text = read_text(by_repeat[4] / "report.txt");
  EXPECT_NE(text.find("run to run: from 3 earlier comparable runs"), std::string::npos) << text;
  EXPECT_NE(read_text(by_repeat[4] / "report.html").find("Run to run: from 3 earlier"),
            std::string::npos);

  auto compared = pgwaitprof_stdout(
      {"compare", by_repeat[1].string(), by_repeat[4].string(), "--format", "json"});
  ASSERT_EQ(compared.exit_code, 0) << compared.output;
  const auto comparison = nlohmann::json::parse(compared.output);
  const auto& cell = comparison["cells"][0]["tps"];
  EXPECT_EQ(cell["run_to_run"], true) << cell.dump();
  EXPECT_EQ(cell["detail"], "run-to-run noise from " + comparison["label_b"].get<std::string>() +
                                "'s 3 earlier comparable runs")
      << cell.dump();
  EXPECT_EQ(cell["side_b"]["run_to_run"], true) << cell.dump();
}

// A variant whose runs fail before pgbench starts (its workload's set-up cannot create its
// function on a read-only server) keeps the plan's client counts: no column of 0 clients in
// the table, its cells are failed, and its reports say how many clients they were for.
TEST_F(MatrixTest, AVariantThatFailsBeforePgbenchStartsAddsNoColumn) {
  const auto dir = temp_dir("matrix-early-failure");
  write_text(dir / "plan.yaml",
             "name: early\ntarget: \"" + test_conninfo() +
                 "\"\nscale: 2\nclients: [1, 2]\nduration: 1\nrepeats: 1\nhz: 100\n"
                 "variants:\n  - name: fine\n  - name: read-only\n    workload: tpcb-func\n"
                 "    settings: {default_transaction_read_only: \"on\"}\n");
  auto result = engine::run_command({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(),
                                     "--data-dir", (dir / "data").string()});
  const auto matrix = only_subdirectory(dir / "data" / "matrix");
  const auto table = nlohmann::json::parse(read_text(matrix / "table.json"));
  EXPECT_EQ(table["clients"], nlohmann::json({1, 2})) << result.output;
  ASSERT_EQ(table["cells"].size(), 4u) << table.dump();
  for (const auto& cell : table["cells"]) {
    const bool failing = cell["variant"] == "read-only";
    EXPECT_EQ(cell["tps"].empty(), failing) << cell.dump();
  }
  const auto text = read_text(matrix / "table.txt");
  EXPECT_NE(text.find("\nclients  "), std::string::npos) << text;
  EXPECT_EQ(text.find(" 0 clients"), std::string::npos) << text;
  EXPECT_NE(text.find("read-only at 2 clients: 1 of 1 runs failed"), std::string::npos) << text;
  const auto failed =
      nlohmann::json::parse(read_text(matrix / "runs" / "read_only-c2-r1" / "report.json"));
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_NE(failed["error"].get<std::string>().find("could not set up workload"), std::string::npos)
      << failed["error"];
  EXPECT_EQ(failed["clients"], 2);
  EXPECT_EQ(psql("SELECT count(*) FROM pg_file_settings WHERE sourcefile LIKE '%auto.conf'").output,
            "0\n");
}

TEST_F(MatrixTest, DaemonRunsConfiguredRunsAndMatrixPlansAtStartUp) {
  const auto dir = temp_dir("daemon-startup");
  write_text(dir / "plan.yaml", "name: startup\nclients: [1]\nduration: 2\nrepeats: 1\n");
  const int port = engine::free_port();
  write_text(dir / "pgwaitprof.yaml",
             "listen: 127.0.0.1:" + std::to_string(port) +
                 "\ndata_dir: " + (dir / "data").string() +
                 "\ntargets:\n  - name: local\n    dsn: \"" + test_conninfo() +
                 "\"\n    source: activity\nruns:\n  - workload: select-only\n    label: boot\n"
                 "    pgbench_args: [\"-c\", \"1\", \"-T\", \"2\"]\nmatrix_plans: [plan.yaml]\n");
  ChildProcess daemon({pgwaitprof_binary(), "daemon", "-c", (dir / "pgwaitprof.yaml").string()},
                      dir / "daemon.log");
  ASSERT_TRUE(eventually(60s, [&] {
    return daemon.log().find("matrix done") != std::string::npos;
  })) << daemon.log();
  const auto run = only_subdirectory(dir / "data" / "runs");
  EXPECT_EQ(nlohmann::json::parse(read_text(run / "report.json"))["workload"], "select-only");
  const auto matrix = only_subdirectory(dir / "data" / "matrix");
  const auto table = nlohmann::json::parse(read_text(matrix / "table.json"));
  ASSERT_EQ(table["cells"].size(), 1u);
  EXPECT_GT(table["cells"][0]["tps_median"].get<double>(), 0);
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(5s), 0);
}

}  // namespace
}  // namespace pgwaitprof::testing
