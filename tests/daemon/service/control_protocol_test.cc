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
