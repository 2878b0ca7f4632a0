// Re-rendering and comparing saved runs.
#include "daemon/commands/report_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "daemon/commands/foreground.h"
#include "exporters/render/compare.h"
#include "exporters/render/report_render.h"
#include "store/results_db.h"
#include "store/run_directory.h"
#include "store/run_index.h"

namespace pgwaitprof::commands {
namespace {

model::Run load_run(const std::filesystem::path& dir) {
  auto run = store::read_run(dir);
  if (!run) throw std::runtime_error(run.error().message);
  return std::move(*run);
}

// Where run ids, labels and filter expressions are looked up: the data directory's history, or
// the results database.
struct HistorySource {
  std::filesystem::path data_dir;
  std::optional<std::string> results_dsn;
};

// Runs of the history: a run id (or unique prefix), a label or a filter expression.
void load_from_history(const std::string& item, const HistorySource& source,
                       std::vector<model::Run>& runs) {
  std::optional<store::ResultsDb> db;
  std::vector<store::RunSummary> known;
  if (source.results_dsn) {
    auto connected = store::ResultsDb::connect(*source.results_dsn);
    auto listed =
        connected ? connected->list({}) : decltype(connected->list({}))(connected.error());
    if (!listed) throw std::runtime_error(listed.error().message);
    db.emplace(std::move(*connected));
    known = std::move(*listed);
  } else {
    known = store::load_history(source.data_dir);
  }
  auto selected = store::select_runs(known, item);
  if (!selected) {
    throw std::runtime_error(fmt::format(
        "\"{}\" is neither a run directory, a matrix directory, nor a run of the history: {}", item,
        selected.error().message));
  }
  // Oldest first, as the runs of a matrix directory are.
  for (auto it = selected->rbegin(); it != selected->rend(); ++it) {
    if (!db) {
      runs.push_back(load_run(it->dir));
      continue;
    }
    auto run = db->report(it->id);
    if (!run) throw std::runtime_error(run.error().message);
    runs.push_back(std::move(*run));
  }
}

// A side of a comparison: a run directory, a matrix directory (its runs/), a directory of run
// directories, a run id, label or filter expression of the history, or a comma-separated list
// of those (a filter expression separates its terms with ';').
std::vector<model::Run> load_side(const std::string& side, const HistorySource& source) {
  std::vector<model::Run> runs;
  std::stringstream list(side);
  for (std::string item; std::getline(list, item, ',');) {
    const std::filesystem::path path(item);
    if (std::filesystem::exists(path / "report.json")) {
      runs.push_back(load_run(path));
    } else if (std::filesystem::is_directory(path)) {
      const auto parent = std::filesystem::is_directory(path / "runs") ? path / "runs" : path;
      std::vector<std::filesystem::path> dirs;
      for (const auto& entry : std::filesystem::directory_iterator(parent)) {
        dirs.push_back(entry.path());
      }
      std::sort(dirs.begin(), dirs.end());
      for (const auto& dir : dirs) {
        if (std::filesystem::exists(dir / "report.json")) runs.push_back(load_run(dir));
      }
    } else {
      load_from_history(item, source, runs);
    }
  }
  if (runs.empty()) throw std::runtime_error(fmt::format("no runs found in \"{}\"", side));
  return runs;
}

std::string side_label(const std::string& side) {
  const auto path = std::filesystem::path(side.substr(0, side.find(','))).lexically_normal();
  const auto name = (path.has_filename() ? path : path.parent_path()).filename().string();
  return side.find(',') == std::string::npos ? name : name + ",...";
}

}  // namespace

int report_command(const ReportCommand& command) {
  const auto run = load_run(command.run_dir);
  exporters::RenderOptions options;
  options.top = command.top;
  options.include_idle = command.include_idle;
  options.trim = !command.no_trim;
  static const std::map<std::string, exporters::GroupBy> groupings = {
      {"wait_event", exporters::GroupBy::kWaitEvent},
      {"backend_type", exporters::GroupBy::kBackendType},
      {"state", exporters::GroupBy::kState},
      {"wait_event_type", exporters::GroupBy::kWaitEventType},
      {"query_id", exporters::GroupBy::kQueryId}};
  options.by = groupings.at(command.by);
  const std::map<std::string, std::function<std::string()>> formats = {
      {"text", [&] { return exporters::render_text(run, options); }},
      {"md", [&] { return exporters::render_markdown(run, options); }},
      {"json", [&] { return exporters::render_json(run); }},
      {"csv", [&] { return exporters::render_profile_csv(run, options); }},
      {"timeline-csv", [&] { return exporters::render_timeline_csv(run); }},
      {"folded", [&] { return exporters::render_folded(run, options); }},
      {"html", [&] { return exporters::render_html(run, options); }}};
  std::cout << formats.at(command.format)();
  return 0;
}

// --split-by: both arguments' runs pooled, then sides by the attribute's two values.
exporters::Comparison compare_split(const CompareCommand& command, const HistorySource& source) {
  auto runs = load_side(command.side_a, source);
  auto more = load_side(command.side_b, source);
  runs.insert(runs.end(), std::make_move_iterator(more.begin()),
              std::make_move_iterator(more.end()));
  auto sides = exporters::split_by_attribute(std::move(runs), command.split_by);
  return exporters::compare_runs(sides.a, sides.b, sides.label_a, sides.label_b);
}

int compare_command(const CompareCommand& command) {
  const HistorySource source{command.data_dir.empty() ? default_data_dir() : command.data_dir,
                             command.results_dsn};
  auto comparison = command.split_by.empty()
                        ? exporters::compare_runs(
                              load_side(command.side_a, source), load_side(command.side_b, source),
                              side_label(command.side_a), side_label(command.side_b))
                        : compare_split(command, source);
  if (command.format == "md") {
    std::cout << exporters::render_comparison_markdown(comparison);
  } else if (command.format == "json") {
    std::cout << exporters::render_comparison_json(comparison);
  } else {
    std::cout << exporters::render_comparison_text(comparison);
  }
  return 0;
}

}  // namespace pgwaitprof::commands
