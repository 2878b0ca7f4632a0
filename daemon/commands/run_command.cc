// The foreground run.
#include "daemon/commands/run_command.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "config/config_error.h"
#include "daemon/commands/control_client.h"
#include "daemon/commands/foreground.h"
#include "daemon/commands/results_command.h"
#include "daemon/engine/remote_sampler.h"
#include "daemon/engine/run_engine.h"
#include "daemon/service/control_server.h"
#include "exporters/render/report_render.h"
#include "exporters/render/text_format.h"
#include "model/pgbench_scripts.h"
#include "store/run_directory.h"

namespace pgwaitprof::commands {
namespace {

using exporters::text_format::text_escape;

// Echoes the load generator's output to the terminal as pgbench itself would, with control
// characters written out (its errors quote the server's, which may quote query text).
class TerminalObserver : public engine::RunObserver {
 public:
  explicit TerminalObserver(bool brief) : brief_(brief) {}
  void on_started(const std::string& run_id, const std::filesystem::path& dir) override {
    std::cerr << fmt::format("pgwaitprof: run {} -> {}\n", run_id, dir.string());
  }
  void on_loadgen_line(std::string_view line) override {
    if (!brief_) std::cerr << text_escape(line) << '\n';
  }

 private:
  bool brief_;
};

int print_report(const model::Run& run, const std::filesystem::path& dir, int exit_code,
                 bool written, bool brief) {
  if (brief && written) {
    // The whole-run figure the load generator printed, and where the whole report is.
    const std::string tps =
        run.loadgen && run.loadgen->tps > 0 ? fmt::format("{:.1f} tps", run.loadgen->tps) : "-";
    std::cout << fmt::format("{}: {}, {}; report: {} (and report.html)\n",
                             text_escape(run.label.empty() ? run.id : run.label), tps,
                             to_string(run.status), (dir / "report.txt").string());
  } else {
    // The report reaches the terminal even when its files could not be written.
    std::cout << exporters::render_text(run);
    if (written) std::cout << fmt::format("\nreport: {}\n", (dir / "report.html").string());
  }
  if (run.status != model::RunStatus::kCompleted) {
    std::cerr << fmt::format("pgwaitprof: run {}: {}\n", to_string(run.status),
                             text_escape(run.error));
  }
  return exit_code;
}

engine::RunRequest make_request(const RunCommand& command) {
  engine::RunRequest request;
  if (!command.workload.empty()) request.workload = command.workload;
  request.label = command.label;
  // Checked by the option's validator (cli.cc).
  for (const auto& text : command.tags) request.tags.insert(*model::parse_tag(text));
  request.pgbench_args = command.pgbench_args;
  request.interval = base::Seconds(command.interval_s);
  request.data_dir = command.data_dir.empty() ? default_data_dir() : command.data_dir;
  request.keep_transaction_log = command.keep_transaction_log;
  request.checkpoint_after = command.checkpoint_after;
  request.cpu_profile_hz = command.cpu_profile_hz;
  request.kind = command.loadgen;
  request.setup_step = command.setup_step;
  request.teardown_step = command.teardown_step;
  request.record_duration = base::Seconds(command.record_duration_s);
  switch (command.loadgen) {
    case loadgen::LoadgenKind::kPgbench:
      break;
    case loadgen::LoadgenKind::kSysbench:
      request.loadgen = "sysbench";
      break;
    case loadgen::LoadgenKind::kCommand:
      request.loadgen = command.pgbench_args.empty() ? "" : command.pgbench_args.front();
      break;
    case loadgen::LoadgenKind::kNone:
      request.loadgen.clear();
      break;
  }
  return request;
}

// A daemon that already samples the target runs it, so the target is not sampled twice.
std::optional<int> try_daemons(const RunCommand& command, engine::RunRequest request) {
  request.conninfo = command.target.value_or("");
  for (const auto& socket : daemon_sockets(command)) {
    auto remote = run_through_daemon(
        socket, request,
        [&command](const std::string& line) {
          if (!command.brief) std::cerr << text_escape(line) << '\n';
        },
        [](const std::string& notice) { std::cerr << notice << '\n'; });
    if (!remote) throw std::runtime_error(remote.error().message);
    if (!*remote) continue;
    const auto& done = **remote;
    auto run = store::read_run(done.dir);
    // The daemon's word on how the run ended stands, also when its report could not be kept.
    if (!run) {
      throw std::runtime_error(fmt::format("run {}: {}", done.status,
                                           done.error.empty() ? run.error().message : done.error));
    }
    const int exit_code =
        print_report(*run, done.dir, done.exit_code,
                     std::filesystem::exists(done.dir / "report.html"), command.brief);
    upload_after(request.data_dir, {done.dir}, command.results_dsn);
    return exit_code;
  }
  return std::nullopt;
}

// Refuses what a run cannot do as asked: more tags than a run keeps, a workload beside the
// user's own scripts, --sampler-host or record without a server to go to.
void refuse_impossible(const RunCommand& command, bool scratch_target) {
  if (command.tags.size() > model::kMaxTags) {
    throw config::ConfigError(fmt::format("too many --tag options: at most {}", model::kMaxTags));
  }
  if (command.loadgen == loadgen::LoadgenKind::kPgbench && !command.workload.empty()) {
    if (auto conflict = model::workload_conflict(command.workload, command.pgbench_args)) {
      throw config::ConfigError(text_escape(*conflict));
    }
  }
  if (!command.sampler_host.empty() && scratch_target) {
    throw config::ConfigError(
        "--sampler-host needs a target: a connection string or the PG* variables of the server "
        "on that host");
  }
  if (scratch_target && command.loadgen == loadgen::LoadgenKind::kNone) {
    throw std::runtime_error(
        "record needs a target: a connection string, or the PG* variables (a scratch cluster "
        "has no load to record)");
  }
}

// The sampler's settings of a run in this process; the server's address comes when it is open.
config::TargetConfig sampler_target(const RunCommand& command) {
  config::TargetConfig target;
  // The traced source's --hz is the rate of its in-kernel on-CPU samples: 1 kHz unless asked.
  target.hz =
      command.hz.value_or(command.source == model::SamplerSource::kTrace ? config::kDefaultTraceHz
                                                                         : config::kDefaultHz);
  if (command.hz) target.trace_hz = *command.hz;
  target.source = command.source;
  target.auto_traces = true;
  target.local = command.local;
  return target;
}

// The run on its server (the target, or a scratch cluster made for it and destroyed after),
// sampled here or on --sampler-host's host.
asio::awaitable<engine::RunOutcome> run_on_server(const RunCommand& command,
                                                  engine::RunRequest& request,
                                                  engine::RunObserver& observer,
                                                  base::RunControl& control) {
  auto target = sampler_target(command);
  const LocalTargetOptions target_options{command.target, command.scale, command.keep_cluster,
                                          command.source == model::SamplerSource::kPgWaitSampling,
                                          command.server_bin};
  auto local = co_await open_local_target(target_options, control);
  if (!local) throw std::runtime_error(local.error().message);
  target.dsn = local->conninfo;
  // A scratch cluster is on this host, unless the user says to treat it as remote.
  if (local->scratch && command.local != config::LocalMode::kNo) {
    target.local = config::LocalMode::kYes;
  }
  request.conninfo = local->conninfo;
  const auto executor = co_await asio::this_coro::executor;
  auto feed = engine::make_ssh_feed(command.sampler_host, command.sampler_program, executor);
  auto outcome = co_await with_sampler<engine::RunOutcome>(
      collectors::sampler_options(target),
      [&](collectors::TargetSampler& sampler) {
        return engine::execute_run(sampler, request, observer, control);
      },
      feed.get());
  if (local->scratch) co_await local->scratch->destroy();
  co_return outcome;
}

}  // namespace

std::vector<std::filesystem::path> daemon_sockets(const RunCommand& command) {
  std::vector<std::filesystem::path> sockets;
  if (const char* socket = std::getenv("PGWAITPROF_SOCKET"); socket && *socket) {
    sockets.emplace_back(socket);
  }
  sockets.push_back(service::control_socket_path(command.data_dir.empty() ? default_data_dir()
                                                                          : command.data_dir));
  sockets.push_back(service::control_socket_path("/var/lib/pgwaitprof"));
  return sockets;
}

int run_command(const RunCommand& command) {
  const bool scratch_target =
      !command.target && (!command.server_bin.empty() || !pg_environment_set());
  refuse_impossible(command, scratch_target);
  auto request = make_request(command);
  // The control protocol does not carry --checkpoint-after or --cpu-profile: such a run
  // samples here.
  if (!scratch_target && command.sampler_host.empty() && !command.no_daemon &&
      !command.checkpoint_after && command.cpu_profile_hz == 0) {
    if (auto exit_code = try_daemons(command, request)) return *exit_code;
  }
  TerminalObserver observer(command.brief);
  const auto outcome = drive<engine::RunOutcome>(
      "pgwaitprof: stopping the run, writing its report",
      [&](base::RunControl& control) -> asio::awaitable<engine::RunOutcome> {
        co_return co_await run_on_server(command, request, observer, control);
      });
  const int exit_code = print_report(outcome.run, outcome.dir, outcome.exit_code,
                                     outcome.report_written, command.brief);
  if (outcome.report_written) upload_after(request.data_dir, {outcome.dir}, command.results_dsn);
  return exit_code;
}

}  // namespace pgwaitprof::commands
