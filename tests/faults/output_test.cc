// Standard output's failures (issue 23, items 2 and 14): a full disk behind stdout is an error
// of the command (one line, exit 1); a reader that went away (`| head`) ends the output and
// nothing else (no death by SIGPIPE). The run's own side of `| head` is in signal_class_test.
#include "tests/faults/fault_harness.h"

namespace pgwaitprof::testing {
namespace {

const std::string kReport =
    std::string(PGWAITPROF_SOURCE_DIR) + "/tests/fixtures/report_v3_latency_kernel.json";

TEST(OutputFaults, AFullStandardOutputIsAnErrorWithOneLine) {
  const auto result = engine::run_command(
      {"/bin/sh", "-c", pgwaitprof_binary() + " report " + kReport + " --format html >/dev/full"});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_EQ(result.output,
            "pgwaitprof: could not write to standard output: No space left on device\n");
}

TEST(OutputFaults, AReaderThatWentAwayEndsTheOutputNotTheCommand) {
  // The HTML page is far larger than a pipe's buffer: most of it meets a closed pipe.
  const auto result = engine::run_command(
      {"/bin/bash", "-c",
       pgwaitprof_binary() + " report " + kReport +
           " --format html | head -c 10 >/dev/null; echo \"status ${PIPESTATUS[0]}\""});
  EXPECT_EQ(result.output, "status 0\n");
}

}  // namespace
}  // namespace pgwaitprof::testing
