// Matrix sweeps.
#include "daemon/engine/matrix.h"

#include <fmt/format.h>
#include <unistd.h>

#include <asio/this_coro.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "base/json_text.h"
#include "base/logging.h"
#include "base/programs.h"
#include "collectors/pg_session.h"
#include "daemon/engine/fault_point.h"
#include "daemon/engine/process.h"
#include "daemon/engine/scratch_cluster.h"
#include "daemon/engine/server_settings.h"
#include "exporters/render/matrix_table.h"
#include "exporters/render/text_format.h"
#include "model/adaptive_sweep.h"
#include "model/statistics.h"
#include "store/atomic_file.h"
#include "store/run_directory.h"

namespace pgwaitprof::engine {
namespace {

using namespace std::chrono_literals;

auto matrix_log() {
  static auto logger = base::component_logger("matrix");
  return logger;
}

std::string clock_text(std::chrono::seconds seconds) {
  return fmt::format("{}:{:02}", seconds.count() / 60, seconds.count() % 60);
}

bool completed(const std::filesystem::path& run_dir) {
  auto run = store::read_run(run_dir);
  return run && run->status == model::RunStatus::kCompleted;
}

// A server the matrix runs variants on: the plan's target (or scratch cluster), or one build's
// cluster. Its settings are its own: validated, applied and restored on that server.
struct MatrixServer {
  std::string conninfo;
  ScratchCluster* scratch = nullptr;
  std::vector<std::string> variants;
  std::optional<ServerSettings> settings;
};

// The servers of a matrix: one per build of a plan of builds, else the one the context names.
std::vector<MatrixServer> matrix_servers(const MatrixContext& context) {
  std::vector<MatrixServer> servers;
  if (context.builds.empty()) {
    auto& server = servers.emplace_back(MatrixServer{context.conninfo, context.scratch, {}, {}});
    for (const auto& variant : context.plan.variants) server.variants.push_back(variant.name);
    return servers;
  }
  for (const auto& build : context.builds) {
    auto& server = servers.emplace_back(MatrixServer{build.conninfo, build.scratch, {}, {}});
    for (const auto& variant : context.plan.variants) {
      if (variant.server_bin == build.server_bin) server.variants.push_back(variant.name);
    }
  }
  return servers;
}

MatrixServer& server_of(std::vector<MatrixServer>& servers, const std::string& variant) {
  for (auto& server : servers) {
    if (std::find(server.variants.begin(), server.variants.end(), variant) !=
        server.variants.end()) {
      return server;
    }
  }
  throw std::logic_error(fmt::format("no server for variant \"{}\"", variant));
}

// The server in the variant's settings; a restart where one is needed (scratch clusters only:
// ServerSettings::prepare refused restart-only settings elsewhere).
asio::awaitable<base::Status> apply_variant(MatrixContext& context, MatrixServer& server,
                                            const config::Variant& variant) {
  ServerSettings& settings = *server.settings;
  if (settings.empty()) co_return std::nullopt;
  auto restart = co_await settings.apply(variant.settings);
  if (!restart) co_return restart.error();
  if (restart->empty()) co_return std::nullopt;
  if (server.scratch == nullptr) {
    co_return base::Error{
        fmt::format("setting(s) {} need a server restart", fmt::join(*restart, ", "))};
  }
  context.say(
      fmt::format("matrix: restarting the scratch cluster for {}", fmt::join(*restart, ", ")));
  co_return co_await server.scratch->restart();
}

// An optional checkpoint and an unmeasured warm-up before a measured run.
asio::awaitable<void> before_run(MatrixContext& context, const std::string& conninfo,
                                 const std::vector<std::string>& args) {
  const auto& plan = context.plan;
  if (plan.checkpoint) {
    auto executor = co_await asio::this_coro::executor;
    collectors::PgSession session(executor);
    if (!co_await session.connect(conninfo, 10s)) {
      auto checkpoint = co_await session.execute("CHECKPOINT");
      if (!checkpoint.ok()) {
        matrix_log()->warn("checkpoint before the run failed: {}", checkpoint.error->message);
      }
    }
  }
  if (plan.warmup.count() == 0 || context.control.interrupted() || plan.loadgen != "pgbench") {
    co_return;
  }
  std::vector<std::string> warmup{base::find_executable("pgbench"), "-n", "-T",
                                  std::to_string(plan.warmup.count())};
  warmup.insert(warmup.end(), args.begin(), args.end());
  SpawnOptions options;
  if (!conninfo.empty()) {
    const auto split = collectors::split_password(conninfo);
    warmup.push_back(split.conninfo);
    if (!split.password.empty()) options.environment.push_back("PGPASSWORD=" + split.password);
  }
  auto warmed = co_await run_command_async(warmup, options,
                                           [&](pid_t pid) { context.control.set_child(pid); });
  context.control.clear_child();
  if (!warmed || warmed->exit_code != 0) matrix_log()->warn("the warm-up run failed");
}

RunRequest cell_request(const MatrixContext& context, const MatrixServer& server,
                        const MatrixCellRun& cell, const std::vector<std::string>& args) {
  const auto& plan = context.plan;
  RunRequest request;
  request.conninfo = server.conninfo;
  const bool settings_journaled = server.settings && server.settings->journaled();
  request.holds_settings_lock = settings_journaled;
  const auto variant = std::find_if(plan.variants.begin(), plan.variants.end(),
                                    [&](const auto& v) { return v.name == cell.variant; });
  request.workload = variant != plan.variants.end() && !variant->workload.empty()
                         ? variant->workload
                         : plan.workload;
  request.label = plan.name.empty() ? cell.name() : plan.name + "-" + cell.name();
  request.pgbench_args = args;
  if (plan.transactions > 0) {
    request.pgbench_args.insert(request.pgbench_args.end(),
                                {"-t", std::to_string(plan.transactions)});
  } else if (!config::fixed_work(plan)) {
    request.pgbench_args.insert(request.pgbench_args.end(),
                                {"-T", std::to_string(plan.duration.count())});
  }
  request.checkpoint_after = plan.checkpoint_after;
  request.cpu_profile_hz = plan.cpu_profile_hz;
  request.pgbench_args.insert(request.pgbench_args.end(), plan.pgbench_args.begin(),
                              plan.pgbench_args.end());
  request.variant = cell.variant;
  request.repeat = cell.repeat;
  request.run_dir = context.dir / "runs" / cell.name();
  request.init_scale = plan.scale;
  if (const auto kind = loadgen::parse_loadgen_kind(plan.loadgen);
      kind && *kind != loadgen::LoadgenKind::kPgbench) {
    // sysbench or a command: the plan's args for this cell instead of pgbench's.
    request.kind = *kind;
    const config::Variant none;
    request.pgbench_args = config::cell_loadgen_args(
        plan, variant != plan.variants.end() ? *variant : none, cell.clients);
    request.loadgen = *kind == loadgen::LoadgenKind::kSysbench ? "sysbench"
                      : request.pgbench_args.empty()           ? ""
                                                               : request.pgbench_args.front();
    request.setup_step = plan.setup;
    request.teardown_step = plan.teardown;
  }
  return request;
}

void announce(MatrixContext& context, const MatrixCellRun& cell, size_t index, size_t total,
              std::chrono::seconds elapsed, int executed) {
  const auto& plan = context.plan;
  const auto per_run = executed > 0 ? elapsed / executed : plan.duration + plan.warmup + 5s;
  const auto left =
      std::chrono::duration_cast<std::chrono::seconds>(per_run * static_cast<long>(total - index));
  context.say(fmt::format(
      "matrix: run {}/{} variant={} clients={} repeat={}, elapsed {}, about {} left", index + 1,
      total, cell.variant, cell.clients, cell.repeat, clock_text(elapsed), clock_text(left)));
}

// Where the cells of a matrix are in its execution: for the progress lines.
struct CellProgress {
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  int executed = 0;
};

// The cells of `order` in order (skipping those a resumed directory has completed); stops at the
// first error that concerns the whole matrix.
asio::awaitable<base::Status> run_cells(MatrixContext& context, std::vector<MatrixServer>& servers,
                                        const std::vector<MatrixCellRun>& order,
                                        MatrixOutcome& outcome, CellProgress& progress) {
  const auto& plan = context.plan;
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const auto started = progress.started;
  int& executed = progress.executed;
  for (size_t index = 0; index < order.size(); ++index) {
    const auto& cell = order[index];
    const auto run_dir = context.dir / "runs" / cell.name();
    if (completed(run_dir)) {
      ++outcome.runs_done;
      ++outcome.runs_skipped;
      continue;
    }
    if (executed > 0) co_await fault_point("between-cells", context.control);
    if (context.control.interrupted()) break;
    std::error_code ignored;
    std::filesystem::remove_all(run_dir, ignored);  // a failed attempt is redone whole
    announce(context, cell, index, order.size(),
             std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                              started),
             executed);
    const auto& variant = *std::find_if(plan.variants.begin(), plan.variants.end(),
                                        [&](const auto& v) { return v.name == cell.variant; });
    auto& server = server_of(servers, cell.variant);
    if (auto failed = co_await apply_variant(context, server, variant)) co_return failed;
    const int jobs = config::jobs_for(plan, cell.clients, cores);
    const std::vector<std::string> args{"-c", std::to_string(cell.clients), "-j",
                                        std::to_string(jobs)};
    co_await before_run(context, server.conninfo, args);
    auto request = cell_request(context, server, cell, args);
    const auto result = co_await context.execute(std::move(request));
    ++executed;
    if (result.run.status == model::RunStatus::kCompleted) ++outcome.runs_done;
    const auto figure = model::run_figure(result.run, plan.metric);
    context.say(fmt::format(
        "matrix: {} {} {} {}", cell.name(), to_string(result.run.status),
        plan.metric == model::Metric::kDuration ? "elapsed s" : "tps",
        figure ? fmt::format("{:.{}f}", *figure, plan.metric == model::Metric::kDuration ? 2 : 0)
               : "-"));
  }
  co_return std::nullopt;
}

// The median tps of each client count measured so far, per variant, from the run directories
// (so that a resumed sweep decides as the first attempt did); 0 where no run completed.
std::vector<std::map<int, double>> measured_tps(const MatrixContext& context) {
  std::vector<std::map<int, double>> measured;
  for (const auto& variant : context.plan.variants) {
    auto& counts = measured.emplace_back();
    for (int clients : context.plan.clients) {
      std::vector<double> figures;
      for (int repeat = 1; repeat <= context.plan.repeats; ++repeat) {
        const MatrixCellRun cell{variant.name, clients, repeat};
        const auto run = store::read_run(context.dir / "runs" / cell.name());
        if (!run || run->status != model::RunStatus::kCompleted) continue;
        if (const auto tps = model::run_figure(*run, model::Metric::kTps)) figures.push_back(*tps);
      }
      counts[clients] = model::median(std::move(figures));
    }
  }
  return measured;
}

// `clients: auto`: rounds of runs, each at the counts the sweep asks for next
// (model/adaptive_sweep.h), every variant and repeat of a count in the matrix's order.
asio::awaitable<base::Status> run_adaptive_sweep(MatrixContext& context,
                                                 std::vector<MatrixServer>& servers,
                                                 MatrixOutcome& outcome) {
  auto& plan = context.plan;
  plan.clients.clear();
  const model::AdaptiveSweepOptions options{.max_clients = plan.max_clients};
  CellProgress progress;
  while (!context.control.interrupted()) {
    const auto next = model::next_client_counts_of_variants(measured_tps(context), options);
    if (next.empty()) break;
    context.say(fmt::format("matrix: clients auto: next {}", fmt::join(next, ", ")));
    config::MatrixPlan round = plan;
    round.clients = next;
    const auto order = matrix_order(round);
    outcome.runs_total += static_cast<int>(order.size());
    plan.clients.insert(plan.clients.end(), next.begin(), next.end());
    std::sort(plan.clients.begin(), plan.clients.end());
    if (auto failed = co_await run_cells(context, servers, order, outcome, progress)) {
      co_return failed;
    }
  }
  co_return std::nullopt;
}

base::Status write_tables(MatrixContext& context, MatrixOutcome& outcome) {
  std::vector<model::Run> runs;
  for (const auto& cell : matrix_order(context.plan)) {
    auto run = store::read_run(context.dir / "runs" / cell.name());
    if (!run) continue;
    // The table's columns are the plan's client counts: a run that failed before its load
    // generator started, written by an older pgwaitprof, says 0.
    run->clients = cell.clients;
    runs.push_back(std::move(*run));
  }
  auto table = exporters::build_matrix_table(runs, context.plan.name, context.plan.metric,
                                             context.plan.split_by);
  if (config::has_builds(context.plan)) {
    std::map<std::string, std::string> configure;
    for (const auto& variant : context.plan.variants) {
      configure[variant.name] = configure_options(variant.server_bin);
    }
    model::set_builds(table, runs, configure);
  }
  outcome.table_text = exporters::render_matrix_text(table);
  const std::pair<const char*, std::string> files[] = {
      {"table.txt", outcome.table_text},
      {"table.md", exporters::render_matrix_markdown(table)},
      {"table.csv", exporters::render_matrix_csv(table)},
      {"table.json", exporters::render_matrix_json(table)},
      {"matrix.html", exporters::render_matrix_html(table)}};
  for (const auto& [name, text] : files) {
    if (auto failed = store::write_file_atomically(context.dir / name, text)) return failed;
  }
  return std::nullopt;
}

}  // namespace

