// The results database commands.
#include "daemon/commands/results_command.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "daemon/commands/exit_codes.h"
#include "daemon/commands/foreground.h"
#include "exporters/render/report_render.h"
#include "store/results_db.h"

namespace pgwaitprof::commands {
namespace {

int report_push(const store::PushResult& result) {
  std::cout << fmt::format("uploaded {} run{}, {} pending\n", result.uploaded,
                           result.uploaded == 1 ? "" : "s", result.pending);
  for (const auto& refused : result.refused) std::cerr << "pgwaitprof: " << refused << '\n';
  if (!result.error.empty()) std::cerr << "pgwaitprof: " << result.error << '\n';
  // A queued run that could not be read, or that the database refused, was dropped from the
  // queue: that needs a look too.
  return result.pending == 0 && result.error.empty() && result.refused.empty() ? 0 : kExitFailure;
}

}  // namespace

std::optional<std::string> results_dsn(const std::optional<std::string>& option) {
  if (option) return option;
  if (const char* dsn = std::getenv("PGWAITPROF_RESULTS_DSN"); dsn && *dsn) return dsn;
  return std::nullopt;
}

void add_results_command(CLI::App& app, ResultsCommand& command) {
  auto* results = app.add_subcommand("results", "the shared results database");
  results->require_subcommand(1);
  const auto add_common = [&](CLI::App* sub) {
    sub->add_option("--results-dsn", command.dsn,
                    "connection string of the results database (or $PGWAITPROF_RESULTS_DSN)");
    sub->add_option("--data-dir", command.data_dir, "whose queued runs are pushed");
  };
  add_common(results->add_subcommand("migrate", "create or update the schema pgwaitprof"));
  auto* push = results->add_subcommand("push", "upload the queued runs");
  add_common(push);
  push->add_flag("--backfill", command.backfill, "and every run of the history not uploaded yet");
}

int results_command(const CLI::App& app, const ResultsCommand& command) {
  const auto dsn = results_dsn(command.dsn);
  if (!dsn) {
    std::cerr << "pgwaitprof: no results database given\n"
                 "HINT: Pass --results-dsn or set PGWAITPROF_RESULTS_DSN.\n";
    return kExitUsage;
  }
  const auto data_dir = command.data_dir.empty() ? default_data_dir() : command.data_dir;
  const auto* results = app.get_subcommand("results");
  if (results->get_subcommand("migrate")->parsed()) {
    auto db = store::ResultsDb::connect(*dsn);
    auto applied = db ? db->migrate() : base::Expected<int>(db.error());
    auto version = applied ? db->schema_version() : base::Expected<int>(applied.error());
    if (!version) {
      std::cerr << "pgwaitprof: " << version.error().message << '\n';
      return kExitFailure;
    }
    std::cout << fmt::format("schema pgwaitprof at version {} ({} migration{} applied)\n", *version,
                             *applied, *applied == 1 ? "" : "s");
    return 0;
  }
  return report_push(command.backfill
                         ? store::backfill(data_dir, *dsn, &exporters::render_json)
                         : store::push_pending(data_dir, *dsn, &exporters::render_json));
}

void upload_after(const std::filesystem::path& data_dir,
                  const std::vector<std::filesystem::path>& run_dirs,
                  const std::optional<std::string>& dsn_option) {
  const auto dsn = results_dsn(dsn_option);
  if (!dsn || run_dirs.empty()) return;
  const auto result = store::upload_runs(data_dir, run_dirs, *dsn, &exporters::render_json);
  for (const auto& refused : result.refused) {
    std::cerr << "pgwaitprof: warning: " << refused << '\n';
  }
  if (result.error.empty()) {
    std::cerr << fmt::format("pgwaitprof: uploaded {} run{} to the results database\n",
                             result.uploaded, result.uploaded == 1 ? "" : "s");
  } else {
    std::cerr << fmt::format(
        "pgwaitprof: warning: {}\nDETAIL: {} run{} queued in \"{}\"; \"pgwaitprof results push\" "
        "uploads {}.\n",
        result.error, result.pending, result.pending == 1 ? "" : "s",
        (data_dir / "results-pending").string(), result.pending == 1 ? "it" : "them");
  }
}

}  // namespace pgwaitprof::commands
