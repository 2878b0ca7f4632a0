// The Prometheus side of the daemon: a Collectable that turns the published, immutable
// TargetMetrics of every target into metric families, and the HTTP exposer that serves them
// with the program's own metrics (build info). A scrape never queries PostgreSQL.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "exporters/prometheus/http_server.h"
#include "model/continuous_profile.h"

namespace pgwaitprof::exporters {

using TargetMetricsList = std::vector<std::shared_ptr<const model::TargetMetrics>>;

// Pure: the families for these targets, with DESIGN.md's names and labels.
std::vector<prometheus::MetricFamily> build_metric_families(const TargetMetricsList& targets);

class TargetCollectable : public prometheus::Collectable {
 public:
  using Provider = std::function<TargetMetricsList()>;
  explicit TargetCollectable(Provider provider) : provider_(std::move(provider)) {}
  // Never throws: prometheus-cpp does not catch, and a failed scrape must not kill the daemon.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  Provider provider_;
};

// /metrics: the program's own metrics (build info) and every target's, served by
// MetricsHttpServer (http_server.h: why not civetweb, and the limits that keep a flood from
// keeping scrapes out), with basic auth whose checks queue behind one another
// (BasicAuthChecker). The exposition is rendered once per change of the published metrics and
// every scrape in between is answered from that buffer.
class MetricsServer {
 public:
  // Binds `listen` ("host:port"); throws std::runtime_error with a one-line message on failure.
  // With `basic_auth_users` (user -> bcrypt hash), /metrics asks for HTTP basic auth.
  MetricsServer(const std::string& listen, TargetCollectable::Provider provider,
                const std::string& version, const std::string& revision,
                const std::map<std::string, std::string>& basic_auth_users = {});
  ~MetricsServer();
  const std::string& listen() const { return listen_; }
  uint16_t port() const;

  // pgwaitprof_change_point{group, history, metric}: the step (relative, -0.24 for 24 % lower)
  // of the change points the latest analysis of `group` in `history` ("data_dir", "results")
  // found new (store::new_change_points), 0 for the group's other series that had one before;
  // `steps` by metric. Any thread.
  void set_change_points(const std::string& group, const std::string& history,
                         const std::map<std::string, double>& steps);

 private:
  // On the server's thread only.
  std::shared_ptr<const std::string> render();

  std::string listen_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Gauge>* change_points_ = nullptr;
  std::mutex change_points_mutex_;
  // By (group, history), then metric.
  std::map<std::pair<std::string, std::string>, std::map<std::string, prometheus::Gauge*>>
      change_point_gauges_;
  std::atomic<uint64_t> generation_{0};  // of the registry's own metrics
  uint64_t rendered_generation_ = 0;
  TargetCollectable::Provider provider_;
  TargetMetricsList rendered_for_;
  std::shared_ptr<const std::string> rendered_;
  std::unique_ptr<MetricsHttpServer> http_;
};

}  // namespace pgwaitprof::exporters
