// `pgwaitprof trend`: the change points of the history (the filters of `runs`, per group) in
// tps, p99 latency and the waits' AAS, each explained (store/trend_changes.h); with --rule mad
// the older rule, tps of each run against the noise of the runs before it (store/trend.h).
#pragma once

#include <cstddef>
#include <string>

#include "daemon/commands/runs_command.h"

namespace pgwaitprof::commands {

struct TrendCommand {
  HistoryOptions history;
  std::string group_by;
  size_t window = 5;
  // "changes" (change points, the default) or "mad" (each run against the previous `window`).
  std::string rule = "changes";
  double false_positive = 0.01;
  double min_change_pct = 2;
  double wait_share_pct = 5;
  // --between A..B --and C..D: the two periods compared with compare's statistics.
  std::string between, and_period;
};

void add_trend_command(CLI::App& app, TrendCommand& command);
int trend_command(const TrendCommand& command);

}  // namespace pgwaitprof::commands
