// The foreground run.
#include "daemon/foreground_run.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/target_sampler.h"
#include "config/logging.h"
#include "daemon/control.h"
#include "daemon/process.h"
#include "daemon/run_orchestrator.h"
#include "daemon/scratch_cluster.h"
#include "exporters/report_render.h"

namespace pgwaitprof::daemon {
namespace {

auto log() {
  static auto logger = config::component_logger("run");
  return logger;
}

// Echoes the load generator's output to the terminal as pgbench itself would.
class TerminalObserver : public RunObserver {
 public:
  void on_started(const std::string& run_id, const std::filesystem::path& dir) override {
    std::cerr << fmt::format("pgwaitprof: run {} -> {}\n", run_id, dir.string());
  }
  void on_loadgen_line(std::string_view line) override { std::cerr << line << '\n'; }
};

void initialise_scratch(const ScratchCluster& cluster, const RunCommand& command) {
  const std::string pgbench = (cluster.bin_dir() / "pgbench").string();
  std::cerr << fmt::format("pgwaitprof: initialising pgbench data at scale {}\n", command.scale);
  auto result = run_command({pgbench, "-i", "-q", "-s", std::to_string(command.scale), cluster.conninfo()});
  if (result.exit_code != 0) {
    throw std::runtime_error("pgbench -i failed on the scratch cluster: " + result.output);
  }
  if (command.source == config::Source::kPgWaitSampling && cluster.wait_sampling_preloaded()) {
    auto created = run_command({(cluster.bin_dir() / "psql").string(), "-X", "-q", "-c",
                                "CREATE EXTENSION IF NOT EXISTS pg_wait_sampling", cluster.conninfo()});
    if (created.exit_code != 0) throw std::runtime_error("could not create extension pg_wait_sampling: " + created.output);
  }
}

}  // namespace

bool pg_environment_set() {
  for (const char* name : {"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE"}) {
    if (const char* value = std::getenv(name); value && *value) return true;
  }
  return false;
}

std::filesystem::path default_data_dir() {
  if (const char* dir = std::getenv("PGWAITPROF_DATA_DIR"); dir && *dir) return dir;
  if (const char* dir = std::getenv("XDG_DATA_HOME"); dir && *dir) {
    return std::filesystem::path(dir) / "pgwaitprof";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : ".") / ".local" / "share" / "pgwaitprof";
}

std::vector<std::filesystem::path> daemon_sockets(const RunCommand& command) {
  std::vector<std::filesystem::path> sockets;
  if (const char* socket = std::getenv("PGWAITPROF_SOCKET"); socket && *socket) sockets.emplace_back(socket);
  sockets.push_back(control_socket_path(command.data_dir.empty() ? default_data_dir() : command.data_dir));
  sockets.push_back(control_socket_path("/var/lib/pgwaitprof"));
  return sockets;
}

namespace {

int print_report(const model::Run& run, const std::filesystem::path& dir, int exit_code) {
  std::cout << exporters::render_text(run);
  std::cout << fmt::format("\nreport: {}\n", (dir / "report.html").string());
  if (run.status != "completed") {
    std::cerr << fmt::format("pgwaitprof: run {}: {}\n", run.status, run.error);
  }
  return exit_code;
}

}  // namespace

int run_foreground(const RunCommand& command) {
  RunRequest request;
  request.workload = command.workload;
  request.label = command.label;
  request.pgbench_args = command.pgbench_args;
  request.interval = std::chrono::seconds(command.interval_s);
  request.data_dir = command.data_dir.empty() ? default_data_dir() : command.data_dir;

  // A daemon that already samples the target runs it, so the target is not sampled twice.
  const bool scratch_target = !command.target && !pg_environment_set();
  if (!scratch_target && !command.no_daemon) {
    request.conninfo = command.target.value_or("");
    for (const auto& socket : daemon_sockets(command)) {
      auto remote = run_through_daemon(socket, request, [](const std::string& line) { std::cerr << line << '\n'; });
      if (!remote) continue;
      std::ifstream file(remote->dir / "report.json");
      return print_report(model::run_from_json(nlohmann::json::parse(file)), remote->dir, remote->exit_code);
    }
  }

  std::unique_ptr<ScratchCluster> scratch;
  std::string conninfo;
  if (command.target) {
    conninfo = *command.target;
  } else if (!pg_environment_set()) {
    scratch = std::make_unique<ScratchCluster>(ScratchOptions{command.keep_cluster, {}});
    initialise_scratch(*scratch, command);
    conninfo = scratch->conninfo();
  }

  asio::io_context io;
  collectors::SamplerOptions sampler_options;
  sampler_options.name = "default";
  sampler_options.conninfo = conninfo;
  sampler_options.hz = command.hz;
  sampler_options.source = command.source;
  collectors::TargetSampler sampler(io.get_executor(), sampler_options);
  asio::co_spawn(io, sampler.run(), [](std::exception_ptr failure) {
    if (failure) log()->error("sampler stopped unexpectedly");
  });

  RunControl control;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](const std::error_code& error, int signal) {
      if (error) return;
      std::cerr << fmt::format("pgwaitprof: signal {} received: stopping the run, writing its report\n", signal);
      control.interrupt();
      wait_signal();
    });
  };
  wait_signal();

  request.conninfo = conninfo;
  TerminalObserver observer;
  std::optional<RunOutcome> outcome;
  std::exception_ptr failure;
  asio::co_spawn(io, execute_run(sampler, request, observer, control),
                 [&](std::exception_ptr error, RunOutcome result) {
                   failure = error;
                   if (!error) outcome = std::move(result);
                   sampler.stop();
                   signals.cancel();
                 });
  io.run();
  if (failure) std::rethrow_exception(failure);

  return print_report(outcome->run, outcome->dir, outcome->exit_code);
}

}  // namespace pgwaitprof::daemon
