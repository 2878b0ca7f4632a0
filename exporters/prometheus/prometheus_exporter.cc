// Metric families from TargetMetrics snapshots, and the HTTP server that exposes them.
#include "exporters/prometheus/prometheus_exporter.h"

#include <fmt/format.h>
#include <prometheus/gauge.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <tuple>

#include "base/logging.h"
#include "exporters/prometheus/basic_auth.h"

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
  metric.histogram.sample_sum = source.sum.count();
  uint64_t cumulative = 0;
  for (size_t bucket = 0; bucket < source.bucket_counts.size(); ++bucket) {
    cumulative += source.bucket_counts[bucket];
    const double bound = bucket < source.upper_bounds.size()
                             ? source.upper_bounds[bucket].count()
                             : std::numeric_limits<double>::infinity();
    metric.histogram.bucket.push_back({cumulative, bound});
  }
  return metric;
}

}  // namespace

namespace {

// Every family the exporter serves, filled target by target.
struct Families {
  MetricFamily snapshots =
      family("pgwaitprof_snapshots_total",
             "Snapshots of pg_stat_activity taken (or pg_wait_sampling periods read).",
             MetricType::Counter);
  MetricFamily samples =
      family("pgwaitprof_wait_samples_total", "Backends seen per wait key, summed over snapshots.",
             MetricType::Counter);
  MetricFamily durations =
      family("pgwaitprof_wait_duration_seconds",
             "Length of waits: exact from the traced source (by backend type, in buckets of "
             "powers of two nanoseconds), else estimated from consecutive snapshots of one "
             "backend.",
             MetricType::Histogram);
  MetricFamily wait_seconds =
      family("pgwaitprof_wait_seconds_total",
             "Time of the target's processes per wait key, from the traced source: blocked in the "
             "wait (part=\"blocked\"), runnable and waiting for a CPU with the wait event still "
             "set (\"runqueue\"), on a CPU with it set (\"on_cpu\", the exact on-CPU time "
             "spread by in-kernel samples); its rate is average active sessions.",
             MetricType::Counter);
  MetricFamily waits =
      family("pgwaitprof_waits_total",
             "Blocking waits (switched out until woken) per wait key, from the traced source.",
             MetricType::Counter);
  MetricFamily snapshot_durations = family("pgwaitprof_snapshot_duration_seconds",
                                           "Time the snapshot query took.", MetricType::Histogram);
  MetricFamily missed =
      family("pgwaitprof_missed_ticks_total",
             "Ticks skipped because the previous snapshot was still running or the "
             "target was down.",
             MetricType::Counter);
  MetricFamily up =
      family("pgwaitprof_up", "1 when the target is connected and sampled.", MetricType::Gauge);
  MetricFamily hidden =
      family("pgwaitprof_hidden_backends",
             "Backends whose wait events the sampling role may not see.", MetricType::Gauge);
  MetricFamily run_active =
      family("pgwaitprof_run_active", "1 while a benchmark run is active.", MetricType::Gauge);
  MetricFamily tps =
      family("pgwaitprof_loadgen_tps", "Load generator throughput in the latest progress interval.",
             MetricType::Gauge);
  MetricFamily latency =
      family("pgwaitprof_loadgen_latency_seconds",
             "Load generator average latency in the latest progress interval.", MetricType::Gauge);
  MetricFamily collector_duration =
      family("pgwaitprof_collector_duration_seconds",
             "Duration of the latest collection per collector.", MetricType::Gauge);
  MetricFamily backend_cpu =
      family("pgwaitprof_backend_cpu_seconds_total",
             "Time the target's backends spent on a CPU, from /proc/<pid>/schedstat "
             "(local targets only).",
             MetricType::Counter);
  MetricFamily backend_runqueue =
      family("pgwaitprof_backend_runqueue_seconds_total",
             "Time the target's backends spent runnable but waiting for a CPU, from "
             "/proc/<pid>/schedstat (local targets only).",
             MetricType::Counter);
  MetricFamily sampler_info =
      family("pgwaitprof_sampler_info",
             "The sampling source of a target and its configured rate (for trace, of its "
             "in-kernel samples of on-CPU time; 0 for pg_wait_sampling, which samples at its own "
             "period); always 1.",
             MetricType::Gauge);
  MetricFamily collector_success =
      family("pgwaitprof_collector_success", "1 when the latest collection per collector worked.",
             MetricType::Gauge);
  MetricFamily check_sessions =
      family("pgwaitprof_kernel_check_active_sessions",
             "The kernel check of the last minute (local targets): client backends sampled as "
             "CPU (view=\"sampled_cpu\") and in state R, waiting or not (\"sampled_running\", "
             "the memory source), against the kernel's on a CPU (\"kernel_on_cpu\"), runnable "
             "waiting for one (\"kernel_runqueue\") and of processes that exited between "
             "readings (\"kernel_exited\"), /proc; average active sessions.",
             MetricType::Gauge);
  MetricFamily check_within =
      family("pgwaitprof_kernel_check_within_bounds",
             "1 when the sampled running sessions of the last minute lie between 0.85 x and 1.1 x "
             "the kernel's on-CPU plus run-queue sessions (the activity source: its CPU between "
             "0.85 x on-CPU and 1.1 x on-CPU plus run queue), 0 when not (local targets; "
             "docs/reading-a-report.md).",
             MetricType::Gauge);
};

using Labels = std::vector<ClientMetric::Label>;

// Every series of a target: its name, the series' own labels, the config's constant labels.
struct TargetLabels {
  const model::TargetMetrics& target;
  Labels operator()(Labels own = {}) const {
    own.insert(own.begin(), {"target", target.target});
    for (const auto& [name, value] : target.labels) own.push_back({name, value});
    return own;
  }
};

Labels key_labels(const model::WaitKey& key) {
  return {{"backend_type", key.backend_type},
          {"state", key.state},
          {"wait_event_type", key.wait_event_type},
          {"wait_event", key.wait_event}};
}

void add_kernel_check(Families& families, const model::KernelCheck& check,
                      const TargetLabels& labels) {
  for (const auto& [view, aas] : {std::pair{"sampled_cpu", check.sampled_cpu_aas},
                                  std::pair{"kernel_on_cpu", check.on_cpu_aas},
                                  std::pair{"kernel_runqueue", check.runqueue_aas},
                                  std::pair{"kernel_exited", check.exited_aas}}) {
    families.check_sessions.metric.push_back(gauge(labels({{"view", view}}), aas));
  }
  if (check.sampled_running_aas) {
    families.check_sessions.metric.push_back(
        gauge(labels({{"view", "sampled_running"}}), *check.sampled_running_aas));
  }
  if (check.judged()) {
    families.check_within.metric.push_back(gauge(labels(), check.within() ? 1 : 0));
  }
}

// The traced source's series: per wait key its time by part and its blocking waits, and per
// (backend type, wait event) the durations of those waits, states merged. A part or a count is
// exported once it is non-zero: the series of a key never disappear, as its totals only grow.
void add_traced(Families& families, const model::TargetMetrics& target,
                const TargetLabels& labels) {
  std::map<std::tuple<std::string, std::string, std::string>, model::TracedTime> by_event;
  for (const auto& [key, time] : target.traced) {
    for (const auto& [part, seconds] :
         {std::pair{"blocked", time.blocked_s}, std::pair{"runqueue", time.runqueue_s},
          std::pair{"on_cpu", time.on_cpu_s}}) {
      if (seconds <= 0) continue;
      auto own = key_labels(key);
      own.push_back({"part", part});
      families.wait_seconds.metric.push_back(counter(labels(std::move(own)), seconds));
    }
    if (time.waits == 0) continue;
    families.waits.metric.push_back(
        counter(labels(key_labels(key)), static_cast<double>(time.waits)));
    by_event[{key.backend_type, key.wait_event_type, key.wait_event}].merge(time);
  }
  for (const auto& [event, time] : by_event) {
    const auto& [backend_type, wait_event_type, wait_event] = event;
    families.durations.metric.push_back(histogram(labels({{"backend_type", backend_type},
                                                          {"wait_event_type", wait_event_type},
                                                          {"wait_event", wait_event}}),
                                                  model::traced_duration_histogram(time)));
  }
}

void add_run(Families& families, const model::ActiveRun& run, const TargetLabels& labels) {
  families.run_active.metric.push_back(
      gauge(labels({{"run_id", run.run_id}, {"workload", run.workload}}), 1));
  if (run.tps) families.tps.metric.push_back(gauge(labels(), *run.tps));
  if (run.latency) families.latency.metric.push_back(gauge(labels(), run.latency->count()));
}

void add_target(Families& families, const model::TargetMetrics& target) {
  const TargetLabels labels{target};
  // The traced source takes no snapshots and counts no samples: its time is wait_seconds.
  if (target.source != model::SamplerSource::kTrace) {
    families.snapshots.metric.push_back(counter(labels(), static_cast<double>(target.snapshots)));
  }
  families.sampler_info.metric.push_back(
      gauge(labels({{"source", std::string(to_string(target.source))},
                    {"requested", std::string(to_string(target.requested))},
                    {"hz", fmt::format("{:g}", target.hz)}}),
            1));
  if (target.kernel_check) add_kernel_check(families, *target.kernel_check, labels);
  for (const auto& [key, count] : target.wait_samples) {
    families.samples.metric.push_back(counter(labels(key_labels(key)), static_cast<double>(count)));
  }
  for (const auto& [wait, values] : target.wait_durations) {
    families.durations.metric.push_back(
        histogram(labels({{"wait_event_type", wait.first}, {"wait_event", wait.second}}), values));
  }
  add_traced(families, target, labels);
  families.snapshot_durations.metric.push_back(histogram(labels(), target.snapshot_durations));
  families.missed.metric.push_back(counter(labels(), static_cast<double>(target.missed_ticks)));
  families.up.metric.push_back(gauge(labels(), target.up ? 1 : 0));
  families.hidden.metric.push_back(gauge(labels(), target.hidden_backends));
  if (target.run) add_run(families, *target.run, labels);
  for (const auto& [backend_type, time] : target.kernel_by_backend_type) {
    families.backend_cpu.metric.push_back(
        counter(labels({{"backend_type", backend_type}}), time.on_cpu.count()));
    families.backend_runqueue.metric.push_back(
        counter(labels({{"backend_type", backend_type}}), time.runqueue.count()));
  }
  for (const auto& [collector, status] : target.collectors) {
    families.collector_duration.metric.push_back(
        gauge(labels({{"collector", collector}}), status.duration.count()));
    families.collector_success.metric.push_back(
        gauge(labels({{"collector", collector}}), status.success ? 1 : 0));
  }
}

}  // namespace

