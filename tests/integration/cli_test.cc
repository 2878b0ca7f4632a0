// Commands that need no server: explain.
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

TEST(ExplainCommand, OldAndNewNamesAndUnknownOnes) {
  auto old_name = engine::run_command({pgwaitprof_binary(), "explain", "WALWriteLock"});
  EXPECT_EQ(old_name.exit_code, 0) << old_name.output;
  EXPECT_TRUE(old_name.output.starts_with("LWLock | WALWrite\n")) << old_name.output;
  EXPECT_NE(old_name.output.find("old name"), std::string::npos);
  EXPECT_NE(old_name.output.find("Usual causes and what helps:"), std::string::npos);

  auto both = engine::run_command({pgwaitprof_binary(), "explain", "walwrite"});
  EXPECT_EQ(both.exit_code, 0);
  EXPECT_NE(both.output.find("LWLock | WALWrite"), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("IO | WalWrite"), std::string::npos) << both.output;

  auto unknown = engine::run_command({pgwaitprof_binary(), "explain", "NoSuchWait"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("pgwaitprof: unknown wait event \"NoSuchWait\""), std::string::npos)
      << unknown.output;
}

}  // namespace
}  // namespace pgwaitprof::testing
