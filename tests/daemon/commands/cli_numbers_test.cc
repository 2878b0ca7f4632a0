// Every numeric command-line option refuses what is not a number in its range, "nan" included,
// with one line naming the option and the value, and exit code 2 before any work is done.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/cli_capture.h"

namespace pgwaitprof::commands {
namespace {

using test_support::run_cli;

TEST(CliNumbers, NanAndOutOfRangeValuesExitTwoWithOneLine) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"run", "--hz", "nan"},
       "pgwaitprof: --hz: invalid value \"nan\" (must be a number between 1 and 10000)\n"},
      {{"daemon", "--target", "host=/nonexistent", "--hz", "NaN"},
       "pgwaitprof: --hz: invalid value \"NaN\" (must be a number between 1 and 10000)\n"},
      {{"run", "--hz", "inf"},
       "pgwaitprof: --hz: invalid value \"inf\" (must be a number between 1 and 10000)\n"},
      {{"run", "--hz", "0.5"},
       "pgwaitprof: --hz: invalid value \"0.5\" (must be between 1 and 10000)\n"},
      {{"run", "--cpu-profile=1000"},
       "pgwaitprof: --cpu-profile: invalid value \"1000\" (must be between 1 and 999)\n"},
      {{"record", "--cpu-profile=0"},
       "pgwaitprof: --cpu-profile: invalid value \"0\" (must be between 1 and 999)\n"},
      {{"run", "--cpu-profile=fast"},
       "pgwaitprof: --cpu-profile: invalid value \"fast\" (must be an integer between 1 and "
       "999)\n"},
      {{"run", "--interval", "1.5"},
       "pgwaitprof: --interval: invalid value \"1.5\" (must be an integer between 1 and 3600)\n"},
      {{"run", "--scale", "0x10"},
       "pgwaitprof: --scale: invalid value \"0x10\" (must be an integer between 1 and 100000)\n"},
      {{"matrix", "plan.yaml", "--repeats", "101"},
       "pgwaitprof: --repeats: invalid value \"101\" (must be between 1 and 100)\n"},
      {{"report", "dir", "--top", "nan"},
       "pgwaitprof: --top: invalid value \"nan\" (must be an integer between 1 and 1000000)\n"},
      {{"trend", "--window", "2"},
       "pgwaitprof: --window: invalid value \"2\" (must be between 3 and 1000)\n"},
      // pgbench's arguments: -R is read with atof, which takes "nan".
      {{"run", "--", "-T", "5", "-R", "nan"},
       "pgwaitprof: invalid value for pgbench option \"-R\": \"nan\" (must be a number between "
       "0.001 and 1000000000)\n"},
  };
  for (const auto& bad : cases) {
    auto args = bad.args;
    // Were a value let through, the command would fail fast instead of starting a scratch
    // cluster or a daemon: a target without a server, a data directory that cannot be made.
    if (args.front() == "run") args.insert(args.begin() + 1, {"host=/nonexistent", "--no-daemon"});
    if (args.front() == "daemon") args.insert(args.end(), {"--data-dir", "/proc/pgwaitprof"});
    const auto result = run_cli(args);
    EXPECT_EQ(result.code, 2) << bad.args.front() << " " << bad.args.back();
    // The first line is the error; CLI11's errors add a hint after it.
    EXPECT_EQ(result.err.substr(0, result.err.find('\n') + 1), bad.message);
  }
}

}  // namespace
}  // namespace pgwaitprof::commands
