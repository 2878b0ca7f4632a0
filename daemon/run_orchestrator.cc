// One profiled run, start to report.
#include "daemon/run_orchestrator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/host.h"
#include "collectors/pgbench_parser.h"
#include "collectors/server_stats.h"
#include "config/logging.h"
#include "daemon/atomic_file.h"
#include "daemon/model/run_recorder.h"
#include "daemon/process.h"
#include "daemon/workloads.h"
#include "exporters/report_render.h"

namespace pgwaitprof::daemon {
namespace {

using namespace std::chrono_literals;
using model::SteadyClock;
using model::SystemClock;
constexpr auto kAsTuple = asio::experimental::as_tuple(asio::use_awaitable);
constexpr size_t kStderrTailBytes = 8192;
// Background activity is polled several times per interval so short checkpoints are seen.
constexpr int kBackgroundPollsPerInterval = 4;

auto log() {
  static auto logger = config::component_logger("run");
  return logger;
}

std::string iso_utc(SystemClock::time_point at) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", fmt::gmtime(SystemClock::to_time_t(at)));
}

// The value of a pgbench option in `args` ("-c 8", "-c8", "--client=8"), if given.
std::optional<std::string> option_value(const std::vector<std::string>& args, const char* short_name,
                                        const char* long_name) {
  const std::string short_flag = std::string("-") + short_name;
  const std::string long_flag = std::string("--") + long_name;
  for (size_t index = 0; index < args.size(); ++index) {
    const auto& arg = args[index];
    if (arg == short_flag || arg == long_flag) {
      if (index + 1 < args.size()) return args[index + 1];
      return std::string();
    }
    if (arg.starts_with(long_flag + "=")) return arg.substr(long_flag.size() + 1);
    if (arg.starts_with(short_flag) && arg.size() > short_flag.size() && !arg.starts_with("--")) {
      return arg.substr(short_flag.size());
    }
  }
  return std::nullopt;
}

int int_option(const std::vector<std::string>& args, const char* short_name, const char* long_name,
               int fallback) {
  const auto value = option_value(args, short_name, long_name);
  int parsed = fallback;
  if (value) std::from_chars(value->data(), value->data() + value->size(), parsed);
  return parsed;
}

std::string first_error_line(const std::string& text) {
  std::string fallback;
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.find("error") != std::string::npos || line.find("FATAL") != std::string::npos) {
      return line;
    }
    if (!line.empty() && !line.starts_with("progress:")) fallback = line;
    start = end + 1;
  }
  return fallback;
}

}  // namespace

void RunControl::interrupt() {
  interrupted_ = true;
  if (child_ > 0) ::kill(child_, SIGINT);
}

std::string make_run_id(std::string_view label) {
  static std::mt19937 random{std::random_device{}()};
  std::string id = fmt::format("{:%Y%m%d-%H%M%S}-{:04x}", fmt::gmtime(std::time(nullptr)),
                               random() & 0xffff);
  std::string suffix;
  for (char character : label) {
    if (std::isalnum(static_cast<unsigned char>(character)) || character == '-' || character == '_') {
      suffix.push_back(character);
    } else if (!suffix.empty() && suffix.back() != '-') {
      suffix.push_back('-');
    }
    if (suffix.size() >= 40) break;
  }
  while (!suffix.empty() && suffix.back() == '-') suffix.pop_back();
  return suffix.empty() ? id : id + "-" + suffix;
}

