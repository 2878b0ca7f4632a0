// cpu_profile in a daemon target and a matrix plan (issue 43): true is the default rate, a
// number is a rate of 1-999 Hz, false or no key is none; anything else is one error that names
// the key.
#include <gtest/gtest.h>

#include "config/daemon_config.h"
#include "config/matrix_plan.h"
#include "config/numbers.h"
#include "tests/config/config_fixture.h"

namespace pgwaitprof::config {
namespace {

using test_support::error_of;

int target_hz(const std::string& value) {
  return parse_config("targets:\n  - cpu_profile: " + value + "\n", "p.yaml")
      .targets.at(0)
      .cpu_profile_hz;
}

int plan_hz(const std::string& value) {
  return parse_matrix_plan("cpu_profile: " + value + "\n", "p.yaml").cpu_profile_hz;
}

TEST(CpuProfileConfig, TargetsTakeTrueFalseOrARate) {
  EXPECT_EQ(parse_config("targets: [{}]\n", "p.yaml").targets.at(0).cpu_profile_hz, 0);
  EXPECT_EQ(target_hz("true"), kDefaultCpuProfileHz);
  EXPECT_EQ(target_hz("false"), 0);
  EXPECT_EQ(target_hz("499"), 499);
  const auto error = error_of([] { target_hz("1000"); });
  EXPECT_NE(error.find("\"cpu_profile\""), std::string::npos) << error;
  EXPECT_NE(error_of([] { target_hz("fast"); }).find("\"cpu_profile\""), std::string::npos);
}

TEST(CpuProfileConfig, PlansTakeTrueFalseOrARate) {
  EXPECT_EQ(parse_matrix_plan("name: x\n", "p.yaml").cpu_profile_hz, 0);
  EXPECT_EQ(plan_hz("true"), kDefaultCpuProfileHz);
  EXPECT_EQ(plan_hz("off"), 0);
  EXPECT_EQ(plan_hz("1"), 1);
  EXPECT_NE(error_of([] { plan_hz("0"); }).find("\"cpu_profile\""), std::string::npos);
  EXPECT_NE(error_of([] { plan_hz("\"99\""); }).find("\"cpu_profile\""), std::string::npos);
}

}  // namespace
}  // namespace pgwaitprof::config
