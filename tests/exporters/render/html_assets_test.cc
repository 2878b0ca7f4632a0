// The inlined assets of the HTML pages: what the build embedded, and JSON made safe to sit in a
// <script> element.
#include "exporters/render/html_assets.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tests/exporters/render/fixtures.h"

namespace pgwaitprof::exporters::html_assets {
namespace {

TEST(HtmlAssets, EmbedsEveryFileAsInTheSourceTree) {
  for (const auto& [name, path] : std::vector<std::pair<std::string, std::string>>{
           {"uPlot.iife.min.js", "exporters/render/vendor/uplot/uPlot.iife.min.js"},
           {"uPlot.min.css", "exporters/render/vendor/uplot/uPlot.min.css"},
           {"LICENSE", "exporters/render/vendor/uplot/LICENSE"},
           {"charts.js", "exporters/render/web/charts.js"},
           {"charts.css", "exporters/render/web/charts.css"},
           {"record_errors.js", "exporters/render/web/record_errors.js"}}) {
    EXPECT_EQ(asset(name), test_fixtures::source_file(path)) << name;
  }
  EXPECT_THROW(asset("missing.js"), std::out_of_range);
  // The vendored release, as exporters/render/vendor/uplot/README.md says.
  EXPECT_TRUE(
      asset("uPlot.iife.min.js").starts_with("/*! https://github.com/leeoniya/uPlot (v1.6.32) */"));
}

TEST(HtmlAssets, HeadRecordsErrorsBeforeAnyOtherScript) {
  const std::string head = head_assets();
  EXPECT_EQ(head.find("<script>"), head.find("<script>" + std::string(asset("record_errors.js"))));
  EXPECT_NE(head.find(".uplot"), std::string::npos);  // uPlot's styles, not its script
  EXPECT_EQ(head.find("var uPlot"), std::string::npos);
  const std::string body = body_scripts();
  EXPECT_LT(body.find("Copyright (c) 2022 Leon Sorokin"), body.find("var uPlot="));
  EXPECT_LT(body.find("var uPlot="), body.find("var pgwaitprof"));
}

TEST(HtmlAssets, ScriptSafeJsonHasNoMarkupAndParsesTheSame) {
  const nlohmann::json document = {{"wait", "</script><script>alert(1)</script><!-- & -->"},
                                   {"values", {1.5, nullptr}}};
  const std::string safe = script_safe_json(document.dump());
  EXPECT_EQ(safe.find_first_of("<>&"), std::string::npos) << safe;
  EXPECT_EQ(nlohmann::json::parse(safe), document);
}

}  // namespace
}  // namespace pgwaitprof::exporters::html_assets
