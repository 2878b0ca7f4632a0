// The run engine's steps without a server: the run record from the request, a COPY load's
// summary, a fixed-work run's work, the status a run ends with, a report that cannot be
// written, the statements' deltas and note, the latency timeline's plan, the checkpoint's
// intervals (run_steps.h, on vectors); and writing the run directory and reading the
// transaction log (run_state.h, in temporary directories).
#include <gtest/gtest.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/engine/run_state.h"
#include "daemon/engine/run_steps.h"
#include "tests/loadgen/pgbench_parser_fixture.h"

namespace pgwaitprof::engine::run_steps {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A directory of its own under the system's temporary one, removed with its contents.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("pgwaitprof-run-steps-" + std::to_string(getpid()) + "-" + std::to_string(next_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  static inline int next_ = 0;
  fs::path path_;
};

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

TEST(RunSteps, IsoUtcIsSecondsInUtc) {
  EXPECT_EQ(iso_utc(model::SystemClock::time_point(1'764'756'245s)), "2025-12-03T10:04:05Z");
}

TEST(RunSteps, DescribeRequestMasksThePasswordAndEscapesTheLabel) {
  RunRequest request;
  request.conninfo = "host=db password=hunter2";
  request.label = "nightly\x1b[31m";
  request.workload = "select-only";
  request.variant = "patched";
  request.repeat = 3;
  request.pgbench_args = {"-c", "16", "-T", "60"};
  request.interval = base::Seconds(2);
  collectors::SamplerOptions sampler;
  sampler.source = model::SamplerSource::kActivity;
  sampler.hz = 250;
  model::Run run;
  describe_request(run, request, sampler);
  EXPECT_EQ(run.target.find("hunter2"), std::string::npos) << run.target;
  EXPECT_NE(run.target.find("host=db"), std::string::npos) << run.target;
  EXPECT_EQ(run.label.find('\x1b'), std::string::npos);
  EXPECT_EQ(run.label.rfind("nightly", 0), 0u);
  EXPECT_EQ(run.workload, "select-only");
  EXPECT_EQ(run.variant, "patched");
  EXPECT_EQ(run.repeat, 3);
  EXPECT_EQ(run.clients, 16);
  EXPECT_EQ(run.interval, base::Seconds(2));
  EXPECT_EQ(run.sampler.hz, 250);

  request.conninfo.clear();
  request.pgbench_args.clear();
  sampler.source = model::SamplerSource::kPgWaitSampling;
  describe_request(run, request, sampler);
  EXPECT_EQ(run.target, "(PG* environment variables)");
  EXPECT_EQ(run.clients, 1);     // pgbench's default
  EXPECT_EQ(run.sampler.hz, 0);  // pg_wait_sampling samples at its own period
}

TEST(RunSteps, CopySummaryIsOneTransactionPerClient) {
  const auto summary = copy_summary(4, 2, 0, base::Seconds(2));
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->transaction_type,
            std::string("COPY ") + model::kCopyTargetTable + " FROM STDIN");
  EXPECT_EQ(summary->clients, 4);
  EXPECT_EQ(summary->threads, 1);
  EXPECT_EQ(summary->transactions, 4u);
  EXPECT_DOUBLE_EQ(summary->scale, 2);
  EXPECT_DOUBLE_EQ(summary->tps, 2);
  EXPECT_DOUBLE_EQ(summary->latency_avg.count(), 2000);
  EXPECT_FALSE(copy_summary(4, 2, 1, base::Seconds(2)));  // the COPY failed
  EXPECT_FALSE(copy_summary(4, 2, 0, base::Seconds(0)));  // no time measured
}

TEST(RunSteps, WorkDoneOnlyForFixedWork) {
  model::LoadgenSummary summary;
  summary.transactions = 800;
  RunRequest request;
  request.workload = "tpcb";
  request.pgbench_args = {"-c", "8", "-T", "60"};
  EXPECT_FALSE(
      work_done(request, summary, {base::Seconds(12.5), 10, 0}));  // a run of fixed duration
  request.pgbench_args = {"-c", "8", "-t", "100"};
  auto work = work_done(request, summary, {base::Seconds(12.5), 10, 0});
  ASSERT_TRUE(work);
  EXPECT_EQ(work->transactions, 800u);
  EXPECT_DOUBLE_EQ(work->elapsed.count(), 12.5);
  EXPECT_EQ(work->rows, 0u);
  EXPECT_FALSE(work_done(request, std::nullopt, {base::Seconds(12.5), 10, 0}));  // no summary
  EXPECT_FALSE(work_done(request, summary, {base::Seconds(0), 10, 0}));          // no elapsed time

  request.workload = "copy";
  request.pgbench_args.clear();
  summary.transactions = 2;
  work = work_done(request, summary, {base::Seconds(3), 5, 1000});
  ASSERT_TRUE(work);
  EXPECT_EQ(work->rows, 2u * 5 * model::kAccountsPerScale);
  EXPECT_EQ(work->bytes, 2000u);
}

TEST(RunSteps, LoadgenSummaryOrAWarningWhenOneWasExpected) {
  model::Run run;
  read_loadgen_summary(run, loadgen::test_support::read_fixture("pg15_tpcb_progress.stdout"), "",
                       true);
  ASSERT_TRUE(run.loadgen);
  EXPECT_EQ(run.clients, 2);
  EXPECT_DOUBLE_EQ(run.loadgen->tps, 2180.759046);
  EXPECT_TRUE(run.warnings.empty());

  model::Run failed;
  read_loadgen_summary(failed, "pgbench: error: no summary here\n", "", false);
  EXPECT_FALSE(failed.loadgen);
  EXPECT_TRUE(failed.warnings.empty());  // a failed run says why elsewhere
  model::Run odd;
  read_loadgen_summary(odd, "pgbench: error: no summary here\n", "", true);
  EXPECT_EQ(odd.warnings.size(), 1u);
}

TEST(RunSteps, InterruptedOverFailedOverCompleted) {
  model::Run run;
  settle_status(run, {true, "interrupted by SIGINT", 1, false, "some stderr"});
  EXPECT_EQ(run.status, model::RunStatus::kInterrupted);
  EXPECT_EQ(run.error, "interrupted by SIGINT");
  EXPECT_EQ(run.loadgen_exit_code, 1);
  EXPECT_EQ(run.loadgen_stderr, "some stderr");

  model::Run failed;
  settle_status(failed, {false, "", 1, false, "pgbench: error: connection refused\n"});
  EXPECT_EQ(failed.status, model::RunStatus::kFailed);
  EXPECT_NE(failed.error.find("connection refused"), std::string::npos) << failed.error;

  model::Run completed;
  settle_status(completed, {false, "", 0, false, "progress lines"});
  EXPECT_EQ(completed.status, model::RunStatus::kCompleted);
  EXPECT_TRUE(completed.loadgen_stderr.empty());  // kept only for runs that did not complete
}

TEST(RunSteps, TheFirstFailureStaysTheError) {
  model::Run run;
  fail(run, {"could not connect"});
  settle_status(run, {false, "", 2, false, "pgbench: error: other\n"});
  EXPECT_EQ(run.status, model::RunStatus::kFailed);
  EXPECT_EQ(run.error, "could not connect");

  model::Run copy;  // pgwaitprof's own COPY put its failure on the run already
  settle_status(copy, {false, "", 1, true, ""});
  EXPECT_EQ(copy.status, model::RunStatus::kCompleted);
  EXPECT_EQ(copy.loadgen_exit_code, 1);
}

TEST(RunSteps, ACommandThatFailsOrEndsAtOnceFailsTheRunWithItsStderr) {
  model::Run failed;
  LoadCheck check;
  check.loadgen_name = "load.sh";
  settle_status(failed, {false, "", 3, false, "psql: error: connection refused\n"}, check);
  EXPECT_EQ(failed.status, model::RunStatus::kFailed);
  EXPECT_EQ(failed.error, "load.sh exited with code 3: psql: error: connection refused");
  EXPECT_EQ(failed.loadgen_stderr, "psql: error: connection refused\n");

  model::Run at_once;
  check.elapsed = base::Seconds(0.05);
  settle_status(at_once, {false, "", 0, false, "usage: load.sh\n"}, check);
  EXPECT_EQ(at_once.status, model::RunStatus::kFailed);
  EXPECT_EQ(at_once.error,
            "load.sh exited after 0.05 s, within the first interval of 1 s: nothing to profile");
  EXPECT_EQ(at_once.loadgen_stderr, "usage: load.sh\n");

  model::Run long_enough;
  check.elapsed = base::Seconds(3);
  settle_status(long_enough, {false, "", 0, false, ""}, check);
  EXPECT_EQ(long_enough.status, model::RunStatus::kCompleted);
}

TEST(RunSteps, TheServersSummaryOfALoadThatReportsNone) {
  EXPECT_FALSE(server_summary({}));
  model::RunRecorder::ServerTotals totals;
  totals.transactions = 1234.4;
  totals.calls = 5000;
  totals.covered = base::Seconds(10);
  const auto summary = server_summary(totals);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->transactions, 1234u);
  EXPECT_DOUBLE_EQ(summary->tps, 123.44);
  EXPECT_DOUBLE_EQ(*summary->qps, 500);
  EXPECT_TRUE(std::isnan(summary->latency_avg.count()));
  EXPECT_EQ(summary->clients, 0);
}

TEST(RunSteps, WhoTheLoadGeneratorIs) {
  RunRequest request;
  EXPECT_EQ(loadgen_name(request), "pgbench");
  request.kind = loadgen::LoadgenKind::kCommand;
  request.pgbench_args = {"/opt/bench/run-app.sh", "--fast"};
  EXPECT_EQ(loadgen_name(request), "run-app.sh");
  EXPECT_EQ(loadgen_log_name(loadgen::LoadgenKind::kCommand), "command.log");
  EXPECT_EQ(loadgen_log_name(loadgen::LoadgenKind::kSysbench), "sysbench.log");
  EXPECT_EQ(loadgen_log_name(loadgen::LoadgenKind::kNone), "record.log");
  EXPECT_EQ(loadgen_log_name(loadgen::LoadgenKind::kPgbench), "pgbench.log");

  model::Run run;
  request.kind = loadgen::LoadgenKind::kSysbench;
  request.pgbench_args = {"oltp_read_write", "--threads=8"};
  describe_request(run, request, {});
  EXPECT_EQ(run.workload, "sysbench");
  EXPECT_EQ(run.clients, 8);
  EXPECT_EQ(run.throughput_source, "sysbench");
  request.kind = loadgen::LoadgenKind::kNone;
  describe_request(run, request, {});
  EXPECT_EQ(run.workload, "record");
  EXPECT_EQ(run.throughput_source, "server");
}

TEST(RunSteps, TheUsersScriptsNameThePgbenchWorkload) {
  RunRequest request;
  model::Run run;
  describe_request(run, request, {});
  EXPECT_EQ(run.workload, "tpcb");
  request.pgbench_args = {"-S", "-c", "2", "-T", "3"};
  describe_request(run, request, {});
  EXPECT_EQ(run.workload, "select-only");
  request.pgbench_args = {"-c", "2", "-f", "/home/me/bench.sql@2", "-N"};
  EXPECT_EQ(workload_name(request), "file:bench.sql@2+simple-update");
  request.workload = "tpcb-func";
  request.pgbench_args = {"-c", "2"};
  EXPECT_EQ(workload_name(request), "tpcb-func");
}

TEST(RunSteps, StderrTailIsTheLastEightKilobytes) {
  model::Run run;
  const std::string text = std::string(10000, 'a') + "the end";
  settle_status(run, {false, "", 1, false, text});
  EXPECT_EQ(run.loadgen_stderr.size(), 8192u);
  EXPECT_TRUE(run.loadgen_stderr.ends_with("the end"));
}

TEST(RunSteps, AReportThatCannotBeWrittenFailsTheRun) {
  model::Run run;
  fail_report(run, "No space left on device");
  EXPECT_EQ(run.status, model::RunStatus::kFailed);
  EXPECT_EQ(run.error, "could not write the report: No space left on device");
  model::Run interrupted;
  interrupted.status = model::RunStatus::kInterrupted;
  interrupted.error = "interrupted by SIGTERM";
  fail_report(interrupted, "disk full");
  EXPECT_EQ(interrupted.status, model::RunStatus::kInterrupted);
  EXPECT_EQ(interrupted.error, "interrupted by SIGTERM; could not write the report: disk full");
}

TEST(RunSteps, StatementDeltasOfTheCallsDuringTheRun) {
  const std::map<int64_t, collectors::StatementStats> before{{1, {10, 100, "SELECT 1"}},
                                                             {3, {7, 70, "SELECT 3"}}};
  const std::map<int64_t, collectors::StatementStats> after{
      {1, {15, 200, "SELECT 1"}}, {2, {3, 30, "SELECT 2"}}, {3, {7, 70, "SELECT 3"}}};
  const auto result = statement_deltas(before, after);
  ASSERT_EQ(result.deltas.size(), 2u);
  EXPECT_EQ(result.deltas.at(1).first, 5u);
  EXPECT_DOUBLE_EQ(result.deltas.at(1).second.count(), 20);  // 100 ms over 5 calls
  EXPECT_EQ(result.deltas.at(2).first, 3u);
  EXPECT_DOUBLE_EQ(result.deltas.at(2).second.count(), 10);
  EXPECT_FALSE(result.deltas.contains(3));  // not called during the run
  EXPECT_EQ(result.texts.at(2), "SELECT 2");
}

TEST(RunSteps, MissingStatementsSayWhy) {
  model::Run run;
  EXPECT_EQ(missing_statements_note(run, "off"), "");  // nothing sampled
  run.profile.add_snapshots(10);
  run.environment.server_version_num = 130012;
  EXPECT_EQ(missing_statements_note(run, "off"),
            "PostgreSQL 13 and older show no query_id in pg_stat_activity");
  run.environment.server_version_num = 150004;
  EXPECT_NE(missing_statements_note(run, "auto").find("compute_query_id is \"auto\""),
            std::string::npos);
  EXPECT_EQ(missing_statements_note(run, "on"), "");
  run.statements.push_back({});
  EXPECT_EQ(missing_statements_note(run, "off"), "");
}

TEST(RunSteps, LatencyTimelinePlanCoversTheRunSoFar) {
  loadgen::LoadgenCommand command;
  command.transaction_log_sampling_rate = 0.25;
  const model::SystemClock::time_point start(1'000'000s);
  const auto options =
      latency_timeline_options(command, base::Seconds(0.5), start, start + 10200ms);
  EXPECT_EQ(options.start, start);
  EXPECT_EQ(options.interval, 500ms);
  EXPECT_EQ(options.max_intervals, 22u);  // 20.4 intervals so far, and two more
  EXPECT_DOUBLE_EQ(options.sampling_rate, 0.25);
}

TEST(RunSteps, CheckpointMarksTheIntervalsItOverlaps) {
  model::Run run;
  for (int second = 0; second < 4; ++second) {
    model::TimelineSlice slice;
    slice.start = base::Seconds(second);
    slice.duration = base::Seconds(1);
    slice.profile.add({"checkpointer", "background", "IO", "DataFileSync"}, 10 + second);
    run.timeline.push_back(std::move(slice));
  }
  mark_checkpoint_after(run);  // no checkpoint: nothing marked
  EXPECT_FALSE(run.timeline[1].checkpoint_after);
  run.checkpoint_after = model::CheckpointAfter{};
  run.checkpoint_after->start = base::Seconds(1.5);
  run.checkpoint_after->duration = base::Seconds(1.0);
  mark_checkpoint_after(run);
  EXPECT_FALSE(run.timeline[0].checkpoint_after);
  EXPECT_TRUE(run.timeline[1].checkpoint_after);
  EXPECT_TRUE(run.timeline[2].checkpoint_after);
  EXPECT_FALSE(run.timeline[3].checkpoint_after);
  EXPECT_EQ(run.checkpoint_after->profile.total(true), 11u + 12u);
}

// ---- in temporary directories ----

TEST(RunStepsFiles, WriteKeepsTheRunDirectoryWithReportJsonLast) {
  TempDir temp;
  asio::io_context io;
  RunState state(io.get_executor(), RunRequest{});
  state.outcome.dir = temp.path() / "run";
  fs::create_directories(state.outcome.dir);
  state.run().id = "20261203-100405-abcd";
  state.pgbench_log = "progress: 1.0 s, 100.0 tps\n";
  write(state);
  EXPECT_TRUE(state.outcome.report_written);
  EXPECT_EQ(read_file(state.outcome.dir / "pgbench.log"), state.pgbench_log);
  const auto report = nlohmann::json::parse(read_file(state.outcome.dir / "report.json"));
  EXPECT_EQ(report.at("id"), "20261203-100405-abcd");
  EXPECT_EQ(report.at("status"), "completed");
}

TEST(RunStepsFiles, ARunDirectoryThatCannotBeWrittenFailsTheRun) {
  TempDir temp;
  std::ofstream(temp.path() / "a-file") << "not a directory";
  asio::io_context io;
  RunState state(io.get_executor(), RunRequest{});
  state.outcome.dir = temp.path() / "a-file" / "run";
  write(state);
  EXPECT_FALSE(state.outcome.report_written);
  EXPECT_EQ(state.run().status, model::RunStatus::kFailed);
  EXPECT_EQ(state.run().error.rfind("could not write the report: ", 0), 0u) << state.run().error;
}

TEST(RunStepsFiles, TheTransactionLogIsReadAndRemovedUnlessKept) {
  for (const bool keep : {false, true}) {
    TempDir temp;
    asio::io_context io;
    RunRequest request;
    request.keep_transaction_log = keep;
    RunState state(io.get_executor(), request);
    state.command.transaction_log_prefix = (temp.path() / "pgbench_log").string();
    state.command.transaction_log_added = true;
    std::ofstream(temp.path() / "pgbench_log.4242") << "not a transaction line\n";
    const auto start_wall = model::SystemClock::now();
    model::RunRecorder recorder(model::SteadyClock::now(), start_wall, base::Seconds(1));
    read_transaction_log(state, recorder, start_wall);
    EXPECT_EQ(fs::exists(temp.path() / "pgbench_log.4242"), keep);
    ASSERT_EQ(state.run().warnings.size(), 1u);
    EXPECT_EQ(state.run().warnings[0], "1 line(s) of pgbench's transaction log could not be read");
  }
}

}  // namespace
}  // namespace pgwaitprof::engine::run_steps
