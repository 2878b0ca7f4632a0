// `pgwaitprof results migrate` (create or update the results database's schema) and
// `pgwaitprof results push [--backfill]` (upload the runs queued in the data directory, and with
// --backfill every run of the history not uploaded yet); the upload after `run` and `matrix`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace pgwaitprof::commands {

struct ResultsCommand {
  std::optional<std::string> dsn;
  std::filesystem::path data_dir;
  bool backfill = false;
};

void add_results_command(CLI::App& app, ResultsCommand& command);
int results_command(const CLI::App& app, const ResultsCommand& command);

// --results-dsn, else $PGWAITPROF_RESULTS_DSN; nullopt when neither is set.
std::optional<std::string> results_dsn(const std::optional<std::string>& option);

// After a run or a matrix: the run directories queued and uploaded, one line on stderr saying
// how it went. Never fails the run: a database that is down leaves them queued.
void upload_after(const std::filesystem::path& data_dir,
                  const std::vector<std::filesystem::path>& run_dirs,
                  const std::optional<std::string>& dsn_option);

}  // namespace pgwaitprof::commands
