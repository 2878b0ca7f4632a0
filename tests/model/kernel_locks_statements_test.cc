// The model's side of the kernel view, lock blockers and statements: classification of
// backends without a wait event, kernel readings spread over the timeline, lock waits
// aggregated by what blocked them, and statement waits per query id.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "model/run.h"
#include "model/run_recorder.h"
#include "model/wait_key.h"

namespace pgwaitprof::model {
namespace {

using namespace std::chrono_literals;

BackendSample backend(int pid, std::string type, std::string event, char kernel_state = 0) {
  BackendSample sample;
  sample.pid = pid;
  sample.backend_type = "client backend";
  sample.state = "active";
  sample.wait_event_type = std::move(type);
  sample.wait_event = std::move(event);
  sample.kernel_state = kernel_state;
  return sample;
}

TEST(Classify, TheKernelStateSplitsBackendsWithoutAWaitEvent) {
  EXPECT_EQ(display_name(*classify(backend(1, "", "", 'R'))), "CPU");
  EXPECT_EQ(display_name(*classify(backend(1, "", ""))), "CPU");  // not local: unknown
  EXPECT_EQ(display_name(*classify(backend(1, "", "", 'D'))), "Kernel | uninterruptible");
  EXPECT_EQ(display_name(*classify(backend(1, "", "", 'S'))), "Kernel | sleeping (no wait event)");
  // A named wait stays what PostgreSQL says, whatever the kernel state.
  EXPECT_EQ(display_name(*classify(backend(1, "IO", "WALSync", 'D'))), "IO | WALSync");
}

struct Clock {
  SteadyClock::time_point start = SteadyClock::time_point{} + 1h;
  SystemClock::time_point wall = SystemClock::time_point{} + std::chrono::hours(24 * 365 * 50);
};

TEST(RunRecorderKernel, AReadingIsSharedByTheIntervalsItOverlaps) {
  const Clock clock;
  RunRecorder recorder(clock.start, clock.wall, 1s);
  // A reading from -0.5 s to 1.5 s: 2 cores busy and 1 backend queued throughout. The half
  // second before the run is not the run's.
  KernelTimes times;
  times.from = clock.start - 500ms;
  times.to = clock.start + 1500ms;
  times.by_group[kClientBackends] = {base::Seconds(4.0), base::Seconds(2.0), base::Seconds(0)};
  recorder.on_kernel_times(times);
  times.from = times.to;
  times.to = clock.start + 3s;
  times.by_group[kClientBackends] = {base::Seconds(1.5), base::Seconds(0.0),
                                     base::Seconds(0)};  // 1 core for 1.5 s
  recorder.on_kernel_times(times);
  model::Run run;
  recorder.finish(clock.start + 3s, run);
  ASSERT_EQ(run.timeline.size(), 3u);
  const auto& first = run.timeline[0].kernel.at(kClientBackends);
  EXPECT_DOUBLE_EQ(first.covered.count(), 1.0);
  EXPECT_DOUBLE_EQ(first.on_cpu_aas(), 2.0);
  EXPECT_DOUBLE_EQ(first.runqueue_aas(), 1.0);
  // [1 s, 2 s): half from each reading.
  const auto& second = run.timeline[1].kernel.at(kClientBackends);
  EXPECT_DOUBLE_EQ(second.covered.count(), 1.0);
  EXPECT_DOUBLE_EQ(second.on_cpu_aas(), 1.5);
  EXPECT_DOUBLE_EQ(second.runqueue_aas(), 0.5);
  EXPECT_DOUBLE_EQ(run.timeline[2].kernel.at(kClientBackends).on_cpu_aas(), 1.0);
  const auto& whole = run.kernel.at(kClientBackends);
  EXPECT_DOUBLE_EQ(whole.covered.count(), 3.0);
  EXPECT_DOUBLE_EQ(whole.on_cpu_aas(), (3.0 + 1.5) / 3.0);
}

LockWait wait(int pid, std::string type, std::string object, int blocker, std::string state,
              std::string statement) {
  LockWait result;
  result.pid = pid;
  result.lock_type = std::move(type);
  result.object = std::move(object);
  result.blocker_pid = blocker;
  result.blocker_application = "psql";
  result.blocker_backend_type = "client backend";
  result.blocker_state = std::move(state);
  result.blocker_xact_age = base::Seconds(3.1);
  result.blocker_statement = std::move(statement);
  return result;
}

TEST(RunRecorderLocks, AggregatedByLockObjectAndBlockerWithChains) {
  const Clock clock;
  RunRecorder recorder(clock.start, clock.wall, 1s);
  for (int tick = 0; tick < 60; ++tick) {  // 6 s at 10 Hz
    Snapshot snapshot;
    snapshot.taken_at_steady = clock.start + tick * 100ms;
    snapshot.backends = {backend(11, "Lock", "relation")};
    recorder.on_snapshot(snapshot);
  }
  for (int lookup = 0; lookup < 4; ++lookup) {
    LockLookup seen;
    seen.at = clock.start + 3s + lookup * 100ms;
    // 11 waits behind 12 (the table lock), 13 waits behind 11: a chain of two.
    seen.waits = {wait(11, "relation", "pgbench_accounts", 4242, "idle in transaction",
                       "LOCK TABLE pgbench_accounts"),
                  wait(13, "relation", "pgbench_accounts", 11, "active", "UPDATE ...")};
    recorder.on_lock_waits(seen);
  }
  // Transaction locks of different transactions and blockers are one row.
  LockLookup xacts;
  xacts.at = clock.start + 5s;
  xacts.waits = {wait(20, "transactionid", "transaction 700", 30, "active", "END;"),
                 wait(21, "transactionid", "transaction 701", 31, "active", "END;")};
  recorder.on_lock_waits(xacts);
  model::Run run;
  recorder.finish(clock.start + 6s, run);
  EXPECT_EQ(run.lock_lookups, 5u);
  ASSERT_EQ(run.lock_blockers.size(), 2u);
  // 13 waits for 11, which waits for 4242: both are charged to the head of the chain.
  const LockBlocker& table = run.lock_blockers[0];  // most observations first
  EXPECT_EQ(table.object, "pgbench_accounts");
  EXPECT_EQ(table.observations, 8u);
  EXPECT_EQ(table.example_blocker_pid, 4242);
  EXPECT_EQ(table.chain_depth, 2);
  EXPECT_EQ(table.description(),
            "relation \"pgbench_accounts\", blocked by pid 4242 (psql, idle in transaction 3.1 "
            "s) at the end of a chain of 2: LOCK TABLE pgbench_accounts");
  const LockBlocker& transactions = run.lock_blockers[1];
  EXPECT_EQ(transactions.lock_type, "transactionid");
  EXPECT_EQ(transactions.object, "");
  EXPECT_EQ(transactions.blockers, 2);
  EXPECT_EQ(transactions.observations, 2u);
  EXPECT_EQ(transactions.description(),
            "transactionid, blocked by 2 backends (e.g. pid 30, psql, active 3.1 s): END;");
  // The interval of the table-lock lookups names that blocker.
  ASSERT_EQ(run.timeline.size(), 6u);
  EXPECT_EQ(run.timeline[3].lock_blocker, table.description());
  EXPECT_TRUE(run.timeline[4].lock_blocker.empty());
}

// Issue 47: a prepared transaction holds its locks with no backend (pg_blocking_pids says pid
// 0); the backend queued first behind it must not be blamed for the others.
LockWait prepared_wait(int pid, std::string type, std::string object, std::string gid) {
  LockWait result = wait(pid, std::move(type), std::move(object), 0, "prepared", "");
  result.blocker_application = "";
  result.blocker_backend_type = "prepared transaction";
  result.blocker_prepared = std::move(gid);
  result.blocker_owner = "alice";
  result.blocker_xact_age = base::Seconds(12.34);
  return result;
}

TEST(RunRecorderLocks, APreparedTransactionIsTheHeadOfTheChainsItBlocks) {
  const Clock clock;
  RunRecorder recorder(clock.start, clock.wall, 1s);
  LockLookup seen;
  seen.at = clock.start + 500ms;
  // 21 waits for the prepared 'blk''s transaction; 22 and 23 wait for the row 21 locked first;
  // 24 waits for another prepared transaction.
  seen.waits = {prepared_wait(21, "transactionid", "transaction 760", "blk"),
                wait(22, "tuple", "pgbench_branches", 21, "active", "UPDATE pgbench_branches"),
                wait(23, "tuple", "pgbench_branches", 21, "active", "UPDATE pgbench_branches"),
                prepared_wait(24, "transactionid", "transaction 770", "other")};
  recorder.on_lock_waits(seen);
  model::Run run;
  recorder.finish(clock.start + 1s, run);
  ASSERT_EQ(run.lock_blockers.size(), 3u);
  for (const auto& blocker : run.lock_blockers) {
    EXPECT_FALSE(blocker.prepared.empty()) << blocker.description();
    EXPECT_EQ(blocker.example_blocker_pid, 0);
  }
  const LockBlocker& rows = run.lock_blockers[0];  // two observations
  EXPECT_EQ(rows.observations, 2u);
  EXPECT_EQ(rows.chain_depth, 2);
  EXPECT_EQ(rows.description(),
            "tuple \"pgbench_branches\", blocked by prepared transaction 'blk', prepared 12.3 s "
            "ago, by alice at the end of a chain of 2");
  EXPECT_EQ(rows.who(), "prepared transaction 'blk', prepared 12.3 s ago, by alice");
  std::set<std::string> names;
  for (const auto& blocker : run.lock_blockers) names.insert(blocker.prepared);
  EXPECT_EQ(names, (std::set<std::string>{"blk", "other"}));
  const auto json = to_json(run);
  EXPECT_EQ(run_from_json(json).lock_blockers[0].prepared_by, "alice");
}

TEST(RunRecorderStatements, WaitsPerQueryIdWithTheirTexts) {
  const Clock clock;
  RunRecorder recorder(clock.start, clock.wall, 1s);
  for (int tick = 0; tick < 10; ++tick) {
    Snapshot snapshot;
    snapshot.taken_at_steady = clock.start + tick * 100ms;
    snapshot.backends = {backend(1, "Lock", "transactionid"), backend(2, "IO", "WALSync"),
                         backend(3, "", "", 'R')};
    snapshot.backends[0].query_id = 100;  // the branch update
    snapshot.backends[1].query_id = 200;  // END
    snapshot.backends[2].query_id = 100;
    recorder.on_snapshot(snapshot);
  }
  recorder.on_statement_texts({{100, "UPDATE pgbench_branches SET ..."}, {200, "END;"}});
  recorder.set_statement_stats({{100, {50, base::Milliseconds(2.5)}}});
  model::Run run;
  recorder.finish(clock.start + 1s, run);
  ASSERT_EQ(run.statements.size(), 2u);
  const auto& update = run.statements[0];  // most samples first
  EXPECT_EQ(update.query_id, 100);
  EXPECT_EQ(update.text, "UPDATE pgbench_branches SET ...");
  EXPECT_EQ(update.samples, 20u);
  EXPECT_EQ(update.waits.at("Lock | transactionid"), 10u);
  EXPECT_EQ(update.waits.at("CPU"), 10u);
  EXPECT_EQ(update.calls, 50u);
  const auto& end = run.statements[1];
  EXPECT_EQ(end.text, "END;");
  EXPECT_EQ(end.waits.at("IO | WALSync"), 10u);
  EXPECT_FALSE(end.calls);
}

// Issue 48: the traced source delivers time per query id and wait key (microseconds) beside its
// profile; the statements are built from it as from snapshots, idle time and query id 0 left
// out.
TEST(RunRecorderStatements, TracedTimePerQueryIdMakesTheStatements) {
  const Clock clock;
  RunRecorder recorder(clock.start, clock.wall, 1s);
  const WaitKey lock{"client backend", "active", "Lock", "transactionid"};
  const WaitKey cpu{"client backend", "active", "CPU", "CPU"};
  const WaitKey idle{"client backend", "idle", "Client", "ClientRead"};
  recorder.on_statement_delta({{100, {{lock, 700'000}, {cpu, 100'000}}}, {0, {{cpu, 50'000}}}});
  recorder.on_statement_delta({{100, {{lock, 300'000}, {idle, 900'000}}}, {-7, {{cpu, 20'000}}}});
  recorder.on_statement_texts({{100, "UPDATE pgbench_branches SET ..."}, {-7, "END;"}});
  model::Run run;
  recorder.finish(clock.start + 1s, run);
  ASSERT_EQ(run.statements.size(), 2u);
  EXPECT_EQ(run.statements[0].query_id, 100);
  EXPECT_EQ(run.statements[0].samples, 1'100'000u);
  EXPECT_EQ(run.statements[0].waits.at("Lock | transactionid"), 1'000'000u);
  EXPECT_EQ(run.statements[0].waits.at("CPU"), 100'000u);
  EXPECT_FALSE(run.statements[0].waits.contains("Client | ClientRead")) << "idle is not load";
  EXPECT_EQ(run.statements[1].query_id, -7);
  EXPECT_EQ(run.statements[1].text, "END;");
  EXPECT_EQ(run.query_ids.size(), 2u) << "query id 0 is nobody's";
}

TEST(ReportJsonV3, KernelLocksAndStatementsRoundTrip) {
  model::Run run;
  run.id = "r";
  run.kernel[kClientBackends] = {base::Seconds(1.5), base::Seconds(0.5), base::Seconds(2.0)};
  LockBlocker blocker;
  blocker.lock_type = "tuple";
  blocker.object = "pgbench_branches";
  blocker.blockers = 3;
  blocker.observations = 9;
  run.lock_blockers = {blocker};
  StatementProfile statement;
  statement.query_id = -5;
  statement.text = "END;";
  statement.samples = 4;
  statement.waits = {{"IO | WALSync", 4}};
  run.statements = {statement};
  const auto json = to_json(run);
  EXPECT_EQ(json.at("schema_version"), kReportSchemaVersion);
  EXPECT_EQ(to_json(run_from_json(json)), json);
  EXPECT_DOUBLE_EQ(run_from_json(json).kernel.at(kClientBackends).runqueue_aas(), 0.25);
}

}  // namespace
}  // namespace pgwaitprof::model
