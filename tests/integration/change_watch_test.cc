// The daemon as the regression watcher (issue 49 item 4) on the real test cluster: a history of
// runs of one configuration, ten fast (synchronous_commit off) and one slow (on, with
// commit_delay, which only a synchronous commit pays), then the daemon's two configured runs of
// the same configuration, slow too. After its runs the daemon analyses the group: the change
// point in tps at the first slow run (which the daemon's first run brings: the end test names a
// level of two runs, one is not a level) is logged once, with its step and the run, and exported as
// pgwaitprof_change_point{group, history="data_dir", metric}; a results database it cannot read
// is a warning (without the connection string's password). The same history in a real results
// database, pushed from another data directory, and a daemon whose own directory holds none of
// it: the change point its runs brought to the database's history is logged and exported with
// history="results".
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
void copy_run_dir(const fs::path& data, const fs::path& real, int index) {
  auto report = json::parse(read_text(real / "report.json"));
  const auto id = fmt::format("20251101-1000{:02d}-{:04x}-watch", index, index);
  report["id"] = id;
  report["started_at"] = fmt::format("2025-11-01T10:00:{:02d}.000Z", index);
  fs::create_directories(data / "runs" / id);
  write_text(data / "runs" / id / "report.json", report.dump());
}

// The settings are reset however the test ends: the cluster is shared with other tests.
struct ResetSettings {
  ~ResetSettings() {
    psql("ALTER SYSTEM RESET synchronous_commit");
    psql("ALTER SYSTEM RESET commit_delay");
    psql("ALTER SYSTEM RESET commit_siblings");
    psql("SELECT pg_reload_conf()");
  }
};

// Ten fast runs (synchronous_commit off), then one slow (on, with commit_delay), all older than
// the daemon's, in `data`; the server left slow. Returns the slow run's id. (With two slow runs
// the history would show the change point before the daemon's runs: nothing for them to bring.)
std::string seed_history(const fs::path& data) {
  EXPECT_EQ(psql("ALTER SYSTEM SET commit_delay = 20000").exit_code, 0);
  EXPECT_EQ(psql("ALTER SYSTEM SET commit_siblings = 0").exit_code, 0);
  EXPECT_EQ(psql("ALTER SYSTEM SET synchronous_commit = off").exit_code, 0);
  EXPECT_EQ(psql("SELECT pg_reload_conf()").exit_code, 0);
  const auto fast = real_run(data);
  EXPECT_EQ(psql("ALTER SYSTEM SET synchronous_commit = on").exit_code, 0);
  EXPECT_EQ(psql("SELECT pg_reload_conf()").exit_code, 0);
  const auto slow = real_run(data);
  for (int index = 0; index < 9; ++index) copy_run_dir(data, fast, index);
  fs::rename(fast, data / "runs" / "20251101-100009-0009-watch");
  auto fast_report =
      json::parse(read_text(data / "runs" / "20251101-100009-0009-watch" / "report.json"));
  fast_report["id"] = "20251101-100009-0009-watch";
  fast_report["started_at"] = "2025-11-01T10:00:09.000Z";
  write_text(data / "runs" / "20251101-100009-0009-watch" / "report.json", fast_report.dump());
  copy_run_dir(data, slow, 10);
  fs::remove_all(slow);
  return "20251101-100010-000a-watch";
}

