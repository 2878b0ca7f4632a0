// `pgwaitprof runs` (the run history of the data directory, filtered), `runs show ID` (a run's
// report by id, id prefix or label) and `runs prune --older-than AGE`; `pgwaitprof trend` (tps
// across runs with a control-limit rule). They read the index of store/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "store/run_filter.h"

namespace CLI {
class App;
}

namespace pgwaitprof::commands {

struct HistoryOptions {
  std::filesystem::path data_dir;  // default: default_data_dir()
  store::FilterOptions filter;
  std::string format = "text";
  std::optional<std::string> results_dsn;  // read the results database instead
};

struct RunsCommand {
  HistoryOptions history;
  std::string show_key;    // `runs show`
  std::string older_than;  // `runs prune`
  bool yes = false;
};

// The data directory and filter options `runs`, `trend` share.
void add_history_options(CLI::App* app, HistoryOptions& options);
void add_runs_command(CLI::App& app, RunsCommand& command);

// Exit codes: 0, 1 on failure, 2 on a usage error (after its one-line message).
int runs_command(const CLI::App& app, const RunsCommand& command);

// --data-dir, else default_data_dir().
std::filesystem::path history_data_dir(const HistoryOptions& options);

// The runs the options select, newest first: of the data directory's index, or of the results
// database with --results-dsn. Warnings (unreadable reports) go to stderr.
base::Expected<std::vector<store::RunSummary>> load_runs(const HistoryOptions& options,
                                                         const store::RunFilter& filter);

}  // namespace pgwaitprof::commands
