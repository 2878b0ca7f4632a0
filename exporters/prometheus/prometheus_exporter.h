// The Prometheus side of the daemon: a Collectable that turns the published, immutable
// TargetMetrics of every target into metric families, and the HTTP exposer that serves them
// with the program's own metrics (build info). A scrape never queries PostgreSQL.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

// The HTTP server (civetweb, one thread per connection) is configured so that a few hostile
// clients cannot keep scrapes out: enough threads that a handful of slow connections leave
// most of them free, a deadline on reading a request's header (request_timeout_ms, counted
// from the connection's start, however slowly the bytes trickle in), no keep-alive (an idle
// connection holds no thread), bounded queues, and basic auth whose failures queue behind one
// another (BasicAuthChecker).
class MetricsServer {
 public:
  // Threads serving connections: each holds one connection until it is answered or its
  // deadline passes.
  static constexpr int kWorkerThreads = 32;
  // Accepted connections waiting for a thread; beyond them, the kernel's listen backlog.
  static constexpr int kQueuedConnections = 64;
  static constexpr int kListenBacklog = 128;
  // A request's header (and each wait to send the answer) must come within this.
  static constexpr std::chrono::milliseconds kRequestTimeout{3000};
  // Longer headers are refused (413); a scrape's are under 1 kB.
  static constexpr int kMaxRequestBytes = 8192;

  // Binds `listen` ("host:port"); throws std::runtime_error with a one-line message on failure.
  // With `basic_auth_users` (user -> bcrypt hash), /metrics asks for HTTP basic auth.
  MetricsServer(const std::string& listen, TargetCollectable::Provider provider,
                const std::string& version, const std::string& revision,
                const std::map<std::string, std::string>& basic_auth_users = {});
  const std::string& listen() const { return listen_; }

 private:
  std::string listen_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<TargetCollectable> targets_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace pgwaitprof::exporters
