// The control socket's run request: what `pgwaitprof run` sends a daemon is what the daemon
// reads back, field by field, and a mistyped field is refused with its name.
#include "daemon/service/control_protocol.h"

#include <gtest/gtest.h>

namespace pgwaitprof::service {
namespace {

TEST(ControlProtocol, ARunRequestRoundTripsEveryField) {
  engine::RunRequest request;
  request.conninfo = "host=/tmp port=5432";
  request.workload = "tpcb-func";
  request.label = "nightly";
  request.pgbench_args = {"-c", "4", "-T", "10"};
  request.interval = std::chrono::seconds(2);
  request.loadgen = "/usr/bin/pgbench";
  request.keep_transaction_log = true;
  const auto line = run_request_line(request);
  ASSERT_EQ(line.back(), '\n');
  const auto parsed = parse_run_request(line);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->conninfo, request.conninfo);
  EXPECT_EQ(parsed->workload, request.workload);
  EXPECT_EQ(parsed->label, request.label);
  EXPECT_EQ(parsed->pgbench_args, request.pgbench_args);
  EXPECT_EQ(parsed->interval, request.interval);
  EXPECT_EQ(parsed->loadgen, request.loadgen);
  EXPECT_TRUE(parsed->keep_transaction_log);

  request.keep_transaction_log = false;
  const auto default_log = parse_run_request(run_request_line(request));
  ASSERT_TRUE(default_log);
  EXPECT_FALSE(default_log->keep_transaction_log);
}

TEST(ControlProtocol, OtherLoadGeneratorsAndRecordingWindowsRoundTrip) {
  engine::RunRequest sysbench;
  sysbench.kind = loadgen::LoadgenKind::kSysbench;
  sysbench.loadgen = "sysbench";
  sysbench.pgbench_args = {"oltp_read_write", "--threads=4", "--time=10"};
  sysbench.setup_step = "prepare";
  sysbench.teardown_step = "cleanup";
  const auto parsed = parse_run_request(run_request_line(sysbench));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->kind, loadgen::LoadgenKind::kSysbench);
  EXPECT_EQ(parsed->pgbench_args, sysbench.pgbench_args);  // not judged as pgbench's
  EXPECT_EQ(parsed->setup_step, "prepare");
  EXPECT_EQ(parsed->teardown_step, "cleanup");
  EXPECT_FALSE(check_socket_loadgen_args(*parsed));
  auto elsewhere = sysbench;
  elsewhere.pgbench_args.push_back("--pgsql-host=db2");
  const auto refused = check_socket_loadgen_args(*parse_run_request(run_request_line(elsewhere)));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->message,
            "sysbench option \"--pgsql-host\" is not allowed through the control socket: the "
            "daemon's target decides the database");

  // A command's executable is what the daemon's allow-list judges.
  engine::RunRequest command;
  command.kind = loadgen::LoadgenKind::kCommand;
  command.pgbench_args = {"/opt/load.sh", "-n", "3"};
  const auto parsed_command = parse_run_request(run_request_line(command));
  ASSERT_TRUE(parsed_command) << parsed_command.error().message;
  EXPECT_EQ(parsed_command->loadgen, "/opt/load.sh");

  engine::RunRequest window;
  window.kind = loadgen::LoadgenKind::kNone;
  window.record_duration = base::Seconds(60);
  const auto parsed_window = parse_run_request(run_request_line(window));
  ASSERT_TRUE(parsed_window) << parsed_window.error().message;
  EXPECT_EQ(parsed_window->kind, loadgen::LoadgenKind::kNone);
  EXPECT_EQ(parsed_window->record_duration, base::Seconds(60));
  EXPECT_EQ(parsed_window->loadgen, "");

  const auto unknown = parse_run_request(R"({"type":"run","loadgen_kind":"hammerdb"})");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "invalid value for \"loadgen_kind\": unknown load generator \"hammerdb\"");
}

// A recording window's tags travel to the daemon, checked as the command line checks them.
TEST(ControlProtocol, TagsRoundTripAndBadOnesAreRefused) {
  engine::RunRequest window;
  window.kind = loadgen::LoadgenKind::kNone;
  window.tags = {{"loadgen", "benchbase"}, {"client_host", "bench-2"}};
  const auto parsed = parse_run_request(run_request_line(window));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->tags, window.tags);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"type":"run","tags":["a=b"]})",
       "invalid value for \"tags\": must be an object of strings, not array"},
      {R"({"type":"run","tags":{"a":1}})",
       "invalid value for \"tags\": every value must be a string"},
      {R"({"type":"run","tags":{"a b":"c"}})",
       "invalid value for \"tags\": the key must be 1 to 64 letters, digits, '_', '.' or '-'"},
  };
  for (const auto& [line, message] : cases) {
    const auto refused = parse_run_request(line);
    ASSERT_FALSE(refused) << line;
    EXPECT_EQ(refused.error().message, message);
  }
}

TEST(ControlProtocol, KeepTransactionLogMustBeABoolean) {
  const auto parsed =
      parse_run_request(R"({"type":"run","target":"t","keep_transaction_log":"yes"})");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message,
            "invalid value for \"keep_transaction_log\": must be true or false, not string");
}

// Every number a client sends is checked as the command line checks it: JSON has no NaN, but a
// fraction, a huge unsigned (which would wrap around to a negative long long) and a pgbench
// rate of "nan" in a string are all refused with the field's name.
TEST(ControlProtocol, NumbersAreFiniteAndInRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"type":"run","target":"t","interval_s":1.5})",
       "invalid value for \"interval_s\": must be an integer between 1 and 3600"},
      {R"({"type":"run","target":"t","interval_s":0})",
       "invalid value for \"interval_s\": must be between 1 and 3600"},
      {R"({"type":"run","target":"t","interval_s":18446744073709551615})",
       "invalid value for \"interval_s\": must be between 1 and 3600"},
      {R"({"type":"run","target":"t","interval_s":1e400})",
       "could not parse request: not a JSON object"},
      {R"({"type":"run","target":"t","pgbench_args":["-T","10","-R","nan"]})",
       "invalid value for pgbench option \"-R\": \"nan\" (must be a number between 0.001 and "
       "1000000000)"},
      {R"({"type":"run","target":"t","pgbench_args":["--progress=0"]})",
       "invalid value for pgbench option \"--progress\": \"0\" (must be between 1 and 3600)"},
  };
  for (const auto& [line, message] : cases) {
    const auto parsed = parse_run_request(line);
    ASSERT_FALSE(parsed) << line;
    EXPECT_EQ(parsed.error().message, message) << line;
  }
  // Another load generator's arguments are its own (it is refused or allowed by name later).
  EXPECT_TRUE(parse_run_request(
      R"({"type":"run","target":"t","loadgen":"/bin/sh","pgbench_args":["-c","touch x"]})"));
  EXPECT_FALSE(parse_run_request(
      R"({"type":"run","target":"t","loadgen":"/usr/bin/pgbench","pgbench_args":["-c","x"]})"));
  const auto good = parse_run_request(
      R"({"type":"run","target":"t","interval_s":3600,"pgbench_args":["-R","100.5","-P","2"]})");
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ(good->interval, std::chrono::seconds(3600));
}

}  // namespace
}  // namespace pgwaitprof::service
