// The traced source on every major (issue 48, item 6): 13, 14, 16, 17 and 18 on the servers of
// deploy/fetch-servers.sh and 15 on Debian's, each on the cluster deploy/version-matrix.sh
// started for it (PGWAITPROF_TEST_PG<major>). Per major: a run with --source trace whose report
// has exact time, waits and durations per wait event (and top SQL by query id from 14 on); and
// the witnesses of item 4 with the source attached in this process: ten pg_sleep(0.2) as ten
// Timeout | PgSleep waits of 200 ms, the client backends' on-CPU and run-queue time against the
// kernel's schedstat, and the query id the programs read with each wait (14+) as
// pg_stat_statements has it. 13 has no my_wait_event_info: its waits are read through MyProc and
// PGPROC's wait_event_info.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collectors/memory/pg_layout.h"
#include "tests/integration/backend_states.h"
#include "tests/integration/harness.h"
#include "tests/integration/trace_witness.h"
#include "tests/versions/major_fixture.h"

namespace pgwaitprof::testing {
namespace {

using namespace std::chrono_literals;

class TracedMatrixTest : public MajorTest {
 protected:
  void SetUp() override {
    MajorTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_EQ(getuid(), 0u) << "the traced source's tests run as root, like CI";
  }
};

TEST_P(TracedMatrixTest, TracedRunHasExactTimeWaitsAndDurationsPerWaitEvent) {
  const auto dir = temp_dir(name("traced"));
  const auto run = pgwaitprof_run(dir / "data", {conninfo_, "--source", "trace"},
                                  {"-c", "2", "-j", "2", "-T", "3"});
  expect_traced_run(run, name("traced"));
  ASSERT_TRUE(run.report.is_object());
  EXPECT_EQ(run.report["environment"]["server_version_num"].get<int>() / 10000, GetParam());
  // Top SQL from the traced time per query id read in the kernel (14+: st_query_id), with
  // pg_stat_statements' calls; 13 says why there are none.
  if (GetParam() >= 14) {
    bool traced = false;
    for (const auto& statement : run.report["statements"]) {
      traced |= statement.value("calls", 0) > 0 && statement.value("samples", 0) > 0 &&
                statement["text"].get<std::string>().find("pgbench_") != std::string::npos;
    }
    EXPECT_TRUE(traced) << run.report["statements"].dump();
  } else {
    EXPECT_NE(run.report["statements_note"].get<std::string>().find("13"), std::string::npos)
        << run.report.dump().substr(0, 3000);
  }
}

// The query id of `statement` in pg_stat_statements (14+), as the server keeps it in
// st_query_id.
uint64_t statement_query_id(const std::string& conninfo, const std::string& statement) {
  const auto found = engine::run_command(
      {base::find_executable("psql"), "-X", "-q", "-At", "-c",
       "SELECT queryid FROM pg_stat_statements WHERE query = '" + statement + "'", conninfo});
  EXPECT_EQ(found.exit_code, 0) << found.output;
  return found.output.empty() ? 0 : static_cast<uint64_t>(std::stoll(found.output));
}

// One window with pgbench -S on two clients and a third session sleeping ten times 0.2 s: the
// sleeps are ten PgSleep waits of 200 ms, every client backend's on-CPU + run-queue time is the
// kernel's, and the sleeps were charged with their statement's query id.
TEST_P(TracedMatrixTest, WitnessesHold) {
  const int major = GetParam();
  const auto dir = temp_dir(name("witnesses"));
  ChildProcess pgbench(
      {base::find_executable("pgbench"), "-n", "-S", "-c", "2", "-j", "2", "-T", "30", conninfo_},
      dir / "pgbench.log");
  auto source = attached_trace_source(conninfo_);
  ASSERT_FALSE(source->description().empty());
  std::cout << name("trace") << ": " << source->description() << "\n";
  // 13: no my_wait_event_info, the wait is read through MyProc.
  EXPECT_NE(source->description().find(major >= 14 ? "wait=my_wait_event_info" : "wait=MyProc"),
            std::string::npos)
      << source->description();
  Connection sleeper(conninfo_);
  const pid_t postmaster = source->attachment().postmaster;
  std::vector<pid_t> pids;
  ASSERT_TRUE(eventually(10s,
                         [&] {
                           pids = client_backends(postmaster);
                           return pids.size() == 3;
                         }))
      << pids.size() << " client backends\n"
      << pgbench.log();
  const auto witness = cpu_witness(*source, pids, [&] {
    for (int index = 0; index < 10; ++index) sleeper.exec("SELECT pg_sleep(0.2)");
  });
  EXPECT_TRUE(pgbench.running()) << "pgbench ended inside the window\n" << pgbench.log();
  pgbench.signal(SIGKILL);
  pgbench.wait(5s);
  const auto& counters = source->totals().counters;
  std::cout << name("counters") << ": switches=" << counters[kTraceSwitches]
            << " failed_reads=" << counters[kTraceReadFailures]
            << " tracked_full=" << counters[kTraceTrackedFull]
            << " keys_full=" << counters[kTraceKeysFull] << " lost=" << counters[kTraceLost]
            << " samples=" << counters[kTraceSamples] << " wakeups=" << counters[kTraceWakeups]
            << "\n";
  // The reads of the processes' memory succeeded (the addresses are this major's: wrong ones
  // fail at every switch; a read that fails where a new backend has not yet touched its page of
  // shared memory is rare: one in 464 connections of pgbench -C on 16, three in 2,328 switches
  // in the version matrix's lane), and the maps held everything.
  EXPECT_LT(counters[kTraceReadFailures] * 100, counters[kTraceSwitches]);
  EXPECT_EQ(counters[kTraceTrackedFull] + counters[kTraceKeysFull] + counters[kTraceLost], 0u);
  expect_ten_sleeps_of_200ms(witness.profile, name("sleeps"));
  // Read from the status entry with each switch: the sleeping session is active (st_state).
  for (const auto& [key, traced] : witness.profile.traced()) {
    if (key.wait_event == "PgSleep") {
      EXPECT_EQ(key.state, "active") << key.backend_type;
    }
  }
  expect_schedstat_witness(witness, name("schedstat"));

  // The query id read in the kernel with each PgSleep wait: pg_stat_statements' (14+), none
  // before 14.
  const auto* layout = source->attachment().layout;
  uint32_t pg_sleep = 0;
  for (const auto& event : layout->wait_events) {
    if (event.name == "WAIT_EVENT_PG_SLEEP") pg_sleep = event.value;
  }
  std::set<uint64_t> query_ids;
  for (const auto& [key, value] : source->totals().values) {
    if (key.wait_event_info == pg_sleep && value.waits > 0) query_ids.insert(key.query_id);
  }
  const uint64_t expected = major >= 14 ? statement_query_id(conninfo_, "SELECT pg_sleep($1)") : 0;
  if (major >= 14) {
    EXPECT_NE(expected, 0u);
  }
  EXPECT_EQ(query_ids, std::set<uint64_t>{expected});
}

INSTANTIATE_TEST_SUITE_P(Majors, TracedMatrixTest, ::testing::Values(13, 14, 15, 16, 17, 18),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "pg" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace pgwaitprof::testing
