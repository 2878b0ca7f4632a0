// Metric families from TargetMetrics snapshots.
#include "exporters/prometheus_exporter.h"

#include <prometheus/gauge.h>

#include "config/logging.h"

namespace pgwaitprof::exporters {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily family(const char* name, const char* help, MetricType type) {
  return MetricFamily{name, help, type, {}};
}

ClientMetric labelled(std::vector<prometheus::ClientMetric::Label> labels) {
  ClientMetric metric;
  metric.label = std::move(labels);
  return metric;
}

ClientMetric counter(std::vector<ClientMetric::Label> labels, double value) {
  auto metric = labelled(std::move(labels));
  metric.counter.value = value;
  return metric;
}

ClientMetric gauge(std::vector<ClientMetric::Label> labels, double value) {
  auto metric = labelled(std::move(labels));
  metric.gauge.value = value;
  return metric;
}

ClientMetric histogram(std::vector<ClientMetric::Label> labels, const model::Histogram& source) {
  auto metric = labelled(std::move(labels));
  metric.histogram.sample_count = source.count;
  metric.histogram.sample_sum = source.sum;
  uint64_t cumulative = 0;
  for (size_t bucket = 0; bucket < source.bucket_counts.size(); ++bucket) {
    cumulative += source.bucket_counts[bucket];
    const double bound = bucket < source.upper_bounds.size()
                             ? source.upper_bounds[bucket]
                             : std::numeric_limits<double>::infinity();
    metric.histogram.bucket.push_back({cumulative, bound});
  }
  return metric;
}

}  // namespace

std::vector<MetricFamily> build_metric_families(const TargetMetricsList& targets) {
  auto snapshots = family("pgwaitprof_snapshots_total",
                          "Snapshots of pg_stat_activity taken (or pg_wait_sampling periods read).",
                          MetricType::Counter);
  auto samples = family("pgwaitprof_wait_samples_total",
                        "Backends seen per wait key, summed over snapshots.", MetricType::Counter);
  auto durations = family("pgwaitprof_wait_duration_seconds",
                          "Estimated length of contiguous waits, from consecutive snapshots of one "
                          "backend.",
                          MetricType::Histogram);
  auto snapshot_durations = family("pgwaitprof_snapshot_duration_seconds",
                                   "Time the snapshot query took.", MetricType::Histogram);
  auto missed = family("pgwaitprof_missed_ticks_total",
                       "Ticks skipped because the previous snapshot was still running or the "
                       "target was down.",
                       MetricType::Counter);
  auto up = family("pgwaitprof_up", "1 when the target is connected and sampled.",
                   MetricType::Gauge);
  auto hidden = family("pgwaitprof_hidden_backends",
                       "Backends whose wait events the sampling role may not see.",
                       MetricType::Gauge);
  auto run_active = family("pgwaitprof_run_active", "1 while a benchmark run is active.",
                           MetricType::Gauge);
  auto tps = family("pgwaitprof_loadgen_tps",
                    "Load generator throughput in the latest progress interval.",
                    MetricType::Gauge);
  auto latency = family("pgwaitprof_loadgen_latency_seconds",
                        "Load generator average latency in the latest progress interval.",
                        MetricType::Gauge);
  auto collector_duration = family("pgwaitprof_collector_duration_seconds",
                                   "Duration of the latest collection per collector.",
                                   MetricType::Gauge);
  auto collector_success = family("pgwaitprof_collector_success",
                                  "1 when the latest collection per collector worked.",
                                  MetricType::Gauge);

  for (const auto& target : targets) {
    // Every series of a target: its name, the series' own labels, the config's constant labels.
    auto labels = [&](std::vector<ClientMetric::Label> own = {}) {
      own.insert(own.begin(), {"target", target->target});
      for (const auto& [name, value] : target->labels) own.push_back({name, value});
      return own;
    };
    snapshots.metric.push_back(counter(labels(), static_cast<double>(target->snapshots)));
    for (const auto& [key, count] : target->wait_samples) {
      samples.metric.push_back(counter(labels({{"backend_type", key.backend_type},
                                        {"state", key.state},
                                        {"wait_event_type", key.wait_event_type},
                                        {"wait_event", key.wait_event}}),
                                       static_cast<double>(count)));
    }
    for (const auto& [wait, values] : target->wait_durations) {
      durations.metric.push_back(histogram(
          labels({{"wait_event_type", wait.first}, {"wait_event", wait.second}}), values));
    }
    snapshot_durations.metric.push_back(histogram(labels(), target->snapshot_durations));
    missed.metric.push_back(counter(labels(), static_cast<double>(target->missed_ticks)));
    up.metric.push_back(gauge(labels(), target->up ? 1 : 0));
    hidden.metric.push_back(gauge(labels(), target->hidden_backends));
    if (target->run) {
      run_active.metric.push_back(gauge(
          labels({{"run_id", target->run->run_id}, {"workload", target->run->workload}}),
          1));
      if (target->run->tps) tps.metric.push_back(gauge(labels(), *target->run->tps));
      if (target->run->latency_s) {
        latency.metric.push_back(gauge(labels(), *target->run->latency_s));
      }
    }
    for (const auto& [collector, status] : target->collectors) {
      collector_duration.metric.push_back(
          gauge(labels({{"collector", collector}}), status.duration_s));
      collector_success.metric.push_back(
          gauge(labels({{"collector", collector}}), status.success ? 1 : 0));
    }
  }
  std::vector<MetricFamily> families;
  for (auto* built : {&snapshots, &samples, &durations, &snapshot_durations, &missed, &up, &hidden,
                      &run_active, &tps, &latency, &collector_duration, &collector_success}) {
    if (!built->metric.empty()) families.push_back(std::move(*built));
  }
  return families;
}

std::vector<MetricFamily> TargetCollectable::Collect() const {
  try {
    return build_metric_families(provider_());
  } catch (const std::exception& error) {
    config::component_logger("metrics")->error("could not collect metrics: {}", error.what());
    return {};
  }
}

MetricsServer::MetricsServer(const std::string& listen, TargetCollectable::Provider provider,
                             const std::string& version, const std::string& revision)
    : listen_(listen),
      registry_(std::make_shared<prometheus::Registry>()),
      targets_(std::make_shared<TargetCollectable>(std::move(provider))) {
  prometheus::BuildGauge()
      .Name("pgwaitprof_build_info")
      .Help("pgwaitprof version and revision; always 1.")
      .Register(*registry_)
      .Add({{"version", version}, {"revision", revision}})
      .Set(1);
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen);
  } catch (const std::exception& error) {
    throw std::runtime_error("could not listen on \"" + listen + "\": " + error.what());
  }
  exposer_->RegisterCollectable(registry_);
  exposer_->RegisterCollectable(targets_);
}

}  // namespace pgwaitprof::exporters
