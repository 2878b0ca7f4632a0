// Matrix sweeps.
#include "daemon/matrix.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collectors/pg_session.h"
#include "config/logging.h"
#include "daemon/atomic_file.h"
#include "daemon/foreground_run.h"
#include "daemon/local_target.h"
#include "daemon/process.h"
#include "daemon/scratch_cluster.h"
#include "exporters/matrix_table.h"

namespace pgwaitprof::daemon {
namespace {

using namespace std::chrono_literals;
constexpr auto kAsTuple = asio::experimental::as_tuple(asio::use_awaitable);

auto log() {
  static auto logger = config::component_logger("matrix");
  return logger;
}

std::string quote_literal(const std::string& value) {
  std::string quoted = "'";
  for (char character : value) {
    quoted += character;
    if (character == '\'') quoted += '\'';
  }
  return quoted + "'";
}

std::string clock_text(std::chrono::seconds seconds) {
  return fmt::format("{}:{:02}", seconds.count() / 60, seconds.count() % 60);
}

std::optional<model::Run> read_run(const std::filesystem::path& dir) {
  std::ifstream file(dir / "report.json");
  if (!file) return std::nullopt;
  try {
    return model::run_from_json(nlohmann::json::parse(file));
  } catch (const std::exception&) {
    return std::nullopt;  // a report from an older schema or a torn write: redo that run
  }
}

// Puts the server in the variant's settings: every setting any variant touches is reset
// first, so switching A -> B never leaves A's settings behind.
asio::awaitable<void> apply_settings(MatrixContext& context,
                                     const std::map<std::string, std::string>& settings) {
  std::set<std::string> touched;
  for (const auto& variant : context.plan.variants) {
    for (const auto& [name, value] : variant.settings) touched.insert(name);
  }
  if (touched.empty()) co_return;
  auto executor = co_await asio::this_coro::executor;
  collectors::PgSession session(executor);
  if (auto error = co_await session.connect(context.conninfo, 10s)) {
    throw std::runtime_error("could not connect to apply settings: " + error->message);
  }
  auto execute = [&](const std::string& sql) -> asio::awaitable<collectors::PgOutcome> {
    auto outcome = co_await session.execute(sql);
    if (!outcome.ok()) {
      throw std::runtime_error(fmt::format("could not run \"{}\": {}", sql, outcome.error->message));
    }
    co_return outcome;
  };
  for (const auto& name : touched) {
    if (!settings.contains(name)) co_await execute("ALTER SYSTEM RESET " + name);
  }
  for (const auto& [name, value] : settings) {
    co_await execute("ALTER SYSTEM SET " + name + " = " + quote_literal(value));
  }
  co_await execute("SELECT pg_reload_conf()");
  // The postmaster applies the reload asynchronously; new backends see it soon after.
  asio::steady_timer settle(executor, 300ms);
  co_await settle.async_wait(kAsTuple);
  auto pending = co_await execute("SELECT string_agg(name, ', ') FROM pg_settings WHERE pending_restart");
  const std::string restart = collectors::cell(pending.result.get(), 0, 0);
  session.close();
  if (restart.empty()) co_return;
  if (context.scratch == nullptr) {
    throw std::runtime_error(fmt::format(
        "setting(s) {} need a server restart, which pgwaitprof only does on a scratch cluster", restart));
  }
  context.say(fmt::format("matrix: restarting the scratch cluster for {}", restart));
  context.scratch->restart();
}

}  // namespace

std::string MatrixCellRun::name() const {
  std::string safe;
  for (char character : variant) safe += std::isalnum(static_cast<unsigned char>(character)) ? character : '_';
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

asio::awaitable<MatrixOutcome> execute_matrix(MatrixContext& context) {
  const auto& plan = context.plan;
  const auto order = matrix_order(plan);
  MatrixOutcome outcome;
  outcome.runs_total = static_cast<int>(order.size());
  std::filesystem::create_directories(context.dir / "runs");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const auto started = std::chrono::steady_clock::now();
  int executed = 0;

  for (size_t index = 0; index < order.size(); ++index) {
    const auto& cell = order[index];
    const auto run_dir = context.dir / "runs" / cell.name();
    if (auto done = read_run(run_dir); done && done->status == "completed") {
      ++outcome.runs_done;
      ++outcome.runs_skipped;
      continue;
    }
    if (context.control.interrupted()) break;
    std::filesystem::remove_all(run_dir);  // an interrupted or failed attempt is redone whole

    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started);
    const size_t remaining_runs = order.size() - index;
    const auto per_run = executed > 0 ? elapsed / executed : plan.duration + plan.warmup + 5s;
    context.say(fmt::format("matrix: run {}/{} variant={} clients={} repeat={}, elapsed {}, about {} left",
                            index + 1, order.size(), cell.variant, cell.clients, cell.repeat,
                            clock_text(elapsed), clock_text(std::chrono::duration_cast<std::chrono::seconds>(per_run * remaining_runs))));

    const auto& variant = *std::find_if(plan.variants.begin(), plan.variants.end(),
                                        [&](const auto& candidate) { return candidate.name == cell.variant; });
    co_await apply_settings(context, variant.settings);

    const int jobs = config::jobs_for(plan, cell.clients, cores);
    std::vector<std::string> args{"-c", std::to_string(cell.clients), "-j", std::to_string(jobs)};
    if (plan.checkpoint) {
      auto executor = co_await asio::this_coro::executor;
      collectors::PgSession session(executor);
      if (!co_await session.connect(context.conninfo, 10s)) {
        auto checkpoint = co_await session.execute("CHECKPOINT");
        if (!checkpoint.ok()) log()->warn("checkpoint before the run failed: {}", checkpoint.error->message);
      }
    }
    if (plan.warmup.count() > 0) {
      std::vector<std::string> warmup{find_executable("pgbench"), "-n", "-T", std::to_string(plan.warmup.count())};
      warmup.insert(warmup.end(), args.begin(), args.end());
      if (!context.conninfo.empty()) warmup.push_back(context.conninfo);
      auto warmed = co_await run_command_async(warmup);
      if (warmed.exit_code != 0) log()->warn("warm-up exited with code {}", warmed.exit_code);
    }

    RunRequest request;
    request.conninfo = context.conninfo;
    request.workload = plan.workload;
    request.label = plan.name.empty() ? cell.name() : plan.name + "-" + cell.name();
    request.pgbench_args = args;
    request.pgbench_args.insert(request.pgbench_args.end(), {"-T", std::to_string(plan.duration.count())});
    request.pgbench_args.insert(request.pgbench_args.end(), plan.pgbench_args.begin(), plan.pgbench_args.end());
    request.variant = cell.variant;
    request.repeat = cell.repeat;
    request.run_dir = run_dir;
    request.init_scale = plan.scale;
    const auto result = co_await context.execute(request);
    ++executed;
    if (result.run.status == "completed") ++outcome.runs_done;
    context.say(fmt::format("matrix: {} {} tps {}", cell.name(), result.run.status,
                            result.run.loadgen ? fmt::format("{:.0f}", result.run.loadgen->tps) : "-"));
  }
  outcome.interrupted = context.control.interrupted();
  // Leave the server as we found it.
  co_await apply_settings(context, {});

  std::vector<model::Run> runs;
  for (const auto& cell : order) {
    if (auto run = read_run(context.dir / "runs" / cell.name())) runs.push_back(std::move(*run));
  }
  const auto table = exporters::build_matrix_table(runs, plan.name);
  outcome.table_text = exporters::render_matrix_text(table);
  write_file_atomically(context.dir / "table.txt", outcome.table_text);
  write_file_atomically(context.dir / "table.md", exporters::render_matrix_markdown(table));
  write_file_atomically(context.dir / "table.csv", exporters::render_matrix_csv(table));
  write_file_atomically(context.dir / "table.json", exporters::render_matrix_json(table));
  write_file_atomically(context.dir / "matrix.html", exporters::render_matrix_html(table));
  co_return outcome;
}

int run_matrix_command(const MatrixCommand& command) {
  std::filesystem::path dir;
  std::filesystem::path plan_path;
  if (command.resume_dir) {
    dir = *command.resume_dir;
    plan_path = dir / "plan.yaml";
    if (!std::filesystem::exists(plan_path)) {
      throw std::runtime_error(fmt::format("could not resume \"{}\": it holds no plan.yaml", dir.string()));
    }
  } else {
    plan_path = *command.plan_path;
  }
  const auto plan = config::load_matrix_plan(plan_path);
  if (!command.resume_dir) {
    dir = (command.data_dir.empty() ? default_data_dir() : command.data_dir) / "matrix" / make_run_id(plan.name);
    std::filesystem::create_directories(dir);
    std::ifstream source(plan_path);
    write_file_atomically(dir / "plan.yaml", std::string(std::istreambuf_iterator<char>(source), {}));
  }

  const auto target = open_local_target(plan.target.empty() ? std::nullopt : std::optional(plan.target),
                                       plan.scale, false, false);
  collectors::SamplerOptions options;
  options.conninfo = target.conninfo;
  options.hz = plan.hz;
  options.source = config::Source::kActivity;
  RunControl control;
  RunObserver quiet;
  const auto outcome = run_with_sampler<MatrixOutcome>(
      options, control, "pgwaitprof: stopping the matrix after writing the current run's report",
      [&](collectors::TargetSampler& sampler) -> asio::awaitable<MatrixOutcome> {
        MatrixContext context{plan, dir, target.conninfo,
                              [&](RunRequest request) { return execute_run(sampler, std::move(request), quiet, control); },
                              target.scratch.get(), control,
                              [](const std::string& line) { std::cerr << line << '\n'; }};
        co_return co_await execute_matrix(context);
      });
  std::cout << outcome.table_text;
  std::cout << fmt::format("\nmatrix: {} ({} of {} runs completed{})\n", dir.string(), outcome.runs_done,
                           outcome.runs_total,
                           outcome.runs_skipped ? fmt::format(", {} from before", outcome.runs_skipped) : "");
  if (outcome.interrupted || outcome.runs_done < outcome.runs_total) {
    std::cerr << fmt::format("pgwaitprof: matrix {} after {} of {} runs; resume with: pgwaitprof matrix --resume {}\n",
                             outcome.interrupted ? "interrupted" : "incomplete", outcome.runs_done,
                             outcome.runs_total, dir.string());
    return 1;
  }
  return 0;
}

}  // namespace pgwaitprof::daemon
