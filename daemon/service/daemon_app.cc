// Daemon wiring: targets, metrics, signals, the control socket and configured runs.
#include "daemon/service/daemon_app.h"

#include <fmt/format.h>

#include <algorithm>
#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>
#include <cmath>
#include <fstream>

#include "base/as_tuple.h"
#include "base/build_info.h"
#include "base/logging.h"
#include "base/regular_file.h"
#include "base/thread_priority.h"
#include "config/matrix_plan.h"
#include "daemon/engine/matrix.h"
#include "daemon/engine/remote_sampler.h"
#include "daemon/engine/run_steps.h"
#include "daemon/service/change_watch.h"
#include "exporters/render/report_render.h"
#include "store/atomic_file.h"
#include "store/run_directory.h"

namespace pgwaitprof::service {
namespace {

using namespace std::chrono_literals;
using base::kAsTuple;
// How long SIGTERM waits for runs to write their reports, and then for samplers to stop.
constexpr auto kRunsGrace = 10s;
constexpr auto kSamplersGrace = 1s;

auto daemon_app_log() {
  static auto logger = base::component_logger("daemon");
  return logger;
}

bool same_sampling(const config::TargetConfig& a, const config::TargetConfig& b) {
  return a.dsn == b.dsn && a.hz == b.hz && a.source == b.source &&
         a.pg_wait_sampling_poll == b.pg_wait_sampling_poll && a.labels == b.labels &&
         a.sampler_host == b.sampler_host && a.sampler_program == b.sampler_program;
}

// A target's sampler with the feed of its sampler_host (none without one): the pgwaitprof on
// the server's host over SSH, opened at each connection of the sampler, so that a cut channel
// is an outage and a new channel follows after the sampler's back-off. One object, so that the
// feed outlives its sampler (members end in reverse order) wherever the sampler is still held
// (a run of a target that a reload dropped).
struct FedSampler {
  FedSampler(asio::any_io_executor executor, const config::TargetConfig& target)
      : feed(engine::make_ssh_feed(target.sampler_host, target.sampler_program, executor)),
        sampler(executor, collectors::sampler_options(target)) {
    sampler.set_remote_feed(feed.get());
  }
  std::unique_ptr<engine::SshFeed> feed;
  collectors::TargetSampler sampler;
};

// Publishes a daemon run as its target's active run (pgwaitprof_run_active, the load
// generator's gauges) and passes every event on.
class ActiveRunObserver : public engine::RunObserver {
 public:
  ActiveRunObserver(model::ContinuousProfile& profile, std::string workload,
                    engine::RunObserver& next)
      : profile_(profile), workload_(std::move(workload)), next_(next) {}
  ~ActiveRunObserver() override { profile_.set_run(std::nullopt); }
  void on_started(const std::string& run_id, const std::filesystem::path& dir) override {
    run_ = model::ActiveRun{run_id, workload_, std::nullopt, std::nullopt};
    profile_.set_run(run_);
    next_.on_started(run_id, dir);
  }
  void on_loadgen_line(std::string_view line) override { next_.on_loadgen_line(line); }
  void on_progress(const model::LoadgenProgress& progress) override {
    run_.tps = progress.tps;
    run_.latency = std::isfinite(progress.latency_avg.count())
                       ? std::optional<base::Seconds>(progress.latency_avg)
                       : std::nullopt;
    profile_.set_run(run_);
    next_.on_progress(progress);
  }