std::vector<std::string> bottleneck_warnings(const model::Run& run, int loadgen_threads) {
  std::vector<std::string> warnings;
  int intervals = 0, saturated = 0, no_idle = 0;
  const double cores = std::max(1, std::min(loadgen_threads, std::max(1, run.environment.cpu_count)));
  for (const auto& slice : run.timeline) {
    if (!slice.cpu) continue;
    ++intervals;
    if (slice.cpu->loadgen_cores >= 0.9 * cores) ++saturated;
    if (slice.cpu->idle_pct + slice.cpu->iowait_pct < 5) ++no_idle;
  }
  // One busy second is noise; a fifth of the run is a pattern.
  if (intervals > 0 && saturated * 5 >= intervals) {
    warnings.push_back(fmt::format(
        "pgbench saturated its {} thread(s) in {} of {} intervals: Client | ClientRead is inflated "
        "by the client, not the server (give pgbench more -j threads or another host)",
        loadgen_threads, saturated, intervals));
  }
  if (intervals > 0 && no_idle * 5 >= intervals) {
    warnings.push_back(fmt::format(
        "the host had no idle CPU in {} of {} intervals: server and client competed for CPU, so "
        "waits include time spent runnable but not running",
        no_idle, intervals));
  }
  const auto ticks = run.sampler.snapshots + run.sampler.missed_ticks;
  if (ticks > 0 && run.sampler.source == "activity" && run.sampler.missed_ticks * 20 > ticks) {
    warnings.push_back(fmt::format(
        "the sampler missed {} of {} ticks: the snapshot query took longer than the {:.0f} Hz "
        "period (lower --hz)",
        run.sampler.missed_ticks, ticks, run.sampler.hz));
  }
  if (run.sampler.hidden_backends > 0) {
    warnings.push_back(fmt::format(
        "{} backend(s) were hidden from the sampling role: grant it pg_monitor to see their waits",
        run.sampler.hidden_backends));
  }
  return warnings;
}

void write_run_directory(const std::filesystem::path& dir, const model::Run& run) {
  std::filesystem::create_directories(dir);
  // report.json first: it is the source of truth the others can be rendered from again.
  write_file_atomically(dir / "report.json", exporters::render_json(run));
  write_file_atomically(dir / "report.txt", exporters::render_text(run));
  write_file_atomically(dir / "report.md", exporters::render_markdown(run));
  write_file_atomically(dir / "profile.csv", exporters::render_profile_csv(run));
  write_file_atomically(dir / "timeline.csv", exporters::render_timeline_csv(run));
  write_file_atomically(dir / "waits.folded", exporters::render_folded(run));
  write_file_atomically(dir / "report.html", exporters::render_html(run));
}

