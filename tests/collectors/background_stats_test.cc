// The background query names the checkpoint counter of each major: pg_stat_bgwriter before 17,
// pg_stat_checkpointer from 17 (num_done from 18, where num_timed counts skipped checkpoints).
// The queries themselves run against real 13-18 servers in the version matrix.
#include "collectors/background_stats.h"

#include <gtest/gtest.h>

namespace pgwaitprof::collectors {
namespace {

TEST(BackgroundQuery, TheCheckpointCounterComesFromEachMajorsOwnView) {
  for (const int version : {130023, 150018, 160014}) {
    const auto query = background_query(version);
    EXPECT_NE(query.find("checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"),
              std::string::npos)
        << version;
    EXPECT_EQ(query.find("pg_stat_checkpointer"), std::string::npos) << version;
  }
  const auto v17 = background_query(170010);
  EXPECT_NE(v17.find("num_timed + num_requested FROM pg_stat_checkpointer"), std::string::npos);
  EXPECT_EQ(v17.find("pg_stat_bgwriter"), std::string::npos);
  const auto v18 = background_query(180004);
  EXPECT_NE(v18.find("num_done FROM pg_stat_checkpointer"), std::string::npos);
  EXPECT_EQ(v18.find("num_timed"), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::collectors
