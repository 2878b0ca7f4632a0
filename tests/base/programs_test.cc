// Finding the programs pgwaitprof runs, and saying how one ended.
#include "base/programs.h"

#include <gtest/gtest.h>

#include <csignal>

namespace pgwaitprof::base {
namespace {

TEST(FindExecutable, OnThePathAsGivenWithASlashAndNothingWhenMissing) {
  EXPECT_FALSE(find_executable("sh").empty());
  EXPECT_EQ(find_executable("/bin/sh"), "/bin/sh");
  EXPECT_EQ(find_executable("/nonexistent/pgbench"), "");
  EXPECT_EQ(find_executable("pgwaitprof-no-such-program"), "");
}

TEST(DescribeExit, ACodeOrTheSignalByName) {
  EXPECT_EQ(describe_exit(0), "exited with code 0");
  EXPECT_EQ(describe_exit(3), "exited with code 3");
  EXPECT_EQ(describe_exit(128 + SIGKILL), "was killed by signal 9 (SIGKILL)");
  EXPECT_EQ(describe_exit(128 + SIGPIPE), "was killed by signal 13 (SIGPIPE)");
}

}  // namespace
}  // namespace pgwaitprof::base
