// Daemon wiring: targets, metrics server, signals.
#include "daemon/app.h"

#include <algorithm>
#include <cmath>

#include <asio/co_spawn.hpp>
#include <asio/steady_timer.hpp>
#include <fmt/format.h>

#include "config/logging.h"
#include "daemon/matrix.h"

namespace pgwaitprof::daemon {
namespace {

auto log() {
  static auto logger = config::component_logger("daemon");
  return logger;
}

bool same_sampling(const config::TargetConfig& a, const config::TargetConfig& b) {
  return a.dsn == b.dsn && a.hz == b.hz && a.source == b.source &&
         a.pg_wait_sampling_poll == b.pg_wait_sampling_poll && a.labels == b.labels;
}

}  // namespace

config::ValidatedConfig apply_overrides(config::ValidatedConfig config,
                                        const DaemonOverrides& overrides) {
  if (overrides.target) {
    config.targets = {config::TargetConfig{}};
    config.targets.front().name = "default";
    config.targets.front().dsn = *overrides.target;
  }
  if (overrides.hz) {
    for (auto& target : config.targets) target.hz = *overrides.hz;
  }
  if (overrides.listen) config.listen = *overrides.listen;
  if (overrides.data_dir) config.data_dir = *overrides.data_dir;
  if (overrides.log_level) config.log_level = *overrides.log_level;
  return config;
}

DaemonApp::DaemonApp(std::optional<std::filesystem::path> config_path, DaemonOverrides overrides)
    : config_path_(std::move(config_path)),
      overrides_(std::move(overrides)),
      signals_(io_, SIGINT, SIGTERM, SIGHUP) {
  config_ = load();
  config::set_log_level(config_.log_level);
  std::filesystem::create_directories(config_.data_dir);
  published_.store(std::make_shared<const std::vector<std::shared_ptr<model::ContinuousProfile>>>());
  metrics_ = std::make_unique<exporters::MetricsServer>(
      config_.listen,
      [this] {
        exporters::TargetMetricsList list;
        for (const auto& profile : *published_.load()) list.push_back(profile->published());
        return list;
      },
      PGWAITPROF_VERSION, PGWAITPROF_REVISION);
}

config::ValidatedConfig DaemonApp::load() const {
  config::ValidatedConfig loaded;
  if (config_path_) {
    loaded = config::load_config(*config_path_);
  } else if (!overrides_.target) {
    throw config::ConfigError("no configuration file and no --target given");
  }
  // A broken matrix plan stops the start, not the daemon hours later.
  for (const auto& plan : loaded.matrix_plans) config::load_matrix_plan(plan);
  return apply_overrides(std::move(loaded), overrides_);
}

void DaemonApp::start_target(const config::TargetConfig& target) {
  collectors::SamplerOptions options;
  options.name = target.name;
  options.conninfo = target.dsn;
  options.hz = target.hz;
  options.source = target.source;
  options.wait_sampling_poll = target.pg_wait_sampling_poll;
  auto sampler = std::make_shared<collectors::TargetSampler>(io_.get_executor(), options);
  auto profile = std::make_shared<model::ContinuousProfile>(target.name, target.labels);
  sampler->add_sink(profile.get());
  targets_[target.name] = Target{target, sampler, profile};
  ++running_samplers_;
  // The sampler delivers to the profile until its run() ends: both live until then.
  asio::co_spawn(io_, sampler->run(), [this, sampler, profile, name = target.name](std::exception_ptr failure) {
    --running_samplers_;
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& error) {
        log()->error("sampler stopped target={}: {}", name, error.what());
      }
    }
  });
}

void DaemonApp::stop_target(const std::string& name) {
  auto found = targets_.find(name);
  if (found == targets_.end()) return;
  found->second.sampler->stop();
  targets_.erase(found);
}

void DaemonApp::publish_targets() {
  auto list = std::make_shared<std::vector<std::shared_ptr<model::ContinuousProfile>>>();
  for (const auto& [name, target] : targets_) list->push_back(target.profile);
  published_.store(std::move(list));
}

