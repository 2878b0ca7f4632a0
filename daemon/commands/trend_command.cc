// The trend command.
#include "daemon/commands/trend_command.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "daemon/commands/number_options.h"
#include "exporters/render/history_render.h"
#include "store/trend.h"

namespace pgwaitprof::commands {

void add_trend_command(CLI::App& app, TrendCommand& command) {
  auto* trend = app.add_subcommand("trend", "tps across runs, flagging runs outside the noise");
  add_history_options(trend, command.history);
  trend->add_option("--format", command.history.format, "text, md, csv, json or html")
      ->check(CLI::IsMember({"text", "md", "csv", "json", "html"}));
  trend->add_option("--group-by", command.group_by,
                    "server_version, kernel, label, host, workload or setting:NAME");
  trend->add_option("--window", command.window, "previous runs the noise is judged on")
      ->transform(integer_in_range(3, 1000));
}

int trend_command(const TrendCommand& command) {
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
  store::TrendOptions options;
  options.group_by = command.group_by;
  options.window = command.window;
  std::cout << exporters::render_trend(store::build_trend(std::move(*runs), options),
                                       command.history.format);
  return 0;
}

}  // namespace pgwaitprof::commands
