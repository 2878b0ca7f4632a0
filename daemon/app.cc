// Daemon wiring: targets, metrics server, signals.
#include "daemon/app.h"

#include <algorithm>

#include <asio/co_spawn.hpp>
#include <asio/steady_timer.hpp>
#include <fmt/format.h>

#include "config/logging.h"

namespace pgwaitprof::daemon {
namespace {

auto log() {
  static auto logger = config::component_logger("daemon");
  return logger;
}

bool same_sampling(const config::TargetConfig& a, const config::TargetConfig& b) {
  return a.dsn == b.dsn && a.hz == b.hz && a.source == b.source &&
         a.pg_wait_sampling_poll == b.pg_wait_sampling_poll;
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
  auto profile = std::make_shared<model::ContinuousProfile>(target.name);
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
  for (auto& [name, target] : targets_) target.sampler->stop();
  // Samplers end within a tick once their sessions are closed; never wait long for them.
  auto grace = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(500));
  auto poll = std::make_shared<std::function<void()>>();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  *poll = [this, grace, poll, deadline] {
    if (running_samplers_ == 0 || std::chrono::steady_clock::now() >= deadline) {
      io_.stop();
      return;
    }
    grace->expires_after(std::chrono::milliseconds(5));
    grace->async_wait([poll](const std::error_code&) { (*poll)(); });
  };
  (*poll)();
}

int DaemonApp::run() {
  apply(config_);
  wait_signals();
  log()->info("listening listen={} data_dir={} targets={}", config_.listen, config_.data_dir.string(),
              targets_.size());
  io_.run();
  return 0;
}

}  // namespace pgwaitprof::daemon
