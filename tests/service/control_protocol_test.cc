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

}  // namespace
}  // namespace pgwaitprof::service
