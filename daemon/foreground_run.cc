// The foreground run.
#include "daemon/foreground_run.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/target_sampler.h"
#include "daemon/control.h"
#include "daemon/process.h"
#include "daemon/local_target.h"
#include "daemon/run_orchestrator.h"
#include "exporters/report_render.h"

namespace pgwaitprof::daemon {
namespace {

// Echoes the load generator's output to the terminal as pgbench itself would.
class TerminalObserver : public RunObserver {
 public:
  void on_started(const std::string& run_id, const std::filesystem::path& dir) override {
    std::cerr << fmt::format("pgwaitprof: run {} -> {}\n", run_id, dir.string());
  }
  void on_loadgen_line(std::string_view line) override { std::cerr << line << '\n'; }
};

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

  const auto target = open_local_target(command.target, command.scale, command.keep_cluster,
                                       command.source == config::Source::kPgWaitSampling);
  request.conninfo = target.conninfo;
  collectors::SamplerOptions sampler_options;
  sampler_options.conninfo = target.conninfo;
  sampler_options.hz = command.hz;
  sampler_options.source = command.source;
  RunControl control;
  TerminalObserver observer;
  const auto outcome = run_with_sampler<RunOutcome>(
      sampler_options, control, "pgwaitprof: stopping the run, writing its report",
      [&](collectors::TargetSampler& sampler) { return execute_run(sampler, request, observer, control); });
  return print_report(outcome.run, outcome.dir, outcome.exit_code);
}

}  // namespace pgwaitprof::daemon