asio::awaitable<RunOutcome> execute_run(collectors::TargetSampler& sampler, RunRequest request,
                                        RunObserver& observer, RunControl& control) {
  auto executor = co_await asio::this_coro::executor;
  RunOutcome outcome;
  model::Run& run = outcome.run;
  run.id = make_run_id(request.label);
  run.label = request.label;
  run.target = request.conninfo.empty() ? "(PG* environment variables)"
                                        : collectors::mask_password(request.conninfo);
  run.workload = request.workload;
  run.variant = request.variant;
  run.repeat = request.repeat;
  run.interval_s = static_cast<double>(request.interval.count());
  run.sampler.hz = sampler.options().hz;
  outcome.dir = request.run_dir.empty() ? request.data_dir / "runs" / run.id : request.run_dir;
  std::filesystem::create_directories(outcome.dir);
  observer.on_started(run.id, outcome.dir);

  const auto started_wall = SystemClock::now();
  run.started_at = iso_utc(started_wall);
  std::string pgbench_log;
  std::string stdout_text;
  std::string stderr_text;
  outcome.exit_code = 1;
  auto fail = [&](std::string error) {
    if (run.status == "completed") {
      run.status = "failed";
      run.error = std::move(error);
    }
  };
  collectors::describe_host(run.environment);

  collectors::PgSession session(executor);
  std::vector<std::string> argv;
  int threads = 1;
  try {
    const Workload& workload = find_workload(request.workload);
    const std::string loadgen = find_executable(request.loadgen);
    if (loadgen.empty()) {
      throw std::runtime_error(fmt::format("could not find load generator \"{}\"", request.loadgen));
    }
    if (auto error = co_await session.connect(request.conninfo, 10s)) {
      throw std::runtime_error(
          fmt::format("could not connect to \"{}\": {}", run.target, error->message));
    }
    if (auto error = co_await collectors::describe_server(session, run.environment)) {
      throw std::runtime_error(fmt::format("could not describe server: {}", error->message));
    }

    // Workload set-up in the target, on demand: pgbench's tables, then the workload's own.
    auto tables = co_await session.execute("SELECT to_regclass('pgbench_branches') IS NOT NULL");
    if (!tables.ok()) throw std::runtime_error(tables.error->message);
    if (collectors::cell(tables.result.get(), 0, 0) != "t") {
      log()->info("initialising pgbench tables scale={} target={}", request.init_scale, request.target_name);
      std::vector<std::string> init{loadgen, "-i", "-s", std::to_string(request.init_scale), "-q"};
      if (!request.conninfo.empty()) init.push_back(request.conninfo);
      auto initialised = co_await run_command_async(init);
      pgbench_log += initialised.output;
      if (initialised.exit_code != 0) {
        throw std::runtime_error("pgbench -i failed: " + first_error_line(initialised.output));
      }
    }
    auto scale = co_await session.execute("SELECT count(*) FROM pgbench_branches");
    if (!scale.ok()) throw std::runtime_error(scale.error->message);
    if (!workload.setup_file.empty()) {
      auto setup = co_await session.execute_script(workload_file(workload.setup_file));
      if (!setup.ok()) {
        throw std::runtime_error(fmt::format("could not set up workload \"{}\": {}", workload.name,
                                             setup.error->message));
      }
    }

    argv.push_back(loadgen);
    argv.insert(argv.end(), workload.builtin_args.begin(), workload.builtin_args.end());
    if (!workload.script_file.empty()) {
      const auto script = outcome.dir / "workload.pgbench";
      write_file_atomically(script, workload_file(workload.script_file));
      argv.insert(argv.end(), {"-f", script.string()});
      // Custom scripts see :scale only when it is given.
      if (!option_value(request.pgbench_args, "s", "scale")) {
        argv.insert(argv.end(), {"-s", collectors::cell(scale.result.get(), 0, 0)});
      }
    }
    if (auto progress = option_value(request.pgbench_args, "P", "progress")) {
      int seconds = 0;
      std::from_chars(progress->data(), progress->data() + progress->size(), seconds);
      if (seconds > 0) run.interval_s = seconds;
    } else {
      argv.insert(argv.end(), {"-P", std::to_string(request.interval.count())});
    }
    argv.insert(argv.end(), request.pgbench_args.begin(), request.pgbench_args.end());
    if (!request.conninfo.empty()) argv.push_back(request.conninfo);
    threads = int_option(request.pgbench_args, "j", "jobs", 1);
    run.clients = int_option(request.pgbench_args, "c", "client", 1);
    for (const auto& arg : argv) {
      run.loadgen_argv.push_back(arg == request.conninfo ? run.target : arg);
    }

    if (!co_await sampler.wait_until_sampling(10s)) {
      throw std::runtime_error(fmt::format("could not sample \"{}\": {}", run.target,
                                           sampler.last_error().empty() ? "no snapshot in 10 s"
                                                                        : sampler.last_error()));
    }
  } catch (const std::exception& error) {
    fail(error.what());
  }
  run.sampler.source = sampler.source();
  run.sampler.period_s = sampler.source() == "pg_wait_sampling" ? sampler.wait_sampling_period_s()
                                                                : 1.0 / sampler.options().hz;

  const auto interval = std::chrono::duration<double>(run.interval_s);
  const auto start = SteadyClock::now();
  model::RunRecorder recorder(start, SystemClock::now(), interval);
  if (run.status == "completed" && !control.interrupted()) {
    sampler.add_sink(&recorder);
    try {
      Child child = spawn(argv);
      control.set_child(child.pid);
      log()->info("started load generator run_id={} pid={} argv=\"{}\"", run.id, child.pid,
                  fmt::join(run.loadgen_argv, " "));

      // Host CPU, the load generator's CPU and background activity, once per interval.
      bool finished = false;
      bool ticker_done = false;
      asio::steady_timer ticker_timer(executor);
      auto ticker = [&]() -> asio::awaitable<void> {
        collectors::BackgroundPoller background;
        auto host_before = collectors::read_proc_stat();
        auto loadgen_before = collectors::read_process_cpu_ticks(child.pid).value_or(0);
        const auto poll_every = std::chrono::duration_cast<SteadyClock::duration>(interval) /
                                kBackgroundPollsPerInterval;
        auto next = start;
        for (int poll = 1; !finished; ++poll) {
          next += poll_every;
          ticker_timer.expires_at(next);
          co_await ticker_timer.async_wait(kAsTuple);
          if (finished) break;
          if (auto flags = co_await background.poll(session)) recorder.add_background(next, *flags);
          if (poll % kBackgroundPollsPerInterval != 0) continue;
          auto host_after = collectors::read_proc_stat();
          auto loadgen_after = collectors::read_process_cpu_ticks(child.pid);
          if (host_before && host_after && loadgen_after) {
            recorder.set_cpu(next, collectors::cpu_between(*host_before, *host_after,
                                                           *loadgen_after - loadgen_before,
                                                           interval.count(), ::sysconf(_SC_CLK_TCK)));
            loadgen_before = *loadgen_after;
          }
          host_before = host_after;
        }
      };
      asio::co_spawn(executor, ticker(), [&](std::exception_ptr failure) {
        ticker_done = true;
        if (failure) log()->warn("interval statistics stopped early run_id={}", run.id);
      });

      auto on_stdout = [&](std::string_view line) {
        stdout_text.append(line).push_back('\n');
        pgbench_log.append(line).push_back('\n');
        observer.on_loadgen_line(line);
      };
      auto on_stderr = [&](std::string_view line) {
        stderr_text.append(line).push_back('\n');
        pgbench_log.append(line).push_back('\n');
        if (auto progress = collectors::parse_progress_line(line)) {
          recorder.add_progress(*progress);
          observer.on_progress(*progress);
        }
        observer.on_loadgen_line(line);
      };
      using namespace asio::experimental::awaitable_operators;
      co_await (read_lines(executor, child.stdout_fd, on_stdout) &&
                read_lines(executor, child.stderr_fd, on_stderr));
      outcome.exit_code = co_await wait_exit(executor, child.pid);
      control.set_child(-1);
      finished = true;
      ticker_timer.cancel();
      asio::steady_timer drain(executor);
      while (!ticker_done) {
        drain.expires_after(1ms);
        co_await drain.async_wait(kAsTuple);
      }
    } catch (const std::exception& error) {
      fail(error.what());
    }
    sampler.remove_sink(&recorder);
  }
  recorder.finish(SteadyClock::now(), run);
  run.ended_at = iso_utc(SystemClock::now());

  try {
    run.loadgen = collectors::parse_summary(stdout_text);
    run.loadgen->aborted = collectors::aborted_clients(stderr_text);
    if (run.loadgen->clients > 0) run.clients = run.loadgen->clients;
  } catch (const collectors::PgbenchParseError& error) {
    if (run.status == "completed" && outcome.exit_code == 0 && !control.interrupted()) {
      run.warnings.push_back(error.what());
    }
  }
  run.loadgen_exit_code = outcome.exit_code;
  if (control.interrupted()) {
    run.status = "interrupted";
    run.error = "run interrupted by signal";
  } else if (run.status == "completed" && outcome.exit_code != 0) {
    fail(fmt::format("pgbench exited with code {}: {}", outcome.exit_code,
                     first_error_line(stderr_text)));
  }
  if (run.status != "completed") {
    run.loadgen_stderr = stderr_text.size() > kStderrTailBytes
                             ? stderr_text.substr(stderr_text.size() - kStderrTailBytes)
                             : stderr_text;
  }
  auto warnings = bottleneck_warnings(run, threads);
  run.warnings.insert(run.warnings.end(), warnings.begin(), warnings.end());

  write_run_directory(outcome.dir, run);
  write_file_atomically(outcome.dir / "pgbench.log", pgbench_log);
  if (run.status != "completed" && outcome.exit_code == 0) outcome.exit_code = 1;
  log()->info("run finished run_id={} status={} dir={}", run.id, run.status, outcome.dir.string());
  co_return outcome;
}

}  // namespace pgwaitprof::daemon
