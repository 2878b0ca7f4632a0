// Metric families built from TargetMetrics: DESIGN.md's names, labels and units, cumulative
// histogram buckets, the config's constant labels on every series, and a traced target's own
// series (time, waits, exact durations) instead of samples.
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

// A target of the traced source: its wait keys' time, waits and their durations.
std::shared_ptr<const model::TargetMetrics> traced_target() {
  auto target = std::make_shared<model::TargetMetrics>();
  target->target = "db1";
  target->labels = {{"cluster", "bench"}};
  target->source = target->requested = model::SamplerSource::kTrace;
  target->up = true;
  // Three pg_sleep(0.2) waits of an active session and two of one idle in transaction: one
  // histogram of five; the idle one's run-queue time is 0 and has no series.
  model::TracedTime sleeps;
  const int bucket_200ms = 1 + (27 - model::kTracedFirstPower) * model::kTracedPerPower + 1;
  sleeps.waits = 3, sleeps.blocked_s = 0.625, sleeps.ended_blocked_s = 0.625,
  sleeps.runqueue_s = 0.0004;
  sleeps.histogram[bucket_200ms] = 3;
  target->traced[{"client backend", "active", "Timeout", "PgSleep"}] = sleeps;
  sleeps.waits = 2, sleeps.blocked_s = 0.375, sleeps.ended_blocked_s = 0.375, sleeps.runqueue_s = 0;
  sleeps.histogram[bucket_200ms] = 2;
  target->traced[{"client backend", "idle in transaction", "Timeout", "PgSleep"}] = sleeps;
  // On a CPU only: time, no waits, no histogram.
  model::TracedTime cpu;
  cpu.on_cpu_s = 1.5;
  target->traced[{"client backend", "active", "CPU", "CPU"}] = cpu;
  // A background worker whose name needs escaping.
  model::TracedTime odd;
  odd.waits = 1, odd.blocked_s = 0.000001, odd.ended_blocked_s = 0.000001, odd.histogram[0] = 1;
  target->traced[{"my \"odd\"\\worker", "background", "Extension", "Extension"}] = odd;
  return target;
}