void DaemonApp::apply(const config::ValidatedConfig& config) {
  // Targets that are gone or sample differently restart; unchanged ones keep their counters.
  std::vector<std::string> names;
  for (const auto& [name, target] : targets_) names.push_back(name);
  for (const auto& name : names) {
    const auto next = std::find_if(config.targets.begin(), config.targets.end(),
                                   [&](const auto& candidate) { return candidate.name == name; });
    if (next == config.targets.end() || !same_sampling(*next, targets_[name].config)) {
      log()->info("stopping target={}", name);
      stop_target(name);
    } else {
      targets_[name].config = *next;
    }
  }
  for (const auto& target : config.targets) {
    if (!targets_.contains(target.name)) start_target(target);
  }
  publish_targets();
}

namespace {

// Publishes a daemon run as its target's active run and forwards its events.
class DaemonRunObserver : public RunObserver {
 public:
  DaemonRunObserver(model::ContinuousProfile& profile, std::string workload,
                    std::function<void(nlohmann::json)> forward)
      : profile_(profile), workload_(std::move(workload)), forward_(std::move(forward)) {}
  ~DaemonRunObserver() override { profile_.set_run(std::nullopt); }
  void on_started(const std::string& run_id, const std::filesystem::path& dir) override {
    run_ = model::ActiveRun{run_id, workload_, std::nullopt, std::nullopt};
    profile_.set_run(run_);
    forward_({{"event", "started"}, {"run_id", run_id}, {"dir", dir.string()}});
  }
  void on_loadgen_line(std::string_view line) override {
    forward_({{"event", "line"}, {"text", std::string(line)}});
  }
  void on_progress(const model::LoadgenProgress& progress) override {
    run_.tps = progress.tps;
    run_.latency_s = std::isfinite(progress.latency_avg_ms)
                         ? std::optional(progress.latency_avg_ms / 1000)
                         : std::nullopt;
    profile_.set_run(run_);
  }

 private:
  model::ContinuousProfile& profile_;
  std::string workload_;
  std::function<void(nlohmann::json)> forward_;
  model::ActiveRun run_;
};

}  // namespace

asio::awaitable<RunOutcome> DaemonApp::execute(Target& target, RunRequest request, RunControl& control,
                                               std::function<void(nlohmann::json)> forward) {
  // Kept alive for the run even if a reload drops the target meanwhile.
  auto sampler = target.sampler;
  auto profile = target.profile;
  request.target_name = target.config.name;
  request.conninfo = target.config.dsn;
  request.data_dir = config_.data_dir;
  DaemonRunObserver observer(*profile, request.workload, std::move(forward));
  active_runs_.insert(&control);
  if (stopping_) control.interrupt();
  try {
    auto outcome = co_await execute_run(*sampler, std::move(request), observer, control);
    active_runs_.erase(&control);
    co_return outcome;
  } catch (...) {
    active_runs_.erase(&control);
    throw;
  }
}

