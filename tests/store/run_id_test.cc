// Run ids the results database takes: the form make_run_id gives and the directory's name.
#include "store/run_id.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/run_directory.h"

namespace pgwaitprof::store {
namespace {

TEST(RunId, EveryIdMakeRunIdGivesIsValid) {
  for (const std::string& label :
       std::vector<std::string>{"", "readme", "before the patch", "-lead", "trail-", "a/b/../c",
                                "../../../tmp/evil", "ünïcode", std::string(100, 'x'),
                                std::string(39, 'y') + "-z", "\x1b[31mred", "under_score"}) {
    const auto id = make_run_id(label);
    EXPECT_TRUE(valid_run_id(id)) << label << " -> " << id;
  }
}

TEST(RunId, AnythingElseIsNot) {
  EXPECT_TRUE(valid_run_id("20261203-000000-0000"));
  EXPECT_TRUE(valid_run_id("20261129-215116-0b34-readme-c8"));
  for (const std::string& id : std::vector<std::string>{
           "", "../../../tmp/evil", "20261203-000000-0000/../../x", "20261203-000000-000",
           "20261203-000000-00000", "20261203-000000-ABCD", "20261203-000000-0000-",
           "20261203-000000-0000-a b", "20261203-000000-0000-" + std::string(41, 'x'), "queued",
           "20261203-000000-0000-x\n", "20261203-000000-0000-.."}) {
    EXPECT_FALSE(valid_run_id(id)) << id;
  }
}

TEST(RunId, ReportsIdMustBeItsDirectorysName) {
  EXPECT_FALSE(check_run_id("20261203-000000-0000", "/d/runs/20261203-000000-0000"));
  EXPECT_FALSE(check_run_id("20261203-000000-0000", "/d/runs/20261203-000000-0000/"));
  EXPECT_EQ(check_run_id("20261203-000000-0001", "/d/runs/20261203-000000-0000")->message,
            "run directory \"/d/runs/20261203-000000-0000\" holds run id "
            "\"20261203-000000-0001\", not its own name");
  EXPECT_EQ(check_run_id("../../../tmp/evil", "/d/runs/evil")->message,
            "run directory \"/d/runs/evil\" holds run id \"../../../tmp/evil\", not one "
            "pgwaitprof makes");
  // A matrix's run directories are named by cell.
  EXPECT_FALSE(check_run_id("20261205-151258-8578-tiny-default-c1-r1",
                            "/d/matrix/20261205-151258-956b-tiny/runs/default-c1-r1"));
  EXPECT_TRUE(check_run_id("../x", "/d/matrix/20261205-151258-956b-tiny/runs/default-c1-r1"));
  // A terminal escape in a forged id is written out, never sent.
  EXPECT_EQ(check_run_id("\x1b[2J", "/d/runs/x")->message.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::store
