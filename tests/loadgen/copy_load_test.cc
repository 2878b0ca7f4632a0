// The copy workload's rows and script.
#include "loadgen/copy_load.h"

#include <gtest/gtest.h>

#include "model/workloads.h"

namespace pgwaitprof::loadgen {
namespace {

TEST(CopyLoad, RowsAreThoseOfPgbenchAccounts) {
  const std::string filler(84, ' ');
  EXPECT_EQ(loadgen::account_rows(1, 2), "1\t1\t0\t" + filler + "\n2\t1\t0\t" + filler + "\n");
  // aid 100001 is the first account of branch 2.
  EXPECT_EQ(loadgen::account_rows(100000, 2),
            "100000\t1\t0\t" + filler + "\n100001\t2\t0\t" + filler + "\n");
  EXPECT_EQ(loadgen::account_rows(5, 0), "");
}

TEST(CopyLoad, LocalScriptCopiesTheScalesFileIntoTheUnindexedTable) {
  EXPECT_EQ(loadgen::copy_file_name(10), "pgwaitprof_accounts_s10.copy");
  const auto script = loadgen::copy_script("/srv/pg data/pgwaitprof_accounts_s10.copy");
  EXPECT_NE(script.find("COPY pgwaitprof_copy_accounts FROM "
                        "'/srv/pg data/pgwaitprof_accounts_s10.copy';"),
            std::string::npos)
      << script;
  const auto* copy = model::find_workload("copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(copy->fixed_work);
  EXPECT_TRUE(copy->copy);
  EXPECT_EQ(copy->builtin_args, (std::vector<std::string>{"-n", "-t", "1"}));
  ASSERT_NE(model::find_workload("tpcb-fewer-accounts"), nullptr);
}

}  // namespace
}  // namespace pgwaitprof::loadgen
