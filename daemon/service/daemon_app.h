// The daemon: samples every configured target on one io_context, serves /metrics, reloads its
// configuration on SIGHUP, stops on SIGTERM/SIGINT (runs in progress are interrupted and still
// write their reports), and runs benchmark runs (requested on the control socket, or listed in
// the configuration) through the same run engine as `pgwaitprof run`.
#pragma once

#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <asio/thread_pool.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "base/task_group.h"
#include "collectors/target_sampler.h"
#include "config/daemon_config.h"
#include "daemon/service/control_server.h"
#include "daemon/service/data_dir_lock.h"
#include "daemon/service/run_service.h"
#include "exporters/prometheus/prometheus_exporter.h"
#include "model/continuous_profile.h"
#include "store/results_uploader.h"

namespace pgwaitprof::service {

// Command-line values that override the configuration file (and survive a reload).
struct DaemonOverrides {
  std::optional<std::string> target;
  std::optional<double> hz;
  std::optional<model::SamplerSource> source;
  std::optional<std::string> listen;
  std::optional<std::filesystem::path> data_dir;
  std::optional<std::string> log_level;
};

// The configuration with the overrides applied; ConfigError when the result is not valid (a
// rate given for pg_wait_sampling, an unprotected non-loopback listen address).
config::ValidatedConfig apply_overrides(config::ValidatedConfig config,
                                        const DaemonOverrides& overrides);

class DaemonApp : public RunService {
 public:
  // Loads and validates the configuration and binds /metrics; throws ConfigError or
  // std::runtime_error ("could not listen on ...") before anything is created on disk.
  DaemonApp(std::optional<std::filesystem::path> config_path, DaemonOverrides overrides);
  ~DaemonApp() override;

  // Creates or claims (store::claim_data_directory) and locks the data directory, opens the
  // control socket and samples until SIGTERM/SIGINT. Throws std::runtime_error when the data
  // directory is another user's or in use, or the socket cannot be created. Returns the exit
  // code.
  int run();

  std::optional<Refusal> admit(const engine::RunRequest& request) override;
  asio::awaitable<engine::RunOutcome> execute(engine::RunRequest request, base::RunControl& control,
                                              engine::RunObserver& observer) override;

 private:
  struct Target {
    config::TargetConfig config;
    std::shared_ptr<collectors::TargetSampler> sampler;
    std::shared_ptr<model::ContinuousProfile> profile;
  };
  Target* find_target(const std::string& name_or_dsn);
  config::ValidatedConfig load() const;
  void apply(const config::ValidatedConfig& config);
  void start_target(const config::TargetConfig& target);
  void publish_targets();
  void reload();
  asio::awaitable<void> main();
  asio::awaitable<void> run_configured();
  asio::awaitable<void> run_plan(const std::filesystem::path& path);
  // The change points the runs `just_done` picks brought to their groups' history
  // (change_watch.h), analysed on analysis_'s thread: a long history's permutation tests must
  // not hold up the samplers.
  asio::awaitable<void> watch_changes(std::function<bool(const store::RunSummary&)> just_done);
  asio::awaitable<void> shutdown();

  std::optional<std::filesystem::path> config_path_;
  DaemonOverrides overrides_;
  config::ValidatedConfig config_;
  asio::io_context io_;
  asio::signal_set signals_;
  std::map<std::string, Target> targets_;
  std::atomic<std::shared_ptr<const std::vector<std::shared_ptr<model::ContinuousProfile>>>>
      published_;
  std::unique_ptr<exporters::MetricsServer> metrics_;
  std::optional<DataDirLock> lock_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<store::ResultsUploader> uploader_;  // with results.dsn configured
  asio::thread_pool analysis_{1};
  base::TaskGroup samplers_;
  base::TaskGroup tasks_;                         // the control socket, configured runs and plans
  std::multiset<base::RunControl*> active_runs_;  // interrupted by SIGTERM
  bool stopping_ = false;
};

}  // namespace pgwaitprof::service
