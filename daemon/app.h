// The daemon: samples every configured target on one io_context, serves /metrics, reloads its
// configuration on SIGHUP, stops on SIGTERM/SIGINT, and runs benchmark runs through the same
// run orchestrator as `pgwaitprof run`.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/awaitable.hpp>
#include <asio/signal_set.hpp>
#include <functional>

#include "collectors/target_sampler.h"
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "daemon/control.h"
#include "daemon/run_orchestrator.h"
#include "daemon/model/continuous_profile.h"
#include "exporters/prometheus_exporter.h"

namespace pgwaitprof::daemon {

// Command-line values that override the configuration file (and survive a reload).
struct DaemonOverrides {
  std::optional<std::string> target;
  std::optional<double> hz;
  std::optional<std::string> listen;
  std::optional<std::filesystem::path> data_dir;
  std::optional<std::string> log_level;
};

config::ValidatedConfig apply_overrides(config::ValidatedConfig config, const DaemonOverrides& overrides);

class DaemonApp {
 public:
  DaemonApp(std::optional<std::filesystem::path> config_path, DaemonOverrides overrides);
  // Runs until SIGTERM/SIGINT; returns the process exit code.
  int run();

  struct Target {
    config::TargetConfig config;
    std::shared_ptr<collectors::TargetSampler> sampler;
    std::shared_ptr<model::ContinuousProfile> profile;
  };
  // For the control server: the sampler of a target given by name or connection string.
  Target* find_target(const std::string& name_or_dsn);
  // A run on one of our targets, published as its active run (pgwaitprof_run_active and the
  // load generator gauges) while it lasts; `forward` gets the started/line events.
  asio::awaitable<RunOutcome> execute(Target& target, RunRequest request, RunControl& control,
                                      std::function<void(nlohmann::json)> forward);
  const config::ValidatedConfig& config() const { return config_; }
  asio::io_context& io_context() { return io_; }

 private:
  config::ValidatedConfig load() const;
  void apply(const config::ValidatedConfig& config);
  void start_target(const config::TargetConfig& target);
  void stop_target(const std::string& name);
  void publish_targets();
  void wait_signals();
  asio::awaitable<void> run_configured();
  void shutdown();

  std::optional<std::filesystem::path> config_path_;
  DaemonOverrides overrides_;
  config::ValidatedConfig config_;
  asio::io_context io_;
  asio::signal_set signals_;
  std::map<std::string, Target> targets_;
  int running_samplers_ = 0;
  std::atomic<std::shared_ptr<const std::vector<std::shared_ptr<model::ContinuousProfile>>>>
      published_;
  std::unique_ptr<exporters::MetricsServer> metrics_;
  std::unique_ptr<ControlServer> control_;
  std::set<RunControl*> active_runs_;  // interrupted by SIGTERM, then awaited for their reports
  bool stopping_ = false;
};

}  // namespace pgwaitprof::daemon
