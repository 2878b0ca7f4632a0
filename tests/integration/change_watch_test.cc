// The daemon as the regression watcher (issue 49 item 4) on the real test cluster: a history of
// runs of one configuration, ten fast (synchronous_commit off) and two slow (on, with
// commit_delay, which only a synchronous commit pays), then the daemon's two configured runs of
// the same configuration, slow too. After its runs the daemon analyses the group: the change
// point in tps at the first slow run is logged once, with its step and the run, and exported as
// pgwaitprof_change_point{group, metric}.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kArgs = R"(["-c", "1", "-j", "1", "-T", "2"])";

fs::path real_run(const fs::path& data) {
  auto result =
      pgwaitprof_run(data, {test_conninfo(), "--no-daemon", "--hz", "50", "--label", "watch"},
                     {"-c", "1", "-j", "1", "-T", "2"});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  fs::path newest;
  for (const auto& entry : fs::directory_iterator(data / "runs")) {
    if (newest.empty() || entry.path().filename() > newest.filename()) newest = entry.path();
  }
  return newest;
}

// Copies of a real run's report as earlier runs of the same configuration.
void copy_run(const fs::path& data, const fs::path& real, int index) {
  auto report = json::parse(read_text(real / "report.json"));
  const auto id = fmt::format("20251101-1000{:02d}-{:04x}-watch", index, index);
  report["id"] = id;
  report["started_at"] = fmt::format("2025-11-01T10:00:{:02d}.000Z", index);
  fs::create_directories(data / "runs" / id);
  write_text(data / "runs" / id / "report.json", report.dump());
}

TEST(ChangeWatch, TheDaemonReportsTheChangePointItsRunsBrought) {
  require_cluster();
  const auto dir = temp_dir("change-watch");
  const auto data = dir / "data";
  // The settings are reset however the test ends: the cluster is shared with other tests.
  struct ResetSettings {
    ~ResetSettings() {
      psql("ALTER SYSTEM RESET synchronous_commit");
      psql("ALTER SYSTEM RESET commit_delay");
      psql("ALTER SYSTEM RESET commit_siblings");
      psql("SELECT pg_reload_conf()");
    }
  } reset_settings;
  ASSERT_EQ(psql("ALTER SYSTEM SET commit_delay = 20000").exit_code, 0);
  ASSERT_EQ(psql("ALTER SYSTEM SET commit_siblings = 0").exit_code, 0);
  ASSERT_EQ(psql("ALTER SYSTEM SET synchronous_commit = off").exit_code, 0);
  ASSERT_EQ(psql("SELECT pg_reload_conf()").exit_code, 0);
  const auto fast = real_run(data);
  ASSERT_EQ(psql("ALTER SYSTEM SET synchronous_commit = on").exit_code, 0);
  ASSERT_EQ(psql("SELECT pg_reload_conf()").exit_code, 0);
  const auto slow = real_run(data);
  // Ten fast runs, then two slow ones, all older than the daemon's.
  for (int index = 0; index < 9; ++index) copy_run(data, fast, index);
  fs::rename(fast, data / "runs" / "20251101-100009-0009-watch");
  auto fast_report =
      json::parse(read_text(data / "runs" / "20251101-100009-0009-watch" / "report.json"));
  fast_report["id"] = "20251101-100009-0009-watch";
  fast_report["started_at"] = "2025-11-01T10:00:09.000Z";
  write_text(data / "runs" / "20251101-100009-0009-watch" / "report.json", fast_report.dump());
  copy_run(data, slow, 10);
  const std::string first_slow = "20251101-100010-000a-watch";

  const int port = engine::free_port();
  write_text(dir / "pgwaitprof.yaml",
             fmt::format("listen: 127.0.0.1:{}\ndata_dir: {}\ntargets:\n  - name: local\n    dsn: "
                         "\"{}\"\n    hz: 50\nruns:\n  - target: local\n    label: watch\n"
                         "    pgbench_args: {}\n  - target: local\n    label: watch\n"
                         "    pgbench_args: {}\n",
                         port, data.string(), test_conninfo(), kArgs, kArgs));
  ChildProcess daemon({pgwaitprof_binary(), "daemon", "-c", (dir / "pgwaitprof.yaml").string()},
                      dir / "daemon.log");
  const auto runs_done = [&] {
    const auto log = daemon.log();
    size_t count = 0;
    for (auto at = log.find("configured run done"); at != std::string::npos;
         at = log.find("configured run done", at + 1)) {
      ++count;
    }
    return count;
  };
  ASSERT_TRUE(eventually(90s, [&] { return runs_done() == 2; })) << daemon.log();
  const std::regex line(
      R"(change point group="watch" metric="tps" from_run=(\S+) step=(-\d+\.\d)%)");
  ASSERT_TRUE(eventually(30s, [&] {
    return std::regex_search(daemon.log(), line) &&
           scrape(port).find("metric=\"tps\"") != std::string::npos;
  })) << daemon.log();
  const auto log = daemon.log();
  std::smatch match;
  ASSERT_TRUE(std::regex_search(log, match, line));
  EXPECT_EQ(match[1], first_slow) << log;
  EXPECT_LT(std::stod(match[2]), -40) << log;
  EXPECT_EQ(
      std::distance(std::sregex_iterator(log.begin(), log.end(), line), std::sregex_iterator()), 1)
      << "reported more than once: " << log;
  const auto exposition = scrape(port);
  EXPECT_NE(exposition.find("pgwaitprof_change_point{group=\"watch\",metric=\"tps\"}"),
            std::string::npos)
      << exposition;
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(30s), 0) << daemon.log();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pgwaitprof::testing
