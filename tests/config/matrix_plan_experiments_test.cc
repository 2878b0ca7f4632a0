// The plan keys of the classic experiments (metric, transactions, checkpoint_after, split_by,
// a variant's workload), the overrides that shorten a plan, and the ready plans themselves.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/matrix_plan.h"

namespace pgwaitprof::config {
namespace {

namespace fs = std::filesystem;

std::string plan_error(const std::string& yaml) {
  try {
    parse_matrix_plan(yaml, "p.yaml");
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError was thrown";
  return "";
}

TEST(MatrixPlanExperiments, FixedWorkWorkloadsAreMeasuredByDuration) {
  const auto copy = parse_matrix_plan("workload: copy\nclients: [1, 4]\n", "c.yaml");
  EXPECT_TRUE(fixed_work(copy));
  EXPECT_EQ(copy.metric, model::Metric::kDuration);
  const auto tpcb = parse_matrix_plan("workload: tpcb\n", "t.yaml");
  EXPECT_FALSE(fixed_work(tpcb));
  EXPECT_EQ(tpcb.metric, model::Metric::kTps);
  const auto counted = parse_matrix_plan("transactions: 500\n", "t.yaml");
  EXPECT_TRUE(fixed_work(counted));
  EXPECT_EQ(counted.transactions, 500);
  EXPECT_EQ(counted.metric, model::Metric::kDuration);
  // A fixed-work plan may still be tabled by tps.
  EXPECT_EQ(parse_matrix_plan("transactions: 5\nmetric: tps\n", "t.yaml").metric,
            model::Metric::kTps);
}

TEST(MatrixPlanExperiments, DurationNeedsFixedWork) {
  EXPECT_EQ(plan_error("metric: duration\n"),
            "p.yaml:1:9: invalid value for \"metric\": \"duration\" (\"duration\" needs runs that "
            "end when their work is done: set \"transactions\" or a fixed-work workload such as "
            "\"copy\")");
  EXPECT_NE(plan_error("metric: rows\n").find("\"metric\""), std::string::npos);
  EXPECT_NE(plan_error("transactions: 0\n").find("\"transactions\""), std::string::npos);
}

TEST(MatrixPlanExperiments, SourceIsChosenPerPlan) {
  EXPECT_EQ(parse_matrix_plan("hz: 10000\nsource: memory\n", "m.yaml").source,
            model::SamplerSource::kMemory);
  EXPECT_EQ(parse_matrix_plan("clients: [1]\n", "a.yaml").source, model::SamplerSource::kAuto);
  EXPECT_NE(plan_error("source: psql\n").find("\"source\""), std::string::npos);
  EXPECT_NE(plan_error("hz: 100\nsource: pg_wait_sampling\n").find("its own"), std::string::npos);
}

TEST(MatrixPlanExperiments, CheckpointAfterSplitByAndVariantWorkloads) {
  const auto plan = parse_matrix_plan(
      "checkpoint_after: true\nsplit_by: kernel\nvariants:\n  - name: a\n  - name: b\n"
      "    workload: tpcb-func\n",
      "p.yaml");
  EXPECT_TRUE(plan.checkpoint_after);
  EXPECT_EQ(plan.split_by, "kernel");
  ASSERT_EQ(plan.variants.size(), 2u);
  EXPECT_EQ(plan.variants[0].workload, "");
  EXPECT_EQ(plan.variants[1].workload, "tpcb-func");
  EXPECT_NE(plan_error("split_by: hostname\n").find("\"split_by\""), std::string::npos);
  EXPECT_NE(plan_error("variants:\n  - name: a\n    workload: nope\n").find("\"workload\""),
            std::string::npos);
}

TEST(MatrixPlanExperiments, OverridesShortenAPlan) {
  auto plan = parse_matrix_plan(
      "clients: [1, 8, 16, 64]\nrepeats: 10\nduration: 5m\nscale: 100\nwarmup: 10s\n", "p.yaml");
  apply_overrides(plan, {std::nullopt, std::nullopt, std::nullopt, true});
  EXPECT_EQ(plan.clients, (std::vector<int>{1, 64}));
  EXPECT_EQ(plan.repeats, 1);
  EXPECT_EQ(plan.duration, std::chrono::seconds(5));
  EXPECT_EQ(plan.scale, 2);
  EXPECT_EQ(plan.warmup, std::chrono::seconds(0));
  apply_overrides(plan, {3, 2, 1, false});
  EXPECT_EQ(plan.duration, std::chrono::seconds(3));
  EXPECT_EQ(plan.repeats, 2);
  EXPECT_EQ(plan.scale, 1);
}

// Every ready plan loads, and says which thread it reproduces, what it measures and which
// figure answers the thread's question.
TEST(MatrixPlanExperiments, ReadyPlansLoadWithTheirHeader) {
  const fs::path dir = fs::path(PGWAITPROF_SOURCE_DIR) / "config" / "plans";
  int plans = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++plans;
    const auto plan = load_matrix_plan(entry.path());
    EXPECT_EQ(plan.name, entry.path().stem().string());
    std::ifstream file(entry.path());
    std::stringstream text;
    text << file.rdbuf();
    const auto content = text.str();
    EXPECT_TRUE(content.starts_with("# " + plan.name + ":")) << entry.path();
    for (const char* part : {"Reproduces:", "Measures:", "The answer:", "shared/context/"}) {
      EXPECT_NE(content.find(part), std::string::npos) << entry.path() << " lacks " << part;
    }
  }
  EXPECT_GE(plans, 4);
  EXPECT_EQ(load_matrix_plan(dir / "flush-after.yaml").metric, model::Metric::kDuration);
  EXPECT_TRUE(load_matrix_plan(dir / "flush-after.yaml").checkpoint_after);
  EXPECT_EQ(load_matrix_plan(dir / "clients-sweep.yaml").repeats, 10);
}

}  // namespace
}  // namespace pgwaitprof::config
