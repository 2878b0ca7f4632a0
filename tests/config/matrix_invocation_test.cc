// A matrix's saved invocation (issue 47 item 3): its round trip through invocation.yaml, the plan
// a resume runs, and the options a resume refuses.
#include "config/matrix_invocation.h"

#include <gtest/gtest.h>

namespace pgwaitprof::config {
namespace {

MatrixPlan six_second_plan() {
  return parse_matrix_plan(
      "name: p\nscale: 10\nclients: [1, 4, 16]\nduration: 6\nrepeats: 3\n"
      "variants:\n  - name: a\n    settings: {work_mem: 8MB}\n",
      "plan.yaml");
}

TEST(MatrixInvocation, RoundTripsThroughItsFile) {
  const MatrixInvocation saved{{3, std::nullopt, 2, true}, "host=db1 port=5433 user=\"a b\""};
  const auto text = invocation_yaml(saved);
  const auto read = parse_invocation(text, "invocation.yaml");
  EXPECT_EQ(read.overrides.duration_s, 3);
  EXPECT_EQ(read.overrides.repeats, std::nullopt);
  EXPECT_EQ(read.overrides.scale, 2);
  EXPECT_TRUE(read.overrides.quick);
  EXPECT_EQ(read.target, saved.target);
}

TEST(MatrixInvocation, AResumeRunsWithTheSavedOptionsAndTarget) {
  const MatrixInvocation saved{{3, std::nullopt, std::nullopt, false}, "host=db1"};
  const auto plan = resumed_plan(six_second_plan(), saved, {});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->duration, std::chrono::seconds(3));
  EXPECT_EQ(plan->repeats, 3);
  EXPECT_EQ(plan->target, "host=db1");
}

TEST(MatrixInvocation, OptionsGivenAsSavedAreAccepted) {
  const MatrixInvocation saved{{3, std::nullopt, std::nullopt, true}, "host=db1"};
  const MatrixInvocation again{{3, std::nullopt, std::nullopt, true}, "host=db1"};
  const auto plan = resumed_plan(six_second_plan(), saved, again);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->duration, std::chrono::seconds(3));
  EXPECT_EQ(plan->clients, (std::vector<int>{1, 16}));
}

TEST(MatrixInvocation, ContradictingOptionsAreRefusedInOneLine) {
  const MatrixInvocation saved{{3, std::nullopt, std::nullopt, false}, "host=db1"};
  const std::pair<MatrixInvocation, std::string> cases[] = {
      {{{6, std::nullopt, std::nullopt, false}, std::nullopt},
       "--duration 6 contradicts the matrix's 3 s runs"},
      {{{std::nullopt, 1, std::nullopt, false}, std::nullopt},
       "--repeats 1 contradicts the matrix's 3 repeat(s)"},
      {{{std::nullopt, std::nullopt, 50, false}, std::nullopt},
       "--scale 50 contradicts the matrix's scale 10"},
      {{{std::nullopt, std::nullopt, std::nullopt, true}, std::nullopt},
       "--quick contradicts the matrix, which was not started with it"},
      {{{}, "host=db2"}, "--target \"host=db2\" contradicts the matrix's target \"host=db1\""},
  };
  for (const auto& [given, expected] : cases) {
    const auto plan = resumed_plan(six_second_plan(), saved, given);
    ASSERT_FALSE(plan.ok()) << expected;
    EXPECT_EQ(plan.error().message, expected);
  }
  const MatrixInvocation scratch{{}, ""};
  const auto plan = resumed_plan(six_second_plan(), scratch, {{}, "host=db1"});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message, "--target \"host=db1\" contradicts the matrix's scratch cluster");
}

}  // namespace
}  // namespace pgwaitprof::config
