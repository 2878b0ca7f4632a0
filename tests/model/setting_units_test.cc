// The units of PostgreSQL's memory and time settings: finding one (block-sized units too) and
// showing a value as SHOW does.
#include "model/setting_units.h"

#include <gtest/gtest.h>

namespace pgwaitprof::model {
namespace {

TEST(SettingUnits, NamedAndBlockSizedUnitsInTheBaseUnitOfTheirKind) {
  ASSERT_TRUE(find_setting_unit("kB"));
  EXPECT_EQ(find_setting_unit("kB")->factor, 1024);
  EXPECT_TRUE(find_setting_unit("kB")->memory);
  ASSERT_TRUE(find_setting_unit("8kB"));
  EXPECT_EQ(find_setting_unit("8kB")->factor, 8192);
  EXPECT_EQ(find_setting_unit("16MB")->factor, 16777216);
  EXPECT_EQ(find_setting_unit("min")->factor, 60000);
  EXPECT_FALSE(find_setting_unit("min")->memory);
  EXPECT_EQ(find_setting_unit("us")->factor, 0.001);
  EXPECT_FALSE(find_setting_unit("kb"));  // case matters, as for PostgreSQL
  EXPECT_FALSE(find_setting_unit(""));
  EXPECT_FALSE(find_setting_unit("8"));
}

TEST(SettingUnits, ShownAsShowWritesThem) {
  EXPECT_EQ(show_setting_value("16384", "8kB"), "128MB");  // shared_buffers
  EXPECT_EQ(show_setting_value("4096", "kB"), "4MB");      // work_mem
  EXPECT_EQ(show_setting_value("1000", "kB"), "");         // 1000kB as given
  EXPECT_EQ(show_setting_value("300", "s"), "5min");       // checkpoint_timeout
  EXPECT_EQ(show_setting_value("200", "ms"), "");          // as given
  EXPECT_EQ(show_setting_value("64", "16MB"), "1GB");      // max_wal_size in 15
  EXPECT_EQ(show_setting_value("-1", "ms"), "");           // disabled
  EXPECT_EQ(show_setting_value("0", "kB"), "");
  EXPECT_EQ(show_setting_value("on", ""), "");
  EXPECT_EQ(show_setting_value("12", ""), "");
  EXPECT_EQ(show_setting_value("1.5", "s"), "1500ms");
}

}  // namespace
}  // namespace pgwaitprof::model