TEST(PrometheusFamilies, ATracedTargetExportsTimeWaitsAndDurationsNotSamples) {
  const std::string text =
      prometheus::TextSerializer().Serialize(build_metric_families({traced_target()}));
  // Microseconds are not samples, nor wall-clock microseconds snapshots.
  EXPECT_EQ(text.find("pgwaitprof_wait_samples_total{"), std::string::npos) << text;
  EXPECT_EQ(text.find("pgwaitprof_snapshots_total{"), std::string::npos) << text;
  const std::string sleep =
      "target=\"db1\",backend_type=\"client backend\",state=\"active\",wait_event_type="
      "\"Timeout\",wait_event=\"PgSleep\"";
  EXPECT_NE(text.find("pgwaitprof_wait_seconds_total{" + sleep +
                      ",part=\"blocked\",cluster=\"bench\"} 0.625\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pgwaitprof_wait_seconds_total{" + sleep +
                      ",part=\"runqueue\",cluster=\"bench\"} 0.0004\n"),
            std::string::npos);
  EXPECT_EQ(text.find("pgwaitprof_wait_seconds_total{" + sleep + ",part=\"on_cpu\""),
            std::string::npos);
  EXPECT_EQ(text.find("state=\"idle in transaction\",wait_event_type=\"Timeout\",wait_event="
                      "\"PgSleep\",part=\"runqueue\""),
            std::string::npos);
  EXPECT_NE(text.find("pgwaitprof_waits_total{" + sleep + ",cluster=\"bench\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("pgwaitprof_wait_seconds_total{target=\"db1\",backend_type=\"client "
                      "backend\",state=\"active\",wait_event_type=\"CPU\",wait_event=\"CPU\","
                      "part=\"on_cpu\",cluster=\"bench\"} 1.5\n"),
            std::string::npos);
  EXPECT_EQ(text.find("pgwaitprof_waits_total{target=\"db1\",backend_type=\"client "
                      "backend\",state=\"active\",wait_event_type=\"CPU\""),
            std::string::npos);
  // One histogram per backend type and wait event, the states' waits together, in buckets of
  // powers of two nanoseconds: 200 ms lies between 2^27 and 2^28 ns.
  const std::string histogram =
      "pgwaitprof_wait_duration_seconds_bucket{target=\"db1\",backend_type=\"client "
      "backend\",wait_event_type=\"Timeout\",wait_event=\"PgSleep\",cluster=\"bench\",";
  EXPECT_NE(text.find(histogram + "le=\"1.024e-06\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find(histogram + "le=\"0.134217728\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find(histogram + "le=\"0.268435456\"} 5\n"), std::string::npos);
  EXPECT_NE(text.find(histogram + "le=\"68.719476736\"} 5\n"), std::string::npos);
  EXPECT_NE(text.find(histogram + "le=\"+Inf\"} 5\n"), std::string::npos);
  EXPECT_NE(text.find("pgwaitprof_wait_duration_seconds_count{target=\"db1\",backend_type="
                      "\"client backend\",wait_event_type=\"Timeout\",wait_event=\"PgSleep\","
                      "cluster=\"bench\"} 5\n"),
            std::string::npos);
  EXPECT_NE(text.find("pgwaitprof_wait_duration_seconds_sum{target=\"db1\",backend_type="
                      "\"client backend\",wait_event_type=\"Timeout\",wait_event=\"PgSleep\","
                      "cluster=\"bench\"} 1\n"),
            std::string::npos);
  EXPECT_EQ(text.find("pgwaitprof_wait_duration_seconds_bucket{target=\"db1\",backend_type="
                      "\"client backend\",wait_event_type=\"CPU\""),
            std::string::npos);
  // Label values are escaped: quote and backslash.
  EXPECT_NE(text.find("pgwaitprof_waits_total{target=\"db1\",backend_type=\"my \\\"odd\\\""
                      "\\\\worker\",state=\"background\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("backend_type=\"my \\\"odd\\\"\\\\worker\",wait_event_type=\"Extension\","
                      "wait_event=\"Extension\",cluster=\"bench\",le=\"1.024e-06\"} 1\n"),
            std::string::npos);
  // 28 buckets per histogram (27 bounds and +Inf).
  size_t buckets = 0;
  for (size_t at = text.find(histogram); at != std::string::npos;
       at = text.find(histogram, at + 1)) {
    ++buckets;
  }
  EXPECT_EQ(buckets, 28u);
}

// From the traced source's delta to the exposition: its microseconds reach no sample series.
TEST(PrometheusFamilies, ATracedProfileDeltaIsNotExportedAsSamples) {
  model::ContinuousProfile profile("db1", model::SamplerSource::kTrace, 1000);
  model::Profile delta;
  delta.add_snapshots(1'000'000);  // one second of wall-clock time, in microseconds
  const model::WaitKey key{"client backend", "active", "Timeout", "PgSleep"};
  model::TracedTime time;
  time.blocked_s = 0.6;
  time.ended_blocked_s = 0.6;
  time.waits = 3;
  time.histogram[1 + (27 - model::kTracedFirstPower) * model::kTracedPerPower + 1] = 3;
  delta.add(key, 600'000);
  delta.add_traced(key, time);
  profile.on_profile_delta(delta, model::SystemClock::now());
  const std::string text =
      prometheus::TextSerializer().Serialize(build_metric_families({profile.published()}));
  EXPECT_EQ(text.find("pgwaitprof_wait_samples_total{"), std::string::npos) << text;
  EXPECT_EQ(text.find("pgwaitprof_snapshots_total{"), std::string::npos) << text;
  EXPECT_NE(text.find("pgwaitprof_waits_total{target=\"db1\",backend_type=\"client backend\","
                      "state=\"active\",wait_event_type=\"Timeout\",wait_event=\"PgSleep\"} 3"),
            std::string::npos)
      << text;
}

TEST(PrometheusFamilies, CollectNeverThrows) {
  TargetCollectable collectable([]() -> TargetMetricsList { throw std::runtime_error("boom"); });
  EXPECT_NO_THROW({ EXPECT_TRUE(collectable.Collect().empty()); });
}

}  // namespace
}  // namespace pgwaitprof::exporters