// The daemon's configuration: two configured runs of the history's configuration.
void write_config(const fs::path& dir, const fs::path& data, int port,
                  const std::string& results_dsn) {
  write_text(dir / "pgwaitprof.yaml",
             fmt::format("listen: 127.0.0.1:{}\ndata_dir: {}\ntargets:\n  - name: local\n    dsn: "
                         "\"{}\"\n    hz: 50\nruns:\n  - target: local\n    label: watch\n"
                         "    pgbench_args: {}\n  - target: local\n    label: watch\n"
                         "    pgbench_args: {}\n{}",
                         port, data.string(), test_conninfo(), kArgs, kArgs,
                         results_dsn.empty() ? "" : "results:\n  dsn: \"" + results_dsn + "\"\n"));
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// The daemon's log once its two runs are done and a change point of `history` is exported:
// the line of that change point in tps, checked to name `first_slow`, a step of more than
// -40 %, and to be there once.
std::string await_change_point(ChildProcess& daemon, int port, const std::string& history,
                               const std::string& first_slow) {
  EXPECT_TRUE(eventually(90s, [&] { return count_of(daemon.log(), "configured run done") == 2; }))
      << daemon.log();
  const std::regex line(
      "change point group=\"watch\" metric=\"tps\" from_run=(\\S+) "
      "step=(-\\d+\\.\\d)%.* history=" +
      history);
  const std::string series = "group=\"watch\",history=\"" + history + "\",metric=\"tps\"";
  EXPECT_TRUE(eventually(30s, [&] {
    return std::regex_search(daemon.log(), line) && scrape(port).find(series) != std::string::npos;
  })) << daemon.log();
  const auto log = daemon.log();
  std::smatch match;
  if (!std::regex_search(log, match, line)) return log;
  EXPECT_EQ(match[1], first_slow) << log;
  EXPECT_LT(std::stod(match[2]), -40) << log;
  EXPECT_EQ(
      std::distance(std::sregex_iterator(log.begin(), log.end(), line), std::sregex_iterator()), 1)
      << "reported more than once: " << log;
  EXPECT_NE(scrape(port).find("pgwaitprof_change_point{" + series + "}"), std::string::npos);
  return log;
}

TEST(ChangeWatch, TheDaemonReportsTheChangePointItsRunsBrought) {
  require_cluster();
  const auto dir = temp_dir("change-watch");
  const auto data = dir / "data";
  ResetSettings reset_settings;
  const auto first_slow = seed_history(data);
  const int port = engine::free_port();
  // A results database that cannot be read: a warning, and the data directory's analysis stands
  // (the connection string's password never shows).
  write_config(dir, data, port,
               "host=" + env("PGHOST") + " port=" + env("PGPORT") + " user=" + env("PGUSER") +
                   " dbname=pgwaitprof_no_such_database password=hunter2");
  ChildProcess daemon({pgwaitprof_binary(), "daemon", "-c", (dir / "pgwaitprof.yaml").string()},
                      dir / "daemon.log");
  const auto log = await_change_point(daemon, port, "data_dir", first_slow);
  EXPECT_NE(log.find("could not read the results database's history error=\"could not connect "
                     "to the results database"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("hunter2"), std::string::npos) << log;
  EXPECT_EQ(log.find("history=results"), std::string::npos) << log;
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(30s), 0) << daemon.log();
}

// A fleet's history is analysed where it is kept: the history is in the results database
// (pushed from another data directory), the daemon's own directory holds only its two runs.
TEST(ChangeWatch, TheDaemonReportsTheChangePointItsRunsBroughtToTheResultsDatabase) {
  require_cluster();
  const auto dir = temp_dir("change-watch-results");
  const auto fleet = dir / "fleet";
  const auto data = dir / "data";
  ResetSettings reset_settings;
  const auto first_slow = seed_history(fleet);
  const std::string database = "pgwaitprof_change_watch";
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
  ASSERT_EQ(psql("CREATE DATABASE " + database).exit_code, 0);
  const auto dsn = "host=" + env("PGHOST") + " port=" + env("PGPORT") + " user=" + env("PGUSER") +
                   " dbname=" + database;
  auto migrated =
      engine::run_command({pgwaitprof_binary(), "results", "migrate", "--results-dsn", dsn});
  ASSERT_EQ(migrated.exit_code, 0) << migrated.output;
  auto pushed = engine::run_command({pgwaitprof_binary(), "results", "push", "--backfill",
                                     "--results-dsn", dsn, "--data-dir", fleet.string()});
  ASSERT_EQ(pushed.exit_code, 0) << pushed.output;
  const int port = engine::free_port();
  write_config(dir, data, port, dsn);
  ChildProcess daemon({pgwaitprof_binary(), "daemon", "-c", (dir / "pgwaitprof.yaml").string()},
                      dir / "daemon.log");
  const auto log = await_change_point(daemon, port, "results", first_slow);
  // The data directory's history (its two runs) has too few runs for any.
  EXPECT_EQ(log.find("history=data_dir"), std::string::npos) << log;
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(30s), 0) << daemon.log();
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

}  // namespace
}  // namespace pgwaitprof::testing
