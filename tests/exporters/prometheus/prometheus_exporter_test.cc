// Metric families built from TargetMetrics: DESIGN.md's names, labels and units, cumulative
// histogram buckets, and the config's constant labels on every series.
#include "exporters/prometheus/prometheus_exporter.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

namespace pgwaitprof::exporters {
namespace {

std::shared_ptr<const model::TargetMetrics> sample_target() {
  auto target = std::make_shared<model::TargetMetrics>();
  target->target = "db1";
  target->labels = {{"cluster", "bench"}};
  target->up = true;
  target->snapshots = 1000;
  target->missed_ticks = 3;
  target->hidden_backends = 2;
  target->wait_samples[{"client backend", "active", "LWLock", "WALWrite"}] = 250;
  target->wait_samples[{"client backend", "active", "CPU", "CPU"}] = 750;
  model::Histogram waits(model::wait_duration_buckets());
  waits.observe(base::Seconds(0.0007));
  waits.observe(base::Seconds(0.003));
  target->wait_durations[{"LWLock", "WALWrite"}] = waits;
  target->snapshot_durations.observe(base::Seconds(0.0002));
  target->collectors["activity"] = {base::Seconds(0.0002), true};
  target->run = model::ActiveRun{"r1", "tpcb", 1234.5, base::Seconds(0.002)};
  return target;
}

TEST(PrometheusFamilies, NamesAndTypesFollowTheContract) {
  const auto families = build_metric_families({sample_target()});
  std::map<std::string, prometheus::MetricType> types;
  for (const auto& family : families) types[family.name] = family.type;
  const std::map<std::string, prometheus::MetricType> expected = {
      {"pgwaitprof_snapshots_total", prometheus::MetricType::Counter},
      {"pgwaitprof_wait_samples_total", prometheus::MetricType::Counter},
      {"pgwaitprof_wait_duration_seconds", prometheus::MetricType::Histogram},
      {"pgwaitprof_snapshot_duration_seconds", prometheus::MetricType::Histogram},
      {"pgwaitprof_missed_ticks_total", prometheus::MetricType::Counter},
      {"pgwaitprof_up", prometheus::MetricType::Gauge},
      {"pgwaitprof_hidden_backends", prometheus::MetricType::Gauge},
      {"pgwaitprof_run_active", prometheus::MetricType::Gauge},
      {"pgwaitprof_loadgen_tps", prometheus::MetricType::Gauge},
      {"pgwaitprof_loadgen_latency_seconds", prometheus::MetricType::Gauge},
      {"pgwaitprof_collector_duration_seconds", prometheus::MetricType::Gauge},
      {"pgwaitprof_collector_success", prometheus::MetricType::Gauge},
      {"pgwaitprof_sampler_info", prometheus::MetricType::Gauge}};
  EXPECT_EQ(types, expected);
  for (const auto& [name, type] : types) {
    EXPECT_EQ(name.ends_with("_total"), type == prometheus::MetricType::Counter) << name;
  }
}

TEST(PrometheusFamilies, ExpositionHasLabelsBucketsAndConstantLabels) {
  const std::string text =
      prometheus::TextSerializer().Serialize(build_metric_families({sample_target()}));
  EXPECT_NE(text.find("pgwaitprof_wait_samples_total{target=\"db1\",backend_type=\"client "
                      "backend\",state=\"active\","
                      "wait_event_type=\"LWLock\",wait_event=\"WALWrite\",cluster=\"bench\"} 250"),
            std::string::npos)
      << text;
  // Buckets are cumulative: 0.7 ms falls in le=0.001, 3 ms in le=0.005 and above.
  EXPECT_NE(
      text.find("pgwaitprof_wait_duration_seconds_bucket{target=\"db1\",wait_event_type=\"LWLock\","
                "wait_event=\"WALWrite\",cluster=\"bench\",le=\"0.001\"} 1"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("le=\"0.005\"} 2"), std::string::npos);
  EXPECT_NE(text.find("le=\"+Inf\"} 2"), std::string::npos);
  EXPECT_NE(text.find("pgwaitprof_run_active{target=\"db1\",run_id=\"r1\",workload=\"tpcb\","
                      "cluster=\"bench\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("pgwaitprof_loadgen_latency_seconds{target=\"db1\",cluster=\"bench\"} 0.002"),
            std::string::npos);
  EXPECT_EQ(text.find("pid"), std::string::npos);
}

TEST(PrometheusFamilies, NoRunMeansNoRunSeries) {
  auto target = std::make_shared<model::TargetMetrics>(*sample_target());
  target->run.reset();
  const std::string text = prometheus::TextSerializer().Serialize(build_metric_families({target}));
  EXPECT_EQ(text.find("pgwaitprof_run_active{"), std::string::npos);
  EXPECT_EQ(text.find("pgwaitprof_loadgen_tps{"), std::string::npos);
}

TEST(PrometheusFamilies, CollectNeverThrows) {
  TargetCollectable collectable([]() -> TargetMetricsList { throw std::runtime_error("boom"); });
  EXPECT_NO_THROW({ EXPECT_TRUE(collectable.Collect().empty()); });
}

}  // namespace
}  // namespace pgwaitprof::exporters