 private:
  model::ContinuousProfile& profile_;
  std::string workload_;
  engine::RunObserver& next_;
  model::ActiveRun run_;
};

// What a running daemon cannot change: the address it listens on, the data directory it has
// locked (its control socket and runs are there), the control socket's limits and the results
// database its uploader pushes to. A reload that changes one says which, with the value kept,
// and takes the rest (a data_dir changed silently sent the next runs to an unlocked directory).
void keep_restart_only(config::ValidatedConfig& next, const config::ValidatedConfig& running) {
  std::vector<std::string> kept;
  if (next.listen != running.listen || next.web.basic_auth_users != running.web.basic_auth_users ||
      next.web.insecure != running.web.insecure) {
    kept.push_back(fmt::format("listen={} and web", running.listen));
    next.listen = running.listen;
    next.web = running.web;
  }
  if (next.data_dir != running.data_dir) {
    kept.push_back(fmt::format("data_dir={}", running.data_dir.string()));
    next.data_dir = running.data_dir;
  }
  if (next.control.max_connections != running.control.max_connections ||
      next.control.request_timeout != running.control.request_timeout) {
    kept.push_back("control");
    next.control = running.control;
  }
  if (next.results.dsn != running.results.dsn) {
    kept.push_back("results");  // the connection string may hold a password
    next.results = running.results;
  }
  if (!kept.empty()) {
    daemon_app_log()->warn("configuration changes that need a restart were not applied, keeping {}",
                           fmt::join(kept, ", "));
  }
}

}  // namespace

config::ValidatedConfig apply_overrides(config::ValidatedConfig config,
                                        const DaemonOverrides& overrides) {
  if (overrides.target) {
    config.targets = {config::TargetConfig{}};
    config.targets.front().dsn = *overrides.target;
  }
  for (auto& target : config.targets) {
    if (overrides.source) target.source = *overrides.source;
    if (overrides.hz) {
      if (target.source == model::SamplerSource::kPgWaitSampling) {
        throw config::ConfigError(fmt::format(
            "--hz cannot be used with source pg_wait_sampling (target \"{}\"): the extension "
            "samples at its own pg_wait_sampling.profile_period",
            target.name));
      }
      target.hz = *overrides.hz;
    }
  }
  if (overrides.listen) config.listen = *overrides.listen;
  if (overrides.data_dir) config.data_dir = *overrides.data_dir;
  if (overrides.log_level) config.log_level = *overrides.log_level;
  config::check_listen_protected(config.listen, config.web);
  return config;
}

DaemonApp::DaemonApp(std::optional<std::filesystem::path> config_path, DaemonOverrides overrides)
    : config_path_(std::move(config_path)),
      overrides_(std::move(overrides)),
      signals_(io_, SIGHUP),  // a reload asked for meanwhile is done once running
      samplers_(io_.get_executor()),
      tasks_(io_.get_executor()) {
  config_ = load();
  // Until the configuration is read, SIGTERM, SIGINT and SIGQUIT end the process at once: nothing
  // exists yet to stop or write, and the parse of a large file would otherwise delay the stop.
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.add(SIGQUIT);
  base::set_log_level(config_.log_level);
  published_.store(
      std::make_shared<const std::vector<std::shared_ptr<model::ContinuousProfile>>>());
  // Bound before the data directory is touched: a busy port leaves nothing behind.
  metrics_ = std::make_unique<exporters::MetricsServer>(
      config_.listen,
      [this] {
        exporters::TargetMetricsList list;
        for (const auto& profile : *published_.load()) list.push_back(profile->published());
        return list;
      },
      base::kVersion, base::kRevision, config_.web.basic_auth_users);
}

DaemonApp::~DaemonApp() = default;

config::ValidatedConfig DaemonApp::load() const {
  config::ValidatedConfig loaded;
  if (config_path_) {
    loaded = config::load_config(*config_path_);
  } else if (!overrides_.target) {
    throw config::ConfigError("no configuration file and no --target given");
  }
  // A broken matrix plan stops the start, not the daemon hours later.
  for (const auto& plan : loaded.matrix_plans) {
    // Builds (server_bin) run in scratch clusters of `pgwaitprof matrix`; the daemon's matrices
    // run on the targets it samples.
    if (config::has_builds(config::load_matrix_plan(plan))) {
      throw config::ConfigError(fmt::format(
          "matrix plan \"{}\" has variants with \"server_bin\": a plan of builds runs with "
          "pgwaitprof matrix, not in the daemon",
          plan.string()));
    }
  }
  return apply_overrides(std::move(loaded), overrides_);
}

void DaemonApp::start_target(const config::TargetConfig& target) {
  auto fed = std::make_shared<FedSampler>(io_.get_executor(), target);
  std::shared_ptr<collectors::TargetSampler> sampler(fed, &fed->sampler);
  // pgwaitprof_sampler_info's rate: of the snapshots, or of the traced source's in-kernel on-CPU
  // samples; pg_wait_sampling samples at its own period.
  auto profile = std::make_shared<model::ContinuousProfile>(
      target.name, target.source,
      target.source != model::SamplerSource::kPgWaitSampling ? target.hz : 0, target.labels);
  sampler->add_sink(profile.get());
  targets_[target.name] = Target{target, sampler, profile};
  // The sampler delivers to the profile until its run() ends: both live until then.
  samplers_.spawn(
      [](std::shared_ptr<collectors::TargetSampler> owned,
         std::shared_ptr<model::ContinuousProfile> sink) -> asio::awaitable<void> {
        co_await owned->run();
        owned->remove_sink(sink.get());
      }(sampler, profile),
      "sampler of target " + target.name);
}

void DaemonApp::publish_targets() {
  auto list = std::make_shared<std::vector<std::shared_ptr<model::ContinuousProfile>>>();
  for (const auto& [name, target] : targets_) list->push_back(target.profile);
  published_.store(std::move(list));
}

void DaemonApp::apply(const config::ValidatedConfig& config) {
  // Targets that are gone or sample differently restart; unchanged ones keep their counters.
  for (auto it = targets_.begin(); it != targets_.end();) {
    const auto next =
        std::find_if(config.targets.begin(), config.targets.end(),
                     [&](const auto& candidate) { return candidate.name == it->first; });
    if (next == config.targets.end() || !same_sampling(*next, it->second.config)) {
      daemon_app_log()->info("stopping target={}", it->first);
      it->second.sampler->stop();
      it = targets_.erase(it);
    } else {
      it->second.config = *next;
      ++it;
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

std::optional<Refusal> DaemonApp::admit(const engine::RunRequest& request) {
  if (stopping_) return Refusal{"busy", "the daemon is stopping"};
  const auto& allowed = config_.loadgen_executables;
  // A recording window starts nothing.
  if (request.kind != loadgen::LoadgenKind::kNone &&
      std::find(allowed.begin(), allowed.end(), request.loadgen) == allowed.end()) {
    daemon_app_log()->warn("refused run request: load generator not allowed loadgen=\"{}\"",
                           request.loadgen);
    return Refusal{"refused", fmt::format("load generator \"{}\" is not allowed (allowed: {})",
                                          request.loadgen, fmt::join(allowed, ", "))};
  }
  auto* target = find_target(request.conninfo);
  if (target == nullptr) {
    return Refusal{"unknown_target", "this daemon does not sample that target"};
  }
  if (target->profile->current().run) {
    return Refusal{"busy",
                   fmt::format("a run is already active on target \"{}\"", target->config.name)};
  }
  return std::nullopt;
}

asio::awaitable<engine::RunOutcome> DaemonApp::execute(engine::RunRequest request,
                                                       base::RunControl& control,
                                                       engine::RunObserver& observer) {
  auto* target = find_target(request.conninfo);
  if (target == nullptr) {
    engine::RunOutcome refused;
    refused.run.status = model::RunStatus::kFailed;
    refused.run.error = "the target is no longer sampled by this daemon";
    refused.exit_code = 1;
    co_return refused;
  }
  // Kept alive for the run even if a reload drops the target meanwhile.
  auto sampler = target->sampler;
  auto profile = target->profile;
  request.target_name = target->config.name;
  request.conninfo = target->config.dsn;
  request.data_dir = config_.data_dir;
  if (request.cpu_profile_hz == 0) request.cpu_profile_hz = target->config.cpu_profile_hz;
  const auto workload = engine::run_steps::workload_name(request);
  daemon_app_log()->info("run requested target={} workload={}", request.target_name, workload);
  ActiveRunObserver publishing(*profile, workload, observer);
  const auto registered = active_runs_.insert(&control);
  if (stopping_) control.interrupt("the daemon is stopping");
  auto outcome = co_await engine::execute_run(*sampler, std::move(request), publishing, control);
  active_runs_.erase(registered);
  if (uploader_ && outcome.report_written) uploader_->add(outcome.dir);
  co_return outcome;
}

asio::awaitable<void> DaemonApp::run_configured() {
  engine::RunObserver quiet;
  for (const auto& configured : config_.runs) {
    if (stopping_) break;
    const auto* target = find_target(configured.target);
    if (target == nullptr) continue;
    engine::RunRequest request;
    request.conninfo = target->config.dsn;
    request.workload = configured.workload;
    request.label = configured.label;
    request.pgbench_args = configured.pgbench_args;
    request.interval = configured.interval;
    base::RunControl control(io_.get_executor());
    auto outcome = co_await execute(request, control, quiet);
    daemon_app_log()->info("configured run done status={} dir={}", to_string(outcome.run.status),
                           outcome.dir.string());
    // Named, not a temporary in the co_await's expression: GCC destroyed that one twice.
    std::function<bool(const store::RunSummary&)> this_run =
        [id = outcome.run.id](const store::RunSummary& run) { return run.id == id; };
    co_await watch_changes(std::move(this_run));
  }
  for (const auto& path : config_.matrix_plans) {
    if (stopping_) break;
    co_await run_plan(path);
  }
}

asio::awaitable<void> DaemonApp::run_plan(const std::filesystem::path& path) {
  config::MatrixPlan plan;
  std::string plan_text;
  try {
    plan = config::load_matrix_plan(path);
    auto text = base::read_regular_file(path, "matrix plan");
    if (!text) throw config::ConfigError(text.error().message);
    plan_text = std::move(*text);
  } catch (const config::ConfigError& error) {
    daemon_app_log()->error("could not load matrix plan: {}", error.what());
    co_return;
  }
  // The plan's target names one of ours (by name or connection string); none: the first.
  auto* target = find_target(plan.target.empty() ? targets_.begin()->first : plan.target);
  if (target == nullptr) {
    daemon_app_log()->error(
        "matrix plan names a target this daemon does not sample plan={} target=\"{}\"",
        path.string(), collectors::mask_password(plan.target));
    co_return;
  }
  base::RunControl control(io_.get_executor());
  const auto registered = active_runs_.insert(&control);
  engine::RunObserver quiet;
  engine::MatrixContext context{
      plan,
      config_.data_dir / "matrix" / store::make_run_id(plan.name),
      target->config.dsn,
      [&](engine::RunRequest request) { return execute(std::move(request), control, quiet); },
      nullptr,
      control,
      [](const std::string& line) { daemon_app_log()->info("{}", line); },
      {}};
  if (auto failed = store::create_private_directories(context.dir)) {
    daemon_app_log()->error("{}", failed->message);
  } else if (auto copy_failed = store::write_file_atomically(
                 context.dir / "plan.yaml",
                 engine::plan_text_without_password(plan_text, plan.target))) {
    daemon_app_log()->error("{}", copy_failed->message);
  } else {
    auto outcome = co_await engine::execute_matrix(context);
    daemon_app_log()->info("matrix done plan={} runs={}/{} dir={}{}", path.string(),
                           outcome.runs_done, outcome.runs_total, context.dir.string(),
                           outcome.error.empty() ? "" : " error=\"" + outcome.error + "\"");
  }
  active_runs_.erase(registered);
  std::function<bool(const store::RunSummary&)> of_matrix =
      [matrix = context.dir.filename().string()](const store::RunSummary& run) {
        return run.matrix == matrix;
      };
  co_await watch_changes(std::move(of_matrix));
}

asio::awaitable<void> DaemonApp::watch_changes(
    std::function<bool(const store::RunSummary&)> just_done) {
  // A coroutine of its own on the analysis thread; this one resumes on the I/O thread when it
  // ends. Everything it uses is copied or outlives it (metrics_ lives until shutdown() has joined
  // this thread).
  auto analyse = [data_dir = config_.data_dir, dsn = config_.results.dsn,
                  just_done = std::move(just_done),
                  metrics = metrics_.get()]() -> asio::awaitable<void> {
    try {
      service::watch_changes(data_dir, dsn, just_done, metrics);
    } catch (const std::exception& error) {
      daemon_app_log()->error("could not analyse the run history for change points: {}",
                              error.what());
    }
    co_return;
  };
  co_await asio::co_spawn(analysis_.get_executor(), std::move(analyse), asio::use_awaitable);
}

void DaemonApp::reload() {
  try {
    auto next = load();
    base::set_log_level(next.log_level);
    keep_restart_only(next, config_);
    apply(next);
    config_ = std::move(next);
    daemon_app_log()->info("configuration reloaded targets={}", targets_.size());
  } catch (const std::exception& failure) {
    daemon_app_log()->error("could not reload configuration, keeping the old one: {}",
                            failure.what());
  }
}

asio::awaitable<void> DaemonApp::main() {
  tasks_.spawn(control_->serve(), "control socket");
  if (!config_.runs.empty() || !config_.matrix_plans.empty()) {
    tasks_.spawn(run_configured(), "configured runs");
  }
  for (;;) {
    auto [error, signal] = co_await signals_.async_wait(kAsTuple);
    if (error) break;
    if (signal != SIGHUP) {
      daemon_app_log()->info("stopping signal={}", signal);
      break;
    }
    reload();
  }
  co_await shutdown();
}

asio::awaitable<void> DaemonApp::shutdown() {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  stopping_ = true;
  control_->close();
  // The samplers stop first and their sessions stay open: closing a session wakes its server
  // backend to exit, and hundreds of backends exiting at once are as many runnable processes
  // among which this process gets its fair share of the CPUs, a few hundredths, until they are
  // done. (A daemon with 300 targets beside two busy loops on 2 cores took 2.5-3.3 s to stop
  // when each stop() closed its session: its I/O thread waited up to 0.47 s at a time for a
  // CPU.) So the other threads end first, then the sessions close, at real time where the process
  // may (root, CAP_SYS_NICE or an RLIMIT_RTPRIO), which keeps the exiting backends from
  // preempting the close and the exit after it: 10 ms for those 300 sessions, 1.8-2.3 s at the
  // default priority. Runs in progress are interrupted and write their reports first.
  std::optional<Clock::time_point> samplers_stopped;
  const auto stop_samplers = [&] {
    for (auto& [name, target] : targets_) target.sampler->stop();
    samplers_stopped = Clock::now();
  };
  if (active_runs_.empty()) stop_samplers();
  for (auto* run : active_runs_) run->interrupt("the daemon is stopping");
  if (!co_await tasks_.wait_idle(kRunsGrace)) daemon_app_log()->warn("runs did not end in time");
  const auto runs_ended = Clock::now();
  if (!samplers_stopped) stop_samplers();
  if (!co_await samplers_.wait_idle(kSamplersGrace))
    daemon_app_log()->warn("samplers did not stop in time");
  if (uploader_) uploader_->stop();
  analysis_.join();
  metrics_.reset();  // its threads joined
  const auto closing = Clock::now();
  const auto priority = base::raise_thread_priority();
  for (auto& [name, target] : targets_) target.sampler->close_session();
  // Where a slow stop's time went: the runs' reports, the samplers' ends (their memory readers
  // joined), the sessions' close.
  const auto seconds = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
  };
  const auto ended = Clock::now();
  daemon_app_log()->info(
      "stop took seconds={:.3f} runs_s={:.3f} samplers_s={:.3f} closing_s={:.3f} closing_at=\"{}\"",
      seconds(started, ended), seconds(started, runs_ended), seconds(*samplers_stopped, closing),
      seconds(closing, ended), priority);
  io_.stop();
}

int DaemonApp::run() {
  const auto claimed = store::claim_data_directory(config_.data_dir);
  if (!claimed) throw std::runtime_error(claimed.error().message);
  if (*claimed) {
    daemon_app_log()->warn(
        "data directory was open to other users, its mode is now {:04o} path={} was={:04o}",
        store::kDataDirectoryMode, config_.data_dir.string(), **claimed);
  }
  auto lock = DataDirLock::acquire(config_.data_dir);
  if (!lock) throw std::runtime_error(lock.error().message);
  lock_.emplace(std::move(*lock));
  control_ = std::make_unique<ControlServer>(
      io_.get_executor(), control_socket_path(config_.data_dir), *this,
      ControlLimits{config_.control.max_connections, config_.control.request_timeout});
  if (auto failed = control_->open()) throw std::runtime_error(failed->message);
  apply(config_);
  if (!config_.results.dsn.empty()) {
    uploader_ = std::make_unique<store::ResultsUploader>(
        io_.get_executor(), config_.data_dir, config_.results.dsn, &exporters::render_json);
    uploader_->push();  // what an earlier daemon left queued
  }
  // Not one of tasks_: main() itself waits for those.
  asio::co_spawn(io_, main(), [](std::exception_ptr failure) {
    if (failure) daemon_app_log()->error("the daemon's main task failed");
  });
  daemon_app_log()->info("listening listen={} data_dir={} targets={}", config_.listen,
                         config_.data_dir.string(), targets_.size());
  io_.run();
  daemon_app_log()->info("stopped");
  return 0;
}

}  // namespace pgwaitprof::service
