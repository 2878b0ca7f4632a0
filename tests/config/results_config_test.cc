// The daemon configuration's results database: `results: {dsn: ...}`.
#include <gtest/gtest.h>

#include "config/daemon_config.h"

namespace pgwaitprof::config {
namespace {

TEST(ResultsConfig, ReadsTheDsnAndDefaultsToNone) {
  EXPECT_EQ(parse_config("targets: [{}]\n", "p.yaml").results.dsn, "");
  const auto config =
      parse_config("targets: [{}]\nresults:\n  dsn: \"host=db1 dbname=results\"\n", "p.yaml");
  EXPECT_EQ(config.results.dsn, "host=db1 dbname=results");
}

TEST(ResultsConfig, RejectsUnknownKeysAndEmptyDsn) {
  EXPECT_THROW(parse_config("targets: [{}]\nresults:\n  url: x\n", "p.yaml"), ConfigError);
  EXPECT_THROW(parse_config("targets: [{}]\nresults:\n  dsn: \"\"\n", "p.yaml"), ConfigError);
  EXPECT_THROW(parse_config("targets: [{}]\nresults: x\n", "p.yaml"), ConfigError);
}

}  // namespace
}  // namespace pgwaitprof::config