void write_matrix_status(const std::filesystem::path& dir, const MatrixOutcome& outcome) {
  const char* status = !outcome.error.empty()                   ? "failed"
                       : outcome.interrupted                    ? "interrupted"
                       : outcome.runs_done < outcome.runs_total ? "incomplete"
                                                                : "completed";
  const nlohmann::json json = {{"status", status},
                               {"error", outcome.error},
                               {"runs_total", outcome.runs_total},
                               {"runs_done", outcome.runs_done}};
  if (auto failed =
          store::write_file_atomically(dir / "status.json", base::json_text(json, 2) + "\n")) {
    matrix_log()->error("could not write matrix status dir={}: {}", dir.string(), failed->message);
  }
}

std::string MatrixCellRun::name() const {
  std::string safe;
  for (char character : variant) {
    safe += std::isalnum(static_cast<unsigned char>(character)) ? character : '_';
  }
  return fmt::format("{}-c{}-r{}", safe, clients, repeat);
}

std::vector<MatrixCellRun> matrix_order(const config::MatrixPlan& plan) {
  std::vector<MatrixCellRun> order;
  for (int repeat = 1; repeat <= plan.repeats; ++repeat) {
    for (int clients : plan.clients) {
      for (const auto& variant : plan.variants) order.push_back({variant.name, clients, repeat});
    }
  }
  return order;
}

