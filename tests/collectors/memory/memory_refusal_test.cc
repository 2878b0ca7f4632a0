// The memory source's refusal as auto's reason for sampling pg_stat_activity: the hint to use the
// activity source goes, what would let the memory source read the server stays, and no word is
// cut (the rights hint ends with the activity hint, which used to leave "CAP_SYS_PTRACE, o").
#include "collectors/memory/memory_refusal.h"

#include <gtest/gtest.h>

namespace pgwaitprof::collectors::memory {
namespace {

TEST(MemoryRefusal, TheReasonKeepsTheRightsAndCutsNoWord) {
  const auto message = refused("could not read \"/proc/4242/exe\"", kNeedRights).message;
  EXPECT_EQ(message,
            "memory source refused: could not read \"/proc/4242/exe\"; run as root, as the "
            "server's OS user or with CAP_SYS_PTRACE, or use --source activity");
  EXPECT_EQ(refusal_reason(message),
            "could not read \"/proc/4242/exe\"; run as root, as the server's OS user or with "
            "CAP_SYS_PTRACE");
}

TEST(MemoryRefusal, TheActivityHintGoesAndPgMonitorStays) {
  EXPECT_EQ(refusal_reason(missing_layout_message(12)),
            "PostgreSQL 12 has no shared-memory layout in this build (13 to 19 have)");
  EXPECT_EQ(
      refusal_reason(refused("permission denied for function pg_ls_dir", kNeedPgMonitor).message),
      "permission denied for function pg_ls_dir; the sampling role needs pg_monitor");
  // A message of another shape is kept whole.
  EXPECT_EQ(refusal_reason("the server is on another host"), "the server is on another host");
}

}  // namespace
}  // namespace pgwaitprof::collectors::memory
