// The load generator's command line on vectors: the workload's arguments, -P added only when the
// user gave none (and the interval read back from theirs), the transaction log added only when
// the user asked for none and never with aggregates, the user's arguments unchanged and last but
// the target, the password kept out of argv, and what a failure says.
#include "loadgen/loadgen_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/workloads.h"

namespace pgwaitprof::loadgen {
namespace {

using Args = std::vector<std::string>;

LoadgenInputs inputs(Args user_args, std::string conninfo = "") {
  LoadgenInputs in;
  in.executable = "/usr/bin/pgbench";
  in.workload = model::find_workload("tpcb");
  in.user_args = std::move(user_args);
  in.interval = base::Seconds(2);
  in.conninfo = conninfo;
  in.display_target = conninfo.empty() ? "" : "host=db password=********";
  in.transaction_log_prefix = "/runs/r1/pgbench_log";
  return in;
}

TEST(PgbenchOption, EverySpellingOfAnOption) {
  EXPECT_EQ(pgbench_option({"-c", "8"}, 'c', "client"), "8");
  EXPECT_EQ(pgbench_option({"-c8"}, 'c', "client"), "8");
  EXPECT_EQ(pgbench_option({"--client=8"}, 'c', "client"), "8");
  EXPECT_EQ(pgbench_option({"--client", "8"}, 'c', "client"), "8");
  EXPECT_EQ(pgbench_option({"-j", "2"}, 'c', "client"), std::nullopt);
  EXPECT_EQ(pgbench_int_option({"-c", "x8"}, 'c', "client", 1), 1);
  EXPECT_EQ(pgbench_int_option({"-c", "16"}, 'c', "client", 1), 16);
}

TEST(BuildLoadgenCommand, WorkloadThenProgressThenLogThenTheUsersArguments) {
  const auto command = build_loadgen_command(inputs({"-c", "8", "-j", "2", "-T", "30"}));
  const Args expected = {"/usr/bin/pgbench",
                         "-b",
                         "tpcb-like",
                         "-P",
                         "2",
                         "-l",
                         "--log-prefix=/runs/r1/pgbench_log",
                         "-c",
                         "8",
                         "-j",
                         "2",
                         "-T",
                         "30"};
  EXPECT_EQ(command.argv, expected);
  EXPECT_EQ(command.display_argv, expected);
  EXPECT_EQ(command.interval, base::Seconds(2));
  EXPECT_EQ(command.clients, 8);
  EXPECT_EQ(command.threads, 2);
  EXPECT_TRUE(command.transaction_log_added);
  EXPECT_EQ(command.transaction_log_prefix, "/runs/r1/pgbench_log");
  EXPECT_TRUE(command.environment.empty());
}

TEST(BuildLoadgenCommand, TheUsersScriptOptionsAreTheWorkloadWithNoBuiltinBeside) {
  // pgbench runs "-b tpcb-like ... -S" as two scripts, half each: the user's -S alone is run.
  for (const Args& user : std::vector<Args>{{"-S", "-c", "2", "-T", "3"},
                                            {"--select-only", "-T", "3"},
                                            {"-N"},
                                            {"-b", "simple-update@2"},
                                            {"--builtin=select-only"},
                                            {"-f", "mine.sql"},
                                            {"--file", "mine.sql@5"}}) {
    auto in = inputs(user);
    in.script_path = "/runs/r1/workload.pgbench";  // a workload's own script is not added either
    const auto command = build_loadgen_command(in);
    ASSERT_GE(command.argv.size(), user.size());
    EXPECT_TRUE(std::equal(user.begin(), user.end(), command.argv.end() - user.size()))
        << user.front();
    EXPECT_EQ(std::count(command.argv.begin(), command.argv.end(), "tpcb-like"), 0) << user.front();
    EXPECT_EQ(std::count(command.argv.begin(), command.argv.end(), "/runs/r1/workload.pgbench"), 0)
        << user.front();
    EXPECT_EQ(command.argv[1], "-P") << user.front();
  }
  // Without a script option of theirs, the workload's builtin comes first as before.
  EXPECT_EQ(build_loadgen_command(inputs({"-M", "prepared"})).argv[1], "-b");
}

TEST(BuildLoadgenCommand, TheUsersProgressIntervalIsKeptAndBecomesTheTimelines) {
  const auto command = build_loadgen_command(inputs({"--progress=5", "-c", "4"}));
  EXPECT_EQ(std::count(command.argv.begin(), command.argv.end(), "-P"), 0);
  EXPECT_EQ(command.interval, base::Seconds(5));
  EXPECT_EQ(command.clients, 4);
  EXPECT_EQ(command.threads, 1);
}

TEST(BuildLoadgenCommand, TheUsersOwnLogIsReadWhereTheyPutItAndAggregatesAreNotRead) {
  const auto own = build_loadgen_command(inputs({"-l", "--log-prefix=/tmp/mine"}));
  EXPECT_FALSE(own.transaction_log_added);
  EXPECT_EQ(own.transaction_log_prefix, "/tmp/mine");
  EXPECT_EQ(std::count(own.argv.begin(), own.argv.end(), "--log-prefix=/runs/r1/pgbench_log"), 0);

  const auto aggregated = build_loadgen_command(inputs({"-l", "--aggregate-interval=10"}));
  EXPECT_FALSE(aggregated.transaction_log_added);
  EXPECT_TRUE(aggregated.transaction_log_prefix.empty());
}

TEST(BuildLoadgenCommand, ThePasswordGoesToTheEnvironmentNeverToArgv) {
  const auto command =
      build_loadgen_command(inputs({"-c", "2"}, "host=db dbname=bench password=Secret9"));
  for (const auto& arg : command.argv) EXPECT_EQ(arg.find("Secret9"), std::string::npos) << arg;
  for (const auto& arg : command.display_argv) {
    EXPECT_EQ(arg.find("Secret9"), std::string::npos) << arg;
  }
  EXPECT_EQ(command.environment, Args{"PGPASSWORD=Secret9"});
  EXPECT_EQ(command.display_argv.back(), "host=db password=********");
  EXPECT_NE(command.argv.back().find("host=db"), std::string::npos);
}

TEST(DescribeLoadgenFailure, TheFirstErrorNotTheHintAndTheSignal) {
  EXPECT_EQ(
      describe_loadgen_failure(1,
                               "pgbench: error: invalid number of clients: \"x\"\n"
                               "pgbench: hint: Try \"pgbench --help\" for more information.\n"),
      "pgbench exited with code 1: pgbench: error: invalid number of clients: \"x\"");
  EXPECT_EQ(describe_loadgen_failure(137, ""), "pgbench was killed by signal 9 (SIGKILL)");
}

}  // namespace
}  // namespace pgwaitprof::loadgen
