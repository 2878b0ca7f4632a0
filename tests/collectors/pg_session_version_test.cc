// version_text: libpq's version numbers as --version and reports print them.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include "collectors/pg_session.h"

namespace pgwaitprof::collectors {
namespace {

TEST(VersionTextTest, FromTenOnTwoParts) {
  EXPECT_EQ(version_text(150013), "15.13");
  EXPECT_EQ(version_text(100000), "10.0");
  EXPECT_EQ(version_text(170002), "17.2");
}

TEST(VersionTextTest, BeforeTenThreeParts) {
  EXPECT_EQ(version_text(90624), "9.6.24");
  EXPECT_EQ(version_text(90105), "9.1.5");
}

TEST(VersionTextTest, LibpqVersionIsTheLinkedLibrarys) {
  const int linked = PQlibVersion();
  EXPECT_EQ(libpq_version(), std::to_string(linked / 10000) + "." + std::to_string(linked % 10000));
}

}  // namespace
}  // namespace pgwaitprof::collectors
