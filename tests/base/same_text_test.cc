#include "base/same_text.h"

#include <gtest/gtest.h>

#include <string>

namespace pgwaitprof::base {
namespace {

// Every length the word loads treat differently (0-3 bytewise, 4-7 in two halves, 8 and more in
// words with an overlapping last one), a difference at every position, and texts that share no
// storage or sit at odd addresses.
TEST(SameText, AgreesWithStringEqualityAtEveryLengthAndPosition) {
  for (size_t size = 0; size <= 40; ++size) {
    std::string a(size, 'x');
    for (size_t at = 0; at < size; ++at) a[at] = static_cast<char>('a' + at % 26);
    const std::string padded = "?" + a;
    const std::string_view b = std::string_view(padded).substr(1);
    EXPECT_TRUE(same_text(a, b)) << size;
    for (size_t at = 0; at < size; ++at) {
      std::string c = a;
      c[at] = '#';
      EXPECT_FALSE(same_text(a, c)) << size << " differs at " << at;
      EXPECT_FALSE(same_text(c, b)) << size << " differs at " << at;
    }
    EXPECT_FALSE(same_text(a, a + "y")) << size;
    EXPECT_FALSE(same_text(a + "y", a)) << size;
  }
  EXPECT_TRUE(same_text("", ""));
  EXPECT_TRUE(same_text("client backend", std::string("client backend")));
  EXPECT_FALSE(same_text("client backend", "client backenD"));
}

}  // namespace
}  // namespace pgwaitprof::base
