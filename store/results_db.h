// The shared results database: a PostgreSQL database a fleet of benchmark hosts writes its runs
// to, in the schema "pgwaitprof" that pgwaitprof creates and migrates itself (versioned
// migrations, recorded in pgwaitprof.schema_migrations). Uploads are idempotent by run id.
// Blocking libpq: it serves commands, never the daemon's I/O thread. The connection string's
// password never appears in an error (collectors::mask_secrets); .pgpass and PG* variables
// apply as in psql.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/expected.h"
#include "collectors/pg_session.h"
#include "model/run.h"
#include "store/run_directory.h"
#include "store/run_filter.h"
#include "store/run_summary.h"

namespace pgwaitprof::store {

// The migrations in order; version i + 1 is kMigrations[i].
struct Migration {
  int version;
  const char* description;
  const char* sql;
};
const std::vector<Migration>& migrations();
// The schema version this pgwaitprof writes: its last migration's.
int latest_schema_version();

class ResultsDb {
 public:
  // Refuses a database whose schema is newer than latest_schema_version(): its tables may have
  // columns this pgwaitprof does not fill, and it must not write them half.
  static base::Expected<ResultsDb> connect(const std::string& dsn);

  // Applies the migrations not yet applied, in one transaction under an advisory lock, and
  // returns how many it applied.
  base::Expected<int> migrate();
  // The schema's version; 0 before the first migration.
  base::Expected<int> schema_version();

  // The run (its report column `report_json`, report.json as written), its wait profile, its
  // timeline and its matrix membership (`matrix` "" for none), replacing what an earlier upload
  // of the same run id wrote.
  base::Status upload(const model::Run& run, const std::string& report_json,
                      const std::string& matrix);

  // Summaries of the uploaded runs matching `filter`, newest first.
  base::Expected<std::vector<RunSummary>> list(const RunFilter& filter);
  // An uploaded run's report.
  base::Expected<model::Run> report(const std::string& run_id);

 private:
  explicit ResultsDb(collectors::PgConnection connection) : connection_(std::move(connection)) {}
  base::Expected<collectors::PgResult> exec(const std::string& sql,
                                            const std::vector<std::string>& params = {});
  void rollback();  // of a failed transaction; its own failure changes nothing
  // "results database "HOST:PORT/DBNAME" has schema version N, newer than this pgwaitprof's M:
  // upgrade pgwaitprof" when `version` is newer than ours.
  base::Status refuse_newer(int version) const;

  collectors::PgConnection connection_;
};

// Uploading after runs, through the queue <data_dir>/results-pending/ (one file per run id,
// holding its run directory): a run is queued first, so a database that is down loses nothing.
struct PushResult {
  size_t uploaded = 0;
  size_t pending = 0;  // still queued
  std::string error;   // the first failure, masked; "" when none
};
base::Status queue_upload(const std::filesystem::path& data_dir,
                          const std::filesystem::path& run_dir);
// One push of a queue at a time: a second one (another `results push`, the daemon's) waits for
// the first and then pushes what is left.
// `report_json` renders the report column (report.json as the renderers write it).
PushResult push_pending(const std::filesystem::path& data_dir, const std::string& dsn,
                        RenderRun report_json);
// Queues the run directories (those with a report.json), then pushes everything pending.
PushResult upload_runs(const std::filesystem::path& data_dir,
                       const std::vector<std::filesystem::path>& run_dirs, const std::string& dsn,
                       RenderRun report_json);
// Queues every run of the history not known to be uploaded, then pushes (`results push
// --backfill`).
PushResult backfill(const std::filesystem::path& data_dir, const std::string& dsn,
                    RenderRun report_json);

}  // namespace pgwaitprof::store
