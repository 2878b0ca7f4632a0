// The run history commands.
#include "daemon/commands/runs_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <map>

#include "daemon/commands/exit_codes.h"
#include "daemon/commands/foreground.h"
#include "exporters/render/history_render.h"
#include "exporters/render/report_render.h"
#include "exporters/render/text_format.h"
#include "model/scalability.h"
#include "model/statistics.h"
#include "store/results_db.h"
#include "store/run_directory.h"
#include "store/run_index.h"

namespace pgwaitprof::commands {
namespace {}  // namespace

void add_history_options(CLI::App* app, HistoryOptions& options) {
  auto& filter = options.filter;
  app->add_option("--data-dir", options.data_dir, "the data directory whose runs are read");
  app->add_option("--label", filter.label, "runs whose label matches the glob");
  app->add_option("--workload", filter.workload, "runs of the workload");
  app->add_option("--since", filter.since, "runs started at or after: 2026-11-30[T12:00], or 7d");
  app->add_option("--until", filter.until, "runs started at or before, as --since");
  app->add_option("--status", filter.status, "completed, interrupted or failed");
  app->add_option("--setting", filter.settings,
                  "NAME=VALUE among the run's recorded non-default settings (repeatable)");
  app->add_option("--host", filter.host, "runs of the host (a glob)");
  app->add_option("--tag", filter.tags,
                  "KEY=GLOB: runs tagged so by run/record --tag (repeatable)");
  app->add_option("--results-dsn", options.results_dsn,
                  "read the runs of every host from this results database");
}

namespace {

int show(const HistoryOptions& options, const std::vector<store::RunSummary>& runs,
         const std::string& key) {
  auto found = store::resolve_run(runs, key);
  if (!found) {
    std::cerr << "pgwaitprof: " << found.error().message << '\n';
    return kExitFailure;
  }
  base::Expected<model::Run> run = base::Error{""};
  if (options.results_dsn) {
    auto db = store::ResultsDb::connect(*options.results_dsn);
    run = db ? db->report(found->id) : base::Expected<model::Run>(db.error());
  } else {
    run = store::read_run(found->dir);
  }
  if (!run) {
    std::cerr << "pgwaitprof: " << run.error().message << '\n';
    return kExitFailure;
  }
  std::cout << exporters::render_text(*run);
  return 0;
}

bool confirmed(size_t count) {
  if (!isatty(STDIN_FILENO)) return false;
  std::cerr << fmt::format("remove {} run director{}? [y/N] ", count, count == 1 ? "y" : "ies");
  std::string answer;
  std::getline(std::cin, answer);
  return answer == "y" || answer == "Y" || answer == "yes";
}

int prune(const RunsCommand& command, const std::vector<store::RunSummary>& runs) {
  auto bound = store::parse_time_bound("--older-than", command.older_than, false);
  if (!store::parse_age(command.older_than) || !bound) {
    std::cerr << fmt::format(
        "pgwaitprof: invalid value for --older-than: \"{}\"\nHINT: Give an age such as 90d, "
        "12h or 2w.\n",
        command.older_than);
    return kExitUsage;
  }
  std::vector<const store::RunSummary*> old;
  for (const auto& run : runs) {
    if (run.started_at.substr(0, 19) < *bound) old.push_back(&run);
  }
  if (old.empty()) {
    std::cout << "no runs older than " << command.older_than << '\n';
    return 0;
  }
  for (const auto* run : old) {
    std::cout << exporters::text_format::text_escape(run->started_at.substr(0, 19)) << "  "
              << exporters::text_format::text_escape(run->dir) << '\n';
  }
  if (!command.yes && !confirmed(old.size())) {
    std::cerr << "pgwaitprof: nothing removed\nHINT: Pass --yes to remove without asking.\n";
    return isatty(STDIN_FILENO) ? 0 : kExitUsage;
  }
  for (const auto* run : old) {
    std::error_code error;
    std::filesystem::remove_all(run->dir, error);
    if (error) {
      std::cerr << fmt::format("pgwaitprof: could not remove directory \"{}\": {}\n", run->dir,
                               error.message());
      return kExitFailure;
    }
  }
  store::load_history(history_data_dir(command.history));  // drops them from the index
  std::cout << fmt::format("removed {} run{}\n", old.size(), old.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace

std::filesystem::path history_data_dir(const HistoryOptions& options) {
  return options.data_dir.empty() ? default_data_dir() : options.data_dir;
}

base::Expected<std::vector<store::RunSummary>> load_runs(const HistoryOptions& options,
                                                         const store::RunFilter& filter) {
  if (options.results_dsn) {
    auto db = store::ResultsDb::connect(*options.results_dsn);
    if (!db) return db.error();
    return db->list(filter);
  }
  std::vector<std::string> warnings;
  const auto all = store::load_history(history_data_dir(options), &warnings);
  for (const auto& warning : warnings) std::cerr << "pgwaitprof: warning: " << warning << '\n';
  return store::filter_runs(all, filter);
}

void add_runs_command(CLI::App& app, RunsCommand& command) {
  auto* runs = app.add_subcommand("runs", "the run history: list, show and prune runs");
  add_history_options(runs, command.history);
  runs->add_option("--format", command.history.format,
                   "text, md, csv, json, or scaling (the runs side by side by client count)")
      ->check(CLI::IsMember({"text", "md", "csv", "json", "scaling"}));
  auto* show = runs->add_subcommand("show", "a run's report by id, id prefix or label");
  show->add_option("id", command.show_key, "run id, unambiguous id prefix, or label")->required();
  auto* prune = runs->add_subcommand("prune", "remove runs older than an age");
  prune->add_option("--older-than", command.older_than, "an age: 90d, 12h, 2w")->required();
  prune->add_flag("--yes", command.yes, "do not ask");
  // `runs show ID --data-dir DIR` as well as `runs --data-dir DIR show ID`: the options of
  // `runs` are taken after its subcommands too.
  show->fallthrough();
  prune->fallthrough();
}

namespace {

// Where the runs stop scaling: the median whole-run tps per client count (the steady state's
// where the load generator gave none) against one client's (model::find_knee; three counts are
// too few for the scalability law's fit, which needs four).
model::Knee scaling_knee(const std::vector<store::RunSummary>& runs) {
  std::map<int, std::vector<double>> by_clients;
  for (const auto& run : runs) {
    const double tps = std::isfinite(run.whole_run_tps) ? run.whole_run_tps : run.tps;
    if (run.clients > 0 && std::isfinite(tps) && tps > 0) by_clients[run.clients].push_back(tps);
  }
  std::vector<model::ScalabilityCell> cells;
  for (const auto& [clients, tps] : by_clients) {
    model::ScalabilityCell cell;
    cell.clients = clients;
    cell.tps_median = model::median(tps);
    cells.push_back(std::move(cell));
  }
  return model::find_knee(cells, model::UslFit{});
}

}  // namespace

int runs_command(const CLI::App& app, const RunsCommand& command) {
  auto filter = store::make_filter(command.history.filter);
  if (!filter) {
    std::cerr << "pgwaitprof: " << filter.error().message << '\n';
    return kExitUsage;
  }
  const auto* runs_app = app.get_subcommand("runs");
  if (runs_app->get_subcommand("prune")->parsed() && command.history.results_dsn) {
    std::cerr << "pgwaitprof: runs prune cannot be used with --results-dsn\n";
    return kExitUsage;
  }
  const auto loaded = load_runs(command.history, *filter);
  if (!loaded) {
    std::cerr << "pgwaitprof: " << loaded.error().message << '\n';
    return kExitFailure;
  }
  const auto& runs = *loaded;
  if (runs_app->get_subcommand("show")->parsed())
    return show(command.history, runs, command.show_key);
  if (runs_app->get_subcommand("prune")->parsed()) return prune(command, runs);
  if (command.history.format == "scaling") {
    std::cout << exporters::render_scaling(runs, scaling_knee(runs));
    return 0;
  }
  std::cout << exporters::render_runs(runs, command.history.format);
  return 0;
}

}  // namespace pgwaitprof::commands
