// `pgwaitprof trend`: tps with its confidence interval across the runs of the history (the
// filters of `runs`), in time order or by group, each run checked against the noise of the runs
// before it (store/trend.h states the rule).
#pragma once

#include <cstddef>
#include <string>

#include "daemon/commands/runs_command.h"

namespace pgwaitprof::commands {

struct TrendCommand {
  HistoryOptions history;
  std::string group_by;
  size_t window = 5;
};

void add_trend_command(CLI::App& app, TrendCommand& command);
int trend_command(const TrendCommand& command);

}  // namespace pgwaitprof::commands
