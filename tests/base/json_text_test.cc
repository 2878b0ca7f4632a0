// JSON text that a label or a server's string cannot make unwritable.
#include "base/json_text.h"

#include <gtest/gtest.h>

namespace pgwaitprof::base {
namespace {

TEST(JsonText, InvalidUtf8IsReplacedNotThrownAndControlCharactersEscaped) {
  const nlohmann::json value = {{"label", std::string("a\xff"
                                                      "b\n\x01")}};
  EXPECT_EQ(json_text(value),
            "{\"label\":\"a\xef\xbf\xbd"
            "b\\n\\u0001\"}");
  EXPECT_EQ(json_text(nlohmann::json::array({1, 2}), 2), "[\n  1,\n  2\n]");
}

}  // namespace
}  // namespace pgwaitprof::base
