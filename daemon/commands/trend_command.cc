// The trend command.
#include "daemon/commands/trend_command.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "daemon/commands/number_options.h"
#include "daemon/commands/report_command.h"
#include "exporters/render/history_render.h"
#include "store/trend.h"

namespace pgwaitprof::commands {

void add_trend_command(CLI::App& app, TrendCommand& command) {
  auto* trend = app.add_subcommand(
      "trend", "change points of tps, p99 latency and waits across runs, each explained");
  add_history_options(trend, command.history);
  trend->add_option("--format", command.history.format, "text, md, csv, json or html")
      ->check(CLI::IsMember({"text", "md", "csv", "json", "html"}));
  trend->add_option("--group-by", command.group_by,
                    "server_version, kernel, label, host, workload or setting:NAME");
  trend
      ->add_option("--rule", command.rule,
                   "changes (change points over each group's series) or mad (each run against "
                   "the previous --window runs' median and MAD)")
      ->check(CLI::IsMember({"changes", "mad"}));
  trend->add_option("--window", command.window, "mad: previous runs the noise is judged on")
      ->transform(integer_in_range(3, 1000));
  const auto add_number = [trend](const char* name, double& value, const char* help, double min,
                                  double max) {
    trend->add_option(name, value, help)->transform(finite_in_range(min, max));
  };
  add_number("--false-positive", command.false_positive,
             "changes: accepted probability of a change point in a series without change", 0.0001,
             0.5);
  add_number("--min-change", command.min_change_pct,
             "changes: smallest step that matters, in % of the level before it", 0, 1000);
  add_number("--wait-share", command.wait_share_pct,
             "changes: waits reaching this % of the non-idle samples in a run get a series", 0,
             100);
  trend
      ->add_option("--between", command.between,
                   "a period A..B (dates, times or ages as --since takes them) to compare with "
                   "--and's, as compare does")
      ->needs(trend->add_option("--and", command.and_period, "the second period C..D"));
}

namespace {

// "A..B" and the trend's filters as one of compare's filter expressions.
base::Expected<std::string> period_expression(const std::string& option, const std::string& period,
                                              const store::FilterOptions& filter) {
  const auto dots = period.find("..");
  if (dots == std::string::npos || dots == 0 || dots + 2 >= period.size()) {
    return base::Error{
        fmt::format("invalid value for {}: \"{}\" (a period is FROM..TO)", option, period)};
  }
  store::FilterOptions side = filter;
  side.since = period.substr(0, dots);
  side.until = period.substr(dots + 2);
  if (auto checked = store::make_filter(side); !checked) {
    return base::Error{
        fmt::format("invalid value for {}: \"{}\" ({})", option, period, checked.error().message)};
  }
  std::string expression = "since=" + *side.since + ";until=" + *side.until;
  const std::vector<std::pair<const char*, const std::optional<std::string>*>> terms = {
      {"label", &side.label},
      {"workload", &side.workload},
      {"status", &side.status},
      {"host", &side.host}};
  for (const auto& [key, value] : terms) {
    if (*value) expression += fmt::format(";{}={}", key, **value);
  }
  for (const auto& setting : side.settings) expression += ";setting." + setting;
  for (const auto& tag : side.tags) expression += ";tag." + tag;
  return expression;
}

int compare_periods(const TrendCommand& command) {
  const auto& filter = command.history.filter;
  if (filter.since || filter.until) {
    std::cerr << "pgwaitprof: --between and --and take the place of --since and --until\n";
    return 2;
  }
  if (command.history.format != "text" && command.history.format != "md" &&
      command.history.format != "json") {
    std::cerr << "pgwaitprof: --between compares as compare does: --format text, md or json\n";
    return 2;
  }
  const auto side_a = period_expression("--between", command.between, filter);
  const auto side_b = period_expression("--and", command.and_period, filter);
  for (const auto* side : {&side_a, &side_b}) {
    if (!*side) {
      std::cerr << "pgwaitprof: " << side->error().message << '\n';
      return 2;
    }
  }
  CompareCommand compare;
  compare.side_a = *side_a;
  compare.side_b = *side_b;
  compare.data_dir = command.history.data_dir;
  compare.results_dsn = command.history.results_dsn;
  compare.format = command.history.format;
  try {
    return compare_command(compare);
  } catch (const std::exception& error) {
    std::cerr << "pgwaitprof: " << error.what() << '\n';
    return 1;
  }
}

int trend_changes(const TrendCommand& command, std::vector<store::RunSummary> runs) {
  store::ChangeOptions options;
  options.group_by = command.group_by;
  options.method.false_positive = command.false_positive;
  options.method.min_relative_change = command.min_change_pct / 100;
  options.wait_share = command.wait_share_pct / 100;
  auto changes = store::find_trend_changes(std::move(runs), options);
  if (!changes) {
    std::cerr << "pgwaitprof: " << changes.error().message << '\n';
    return 2;
  }
  std::cout << exporters::render_trend_changes(*changes, command.history.format);
  return 0;
}

}  // namespace

int trend_command(const TrendCommand& command) {
  if (!command.between.empty()) return compare_periods(command);
  if (!store::valid_group_by(command.group_by)) {
    std::cerr << "pgwaitprof: invalid value for --group-by: \"" << command.group_by << "\"\n";
    return 2;
  }
  auto filter = store::make_filter(command.history.filter);
  if (!filter) {
    std::cerr << "pgwaitprof: " << filter.error().message << '\n';
    return 2;
  }
  auto runs = load_runs(command.history, *filter);
  if (!runs) {
    std::cerr << "pgwaitprof: " << runs.error().message << '\n';
    return 1;
  }
  if (command.rule == "changes") return trend_changes(command, std::move(*runs));
  store::TrendOptions options;
  options.group_by = command.group_by;
  options.window = command.window;
  std::cout << exporters::render_trend(store::build_trend(std::move(*runs), options),
                                       command.history.format);
  return 0;
}

}  // namespace pgwaitprof::commands
