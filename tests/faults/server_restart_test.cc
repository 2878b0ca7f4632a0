// A server restarted in the middle of a run (issue 47 item 9): `pg_ctl restart -m fast` while
// `run --loadgen command` drives a loop of psql. The run's own connection (server throughput,
// background activity) comes back as the sampler's does, the report says when it was down, the
// headline says what time the server's count covers, and the missed ticks of the outage are
// not blamed on a snapshot query. On a cluster of the test's own: the restart ends every
// session of its server.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/faults/fault_harness.h"
#include "tests/integration/own_cluster.h"

namespace pgwaitprof::testing {
namespace {

using namespace std::chrono_literals;

class ServerRestartFaults : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

// 14 s of one-statement psql sessions, each a transaction of the server's, 50 ms apart (back to
// back they took a core from the other lanes of deploy/test.sh); a session that finds the server
// away waits a little and tries again.
constexpr const char* kLoopScript = R"sh(#!/bin/sh
end=$(( $(date +%s) + 14 ))
while [ "$(date +%s)" -lt "$end" ]; do
  psql -X -q -c "SELECT 1" >/dev/null 2>&1 || sleep 0.1
  sleep 0.05
done
echo "loop done"
)sh";

TEST_F(ServerRestartFaults, TheRunsConnectionComesBackAfterARestart) {
  const auto dir = temp_dir("server-restart");
  OwnCluster cluster(dir);
  write_text(dir / "loop.sh", kLoopScript);
  std::filesystem::permissions(dir / "loop.sh", std::filesystem::perms::owner_all);
  ChildProcess run(
      {pgwaitprof_binary(), "run", cluster.conninfo, "--hz", "50", "--loadgen", "command",
       "--data-dir", (dir / "data").string(), "--", (dir / "loop.sh").string()},
      dir / "run.log");
  // The run's time starts with the load generator (start_s 0), after the run's setup, which
  // took seconds under ASan beside CI's other lanes: a restart 4 s after the run's directory
  // appeared fell at start_s 0.1, 0.75 and 2.0 in CI. So 3 s after the load generator started.
  ASSERT_TRUE(eventually(60s, [&] {
    return run.log().find("started load generator") != std::string::npos;
  })) << run.log();
  std::this_thread::sleep_for(3s);
  // As the server's account, with the binaries the cluster was started with; its output to the
  // server's log (a pipe would be held open by the new server).
  std::string bin = read_text(cluster.dir / "bin-dir");
  bin.erase(bin.find_last_not_of('\n') + 1);
  const auto restarted =
      engine::run_command({bin + "/pg_ctl", "-D", cluster.data, "-l",
                           (cluster.dir / "server.log").string(), "-w", "-m", "fast", "restart"},
                          {engine::unprivileged_account(), {}});
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;
  const auto code = run.wait(90s);
  ASSERT_TRUE(code.has_value()) << run.log();
  EXPECT_EQ(*code, 0) << run.log();
  std::filesystem::path run_dir;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "data" / "runs"))
    run_dir = entry.path();
  const auto report = nlohmann::json::parse(read_text(run_dir / "report.json"));
  const std::string excerpt = report.dump().substr(0, 4000);

  // The run's own connection was lost and came back; the report says when.
  const nlohmann::json* lost = nullptr;
  for (const auto& outage : report["outages"]) {
    if (outage["connection"] == "run") lost = &outage;
  }
  ASSERT_NE(lost, nullptr) << report["outages"].dump(2) << run.log();
  const double back_s = (*lost)["start_s"].get<double>() + (*lost)["duration_s"].get<double>();
  EXPECT_GT((*lost)["start_s"].get<double>(), 2.0) << lost->dump();
  EXPECT_LT(back_s, 12.0) << "the run's connection came back too late (or never): " << lost->dump();
  EXPECT_NE(report["warnings"].dump().find("the run lost the target"), std::string::npos)
      << report["warnings"];
  // The server's tps is measured again after it: an interval well after the outage (and
  // before the last, which the loop's end may cut) has a figure.
  int measured_after = 0;
  const auto& timeline = report["timeline"];
  for (size_t index = 0; index + 1 < timeline.size(); ++index) {
    const auto& slice = timeline[index];
    if (slice["start_s"].get<double>() > back_s + 1.0 && slice["server_tps"].is_number()) {
      ++measured_after;
    }
  }
  EXPECT_GE(measured_after, 2) << excerpt;
  // The headline's figure says what time it covers: the run's connection was lost, so never
  // "whole run", however much of the run the readings around the outage covered (with ten
  // readings an interval, 15.5 s of a 16.1 s run).
  const auto text = read_text(run_dir / "report.txt");
  const double covered = report["loadgen"]["duration_s"].get<double>();
  const double duration = report["duration_s"].get<double>();
  EXPECT_NE(text.find(fmt::format("(the server, {:.1f} s of the {:.1f} s run)", covered, duration)),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("(the server, whole run)"), std::string::npos) << text;
  EXPECT_GT(covered, (*lost)["start_s"].get<double>() + 2.0)
      << "the server's count stopped at the outage: " << excerpt;
  // The outage's ticks are the outage's; no snapshot query is blamed for a source without one.
  const auto warnings = report["warnings"].dump();
  if (report["sampler"]["source"] == "memory") {
    EXPECT_EQ(warnings.find("snapshot query"), std::string::npos) << warnings;
  }
  EXPECT_EQ(warnings.find("the sampler missed"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace pgwaitprof::testing