std::vector<MetricFamily> build_metric_families(const TargetMetricsList& targets) {
  Families built;
  for (const auto& target : targets) add_target(built, *target);
  std::vector<MetricFamily> families;
  for (auto* family :
       {&built.snapshots, &built.samples, &built.durations, &built.wait_seconds, &built.waits,
        &built.snapshot_durations, &built.missed, &built.up, &built.hidden, &built.run_active,
        &built.tps, &built.latency, &built.collector_duration, &built.collector_success,
        &built.sampler_info, &built.backend_cpu, &built.backend_runqueue, &built.check_sessions,
        &built.check_within}) {
    if (!family->metric.empty()) families.push_back(std::move(*family));
  }
  return families;
}

std::vector<MetricFamily> TargetCollectable::Collect() const {
  try {
    return build_metric_families(provider_());
  } catch (const std::exception& error) {
    base::component_logger("metrics")->error("could not collect metrics: {}", error.what());
    return {};
  }
}

MetricsServer::MetricsServer(const std::string& listen, TargetCollectable::Provider provider,
                             const std::string& version, const std::string& revision,
                             const std::map<std::string, std::string>& basic_auth_users)
    : listen_(listen),
      registry_(std::make_shared<prometheus::Registry>()),
      provider_(std::move(provider)) {
  prometheus::BuildGauge()
      .Name("pgwaitprof_build_info")
      .Help("pgwaitprof version and revision; always 1.")
      .Register(*registry_)
      .Add({{"version", version}, {"revision", revision}})
      .Set(1);
  change_points_ = &prometheus::BuildGauge()
                        .Name("pgwaitprof_change_point")
                        .Help(
                            "Step of a change point the latest analysis of the group's run "
                            "history (history: the data directory's, data_dir, or the results "
                            "database's, results) found new (relative: -0.24 is 24 % lower); 0 "
                            "otherwise.")
                        .Register(*registry_);
  MetricsHttpServer::Authorize authorize;
  if (!basic_auth_users.empty()) {
    auto checker = std::make_shared<BasicAuthChecker>(basic_auth_users);
    authorize = [checker](const std::string& client, const std::string& user,
                          const std::string& password) {
      return checker->check(client, user, password);
    };
  }
  http_ = std::make_unique<MetricsHttpServer>(
      listen, [this] { return render(); }, std::move(authorize), "pgwaitprof");
}

