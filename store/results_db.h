// The shared results database: a PostgreSQL database a fleet of benchmark hosts writes its runs
// to, in the schema "pgwaitprof" that pgwaitprof creates and migrates itself (versioned
// migrations, recorded in pgwaitprof.schema_migrations). Uploads are idempotent by run id.
// Blocking libpq: it serves commands, never the daemon's I/O thread. The connection string's
// password never appears in an error (collectors::mask_secrets); .pgpass and PG* variables
// apply as in psql.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
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

// Where a run was pushed from: the pushing host's name (uname) and the run directory's
// absolute path there. A run in the database is replaced only by a push from its origin.
struct RunOrigin {
  std::string host;
  std::filesystem::path dir;
};
RunOrigin origin_of(const std::filesystem::path& run_dir);

// Why an upload did not happen. `refused`: it never will (a run id that is not one, or another
// origin's run): the queue drops the run; else the database failed and the run stays queued.
struct UploadError {
  std::string message;
  bool refused = false;
};

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

  // The run read from `origin.dir` (its report column `report_json`, report.json as written),
  // its summary (summarize(), as the local history has it), its wait profile, its timeline and
  // its matrix membership, replacing what an earlier upload of the same run from the same
  // origin wrote. Refused, with nothing written, when the run id is not one pgwaitprof makes
  // or not the directory's name, or when another host or directory pushed a run of that id.
  std::optional<UploadError> upload(const model::Run& run, const std::string& report_json,
                                    const RunOrigin& origin);

  // Summaries of the uploaded runs matching `filter`, newest first: the summaries stored at
  // upload, or summarize() of the report where the stored one is of another kSummaryVersion
  // (or none, from schema 1), so that `runs` and `trend` say the same of a run read from here
  // as from its data directory.
  base::Expected<std::vector<RunSummary>> list(const RunFilter& filter);
  // The ids of the uploaded runs.
  base::Expected<std::set<std::string>> run_ids();
  // An uploaded run's report.
  base::Expected<model::Run> report(const std::string& run_id);

 private:
  explicit ResultsDb(collectors::PgConnection connection) : connection_(std::move(connection)) {}
  base::Expected<collectors::PgResult> exec(const std::string& sql,
                                            const std::vector<std::string>& params = {});
  void rollback();  // of a failed transaction; its own failure changes nothing
  // The refusal of `origin`'s run `id` that another origin pushed, naming both; rolls back.
  UploadError refuse_other_origin(const std::string& id, const RunOrigin& origin);
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
  // One line per run the database refused (upload()): dropped from the queue.
  std::vector<std::string> refused;
};
base::Status queue_upload(const std::filesystem::path& data_dir,
                          const std::filesystem::path& run_dir);
// One push of a queue at a time: a second one (another `results push`, a backfill, the
// daemon's) waits for the first and then pushes what is left.
// `report_json` renders the report column (report.json as the renderers write it).
PushResult push_pending(const std::filesystem::path& data_dir, const std::string& dsn,
                        RenderRun report_json);
// Queues the run directories (those with a report.json), then pushes everything pending.
PushResult upload_runs(const std::filesystem::path& data_dir,
                       const std::vector<std::filesystem::path>& run_dirs, const std::string& dsn,
                       RenderRun report_json);
// Queues every run of the history whose id the database does not hold, then pushes (`results
// push --backfill`), all under the queue's lock: a push beside it either uploaded a run before
// the backfill looked (it is not queued again) or finds the queue empty after it.
PushResult backfill(const std::filesystem::path& data_dir, const std::string& dsn,
                    RenderRun report_json);

}  // namespace pgwaitprof::store