asio::awaitable<void> DaemonApp::run_configured() {
  for (const auto& configured : config_.runs) {
    if (stopping_) break;
    Target* target = find_target(configured.target.empty() ? targets_.begin()->first : configured.target);
    if (target == nullptr) continue;
    RunRequest request;
    request.workload = configured.workload;
    request.label = configured.label;
    request.pgbench_args = configured.pgbench_args;
    request.interval = std::chrono::seconds(static_cast<int>(configured.interval.count()));
    RunControl control;
    auto outcome = co_await execute(*target, request, control, [](nlohmann::json) {});
    log()->info("configured run done status={} dir={}", outcome.run.status, outcome.dir.string());
  }
  for (const auto& path : config_.matrix_plans) {
    if (stopping_) break;
    const auto plan = config::load_matrix_plan(path);
    // The plan's target names one of ours (by name or connection string); none: the first.
    Target* target = find_target(plan.target.empty() ? targets_.begin()->first : plan.target);
    if (target == nullptr) {
      log()->error("matrix plan names a target this daemon does not sample plan={} target=\"{}\"",
                   path.string(), collectors::mask_password(plan.target));
      continue;
    }
    RunControl control;
    MatrixContext context{plan,
                          config_.data_dir / "matrix" / make_run_id(plan.name),
                          target->config.dsn,
                          [this, name = target->config.name, &control](RunRequest request) {
                            // Looked up per run: a reload may have replaced the target.
                            Target* current = find_target(name);
                            if (current == nullptr) {
                              throw std::runtime_error("target \"" + name + "\" was removed by a reload");
                            }
                            return execute(*current, std::move(request), control, [](nlohmann::json) {});
                          },
                          nullptr,
                          control,
                          [](const std::string& line) { log()->info("{}", line); }};
    std::filesystem::create_directories(context.dir);
    std::filesystem::copy_file(path, context.dir / "plan.yaml");
    auto outcome = co_await execute_matrix(context);
    log()->info("matrix done plan={} runs={}/{} dir={}", path.string(), outcome.runs_done, outcome.runs_total,
                context.dir.string());
  }
}

DaemonApp::Target* DaemonApp::find_target(const std::string& name_or_dsn) {
  for (auto& [name, target] : targets_) {
    if (name == name_or_dsn || target.config.dsn == name_or_dsn) return &target;
  }
  return nullptr;
}

void DaemonApp::wait_signals() {
  signals_.async_wait([this](const std::error_code& error, int signal) {
    if (error) return;
    if (signal == SIGHUP) {
      try {
        auto next = load();
        config::set_log_level(next.log_level);
        if (next.listen != config_.listen) {
          log()->warn("listen address changes need a restart old={} new={}", config_.listen, next.listen);
          next.listen = config_.listen;
        }
        apply(next);
        config_ = std::move(next);
        log()->info("configuration reloaded targets={}", targets_.size());
      } catch (const std::exception& failure) {
        log()->error("could not reload configuration, keeping the old one: {}", failure.what());
      }
      wait_signals();
      return;
    }
    log()->info("stopping signal={}", signal);
    shutdown();
  });
}

void DaemonApp::shutdown() {
  stopping_ = true;
  signals_.cancel();
  if (control_) control_->stop();
  // Runs in progress are interrupted and write their reports before the samplers stop.
  for (auto* run : active_runs_) run->interrupt();
  auto timer = std::make_shared<asio::steady_timer>(io_);
  auto step = std::make_shared<std::function<void()>>();
  const auto started = std::chrono::steady_clock::now();
  bool samplers_stopped = false;
  *step = [this, timer, step, started, samplers_stopped]() mutable {
    const auto waited = std::chrono::steady_clock::now() - started;
    if (!samplers_stopped && (active_runs_.empty() || waited > std::chrono::seconds(10))) {
      for (auto& [name, target] : targets_) target.sampler->stop();
      samplers_stopped = true;
    }
    // Samplers end within a tick once their sessions are closed; never wait long for them.
    if (samplers_stopped && (running_samplers_ == 0 || waited > std::chrono::seconds(11))) {
      io_.stop();
      return;
    }
    timer->expires_after(std::chrono::milliseconds(5));
    timer->async_wait([step](const std::error_code&) { (*step)(); });
  };
  (*step)();
}

int DaemonApp::run() {
  apply(config_);
  control_ = std::make_unique<ControlServer>(*this, config_.data_dir);
  control_->start();
  wait_signals();
  if (!config_.runs.empty() || !config_.matrix_plans.empty()) {
    asio::co_spawn(io_, run_configured(), [](std::exception_ptr failure) {
      if (failure) log()->error("configured runs stopped early");
    });
  }
  log()->info("listening listen={} data_dir={} targets={}", config_.listen, config_.data_dir.string(),
              targets_.size());
  io_.run();
  log()->info("stopped");
  return 0;
}

}  // namespace pgwaitprof::daemon