MetricsServer::~MetricsServer() = default;

uint16_t MetricsServer::port() const { return http_->port(); }

void MetricsServer::set_change_points(const std::string& group, const std::string& history,
                                      const std::map<std::string, double>& steps) {
  std::lock_guard lock(change_points_mutex_);
  auto& gauges = change_point_gauges_[{group, history}];
  for (auto& [metric, gauge] : gauges) gauge->Set(0);
  for (const auto& [metric, step] : steps) {
    auto& gauge = gauges[metric];
    if (gauge == nullptr) {
      gauge = &change_points_->Add({{"group", group}, {"history", history}, {"metric", metric}});
    }
    gauge->Set(step);
  }
  generation_.fetch_add(1);
}

std::shared_ptr<const std::string> MetricsServer::render() {
  TargetMetricsList targets;
  try {
    targets = provider_();
  } catch (const std::exception& error) {
    base::component_logger("metrics")->error("could not collect metrics: {}", error.what());
  }
  // The published snapshots are immutable: the same pointers, the same exposition.
  const uint64_t generation = generation_.load();
  if (rendered_ && targets == rendered_for_ && generation == rendered_generation_) {
    return rendered_;
  }
  std::string text;
  try {
    auto families = registry_->Collect();
    auto built = build_metric_families(targets);
    families.insert(families.end(), std::make_move_iterator(built.begin()),
                    std::make_move_iterator(built.end()));
    text = prometheus::TextSerializer().Serialize(families);
  } catch (const std::exception& error) {
    base::component_logger("metrics")->error("could not render metrics: {}", error.what());
    if (rendered_) return rendered_;
  }
  rendered_ = std::make_shared<const std::string>(std::move(text));
  rendered_for_ = std::move(targets);
  rendered_generation_ = generation;
  return rendered_;
}

}  // namespace pgwaitprof::exporters