namespace {

// Validates the settings of each server's variants on that server, before the first run: a plan
// whose settings a server would refuse fails here, having changed nothing. A server that
// outlives pgwaitprof gets a journal before anything changes; a scratch cluster goes with
// pgwaitprof (engine/supervisor.h).
asio::awaitable<base::Status> prepare_settings(MatrixContext& context,
                                               std::vector<MatrixServer>& servers) {
  for (auto& server : servers) {
    std::vector<std::map<std::string, std::string>> variants;
    for (const auto& variant : context.plan.variants) {
      if (std::find(server.variants.begin(), server.variants.end(), variant.name) !=
          server.variants.end()) {
        variants.push_back(variant.settings);
      }
    }
    // (A named local, not a temporary in the co_await: GCC 12 destroys a conditional
    // expression's temporary there twice.)
    std::optional<std::filesystem::path> journal;
    if (server.scratch == nullptr) journal = context.dir / "settings-journal.json";
    const bool can_restart = server.scratch != nullptr;
    auto settings =
        co_await ServerSettings::prepare(server.conninfo, variants, can_restart, journal);
    if (!settings) co_return settings.error();
    server.settings.emplace(std::move(*settings));
  }
  co_return std::nullopt;
}

// Leaves every server as the matrix found it, whatever happened; the first error.
asio::awaitable<base::Status> restore_settings(std::vector<MatrixServer>& servers) {
  base::Status failed;
  for (auto& server : servers) {
    if (!server.settings || server.settings->empty()) continue;
    auto restored = co_await server.settings->restore();
    if (!restored) {
      matrix_log()->error("could not restore the server's settings: {}", restored.error().message);
      if (!failed) failed = restored.error();
    } else if (!restored->empty() && server.scratch != nullptr) {
      (void)co_await server.scratch->restart();
    }
  }
  co_return failed;
}

}  // namespace

std::string configure_options(const std::filesystem::path& server_bin) {
  const auto pg_config = server_bin / "pg_config";
  if (server_bin.empty() || ::access(pg_config.c_str(), X_OK) != 0) return "";
  const auto result = run_command({pg_config.string(), "--configure"});
  if (result.exit_code != 0) return "";
  std::string text = result.output;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

asio::awaitable<MatrixOutcome> execute_matrix(MatrixContext& context) {
  MatrixOutcome outcome;
  outcome.runs_total = static_cast<int>(matrix_order(context.plan).size());
  // A resumed matrix killed while it wrote a cell's report: that cell's files made whole first.
  (void)store::finish_interrupted_writes(context.dir);
  base::Status failed = store::create_private_directories(context.dir / "runs");
  auto servers = matrix_servers(context);
  if (!failed) failed = co_await prepare_settings(context, servers);
  if (!failed && context.plan.clients_auto) {
    failed = co_await run_adaptive_sweep(context, servers, outcome);
  } else if (!failed) {
    CellProgress progress;
    const auto order = matrix_order(context.plan);
    failed = co_await run_cells(context, servers, order, outcome, progress);
  }
  auto restore_failed = co_await restore_settings(servers);
  if (!failed) failed = restore_failed;
  outcome.interrupted = context.control.interrupted();
  if (failed) outcome.error = failed->message;
  if (auto table_failed = write_tables(context, outcome)) {
    if (outcome.error.empty()) outcome.error = table_failed->message;
  }
  write_matrix_status(context.dir, outcome);
  co_return outcome;
}

std::string plan_text_without_password(const std::string& plan_text, const std::string& target) {
  const auto split = collectors::split_password(target);
  std::string text = plan_text;
  if (!split.password.empty()) {
    for (size_t at = text.find(target); at != std::string::npos;
         at = text.find(target, at + split.conninfo.size())) {
      text.replace(at, target.size(), split.conninfo);
    }
  }
  // Whatever form the target took (quoted, folded), no password may survive in the copy.
  return collectors::mask_secrets(text);
}

}  // namespace pgwaitprof::engine
