// The results database with blocking libpq.
#include "store/results_db.h"

#include <fmt/format.h>
#include <sys/utsname.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "store/run_id.h"
#include "store/run_index.h"

namespace pgwaitprof::store {
namespace {

std::string text_of(double value) { return std::isfinite(value) ? fmt::format("{}", value) : ""; }

nlohmann::json waits_of(const model::Run& run) {
  auto rows = nlohmann::json::array();
  const auto snapshots = static_cast<double>(run.profile.snapshots());
  for (const auto& [key, count] : run.profile.counts()) {
    rows.push_back({{"backend_type", key.backend_type},
                    {"state", key.state},
                    {"wait_event_type", key.wait_event_type},
                    {"wait_event", key.wait_event},
                    {"samples", count},
                    {"aas", snapshots > 0 ? static_cast<double>(count) / snapshots : 0.0},
                    {"idle", model::is_idle(key)}});
  }
  return rows;
}

nlohmann::json timeline_of(const model::Run& run) {
  auto rows = nlohmann::json::array();
  for (const auto& slice : run.timeline) {
    const auto snapshots = static_cast<double>(slice.profile.snapshots());
    nlohmann::json classes = nlohmann::json::object();
    for (const auto& [wait_class, count] : slice.profile.by_wait_class()) {
      classes[wait_class] = snapshots > 0 ? static_cast<double>(count) / snapshots : 0.0;
    }
    const bool has_latency = slice.loadgen && std::isfinite(slice.loadgen->latency_avg.count());
    rows.push_back(
        {{"start_s", slice.start.count()},
         {"duration_s", slice.duration.count()},
         {"tps", slice.loadgen ? nlohmann::json(slice.loadgen->tps) : nlohmann::json(nullptr)},
         {"latency_ms", has_latency ? nlohmann::json(slice.loadgen->latency_avg.count())
                                    : nlohmann::json(nullptr)},
         {"aas", snapshots > 0 ? static_cast<double>(slice.profile.total(false)) / snapshots : 0.0},
         {"class_aas", classes}});
  }
  return rows;
}

// A run already there is replaced only from its origin (RunOrigin): no row comes back
// otherwise. A run of schema 1 has no directory yet: its first push from its host records it.
constexpr const char* kUpsertRun = R"sql(
INSERT INTO pgwaitprof.runs (run_id, host, label, status, error, workload, variant, clients,
  started_at, ended_at, duration_s, tps, tps_ci95, latency_ms, aas, top_wait, class_aas,
  server_version, server_version_num, kernel, settings, environment, report, origin_host,
  origin_dir, summary, summary_version)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::integer, NULLIF($9, '')::timestamptz,
  NULLIF($10, '')::timestamptz, $11::float8, NULLIF($12, '')::float8, NULLIF($13, '')::float8,
  NULLIF($14, '')::float8, $15::float8, $16, $17::jsonb, $18, $19::integer, $20, $21::jsonb,
  $22::jsonb, $23::jsonb, $24, $25, $26::jsonb, $27::integer)
ON CONFLICT (run_id) DO UPDATE SET host = EXCLUDED.host, label = EXCLUDED.label,
  status = EXCLUDED.status, error = EXCLUDED.error, workload = EXCLUDED.workload,
  variant = EXCLUDED.variant, clients = EXCLUDED.clients, started_at = EXCLUDED.started_at,
  ended_at = EXCLUDED.ended_at, duration_s = EXCLUDED.duration_s, tps = EXCLUDED.tps,
  tps_ci95 = EXCLUDED.tps_ci95, latency_ms = EXCLUDED.latency_ms, aas = EXCLUDED.aas,
  top_wait = EXCLUDED.top_wait, class_aas = EXCLUDED.class_aas,
  server_version = EXCLUDED.server_version, server_version_num = EXCLUDED.server_version_num,
  kernel = EXCLUDED.kernel, settings = EXCLUDED.settings, environment = EXCLUDED.environment,
  report = EXCLUDED.report, origin_dir = EXCLUDED.origin_dir, summary = EXCLUDED.summary,
  summary_version = EXCLUDED.summary_version, uploaded_at = now()
WHERE runs.origin_host = EXCLUDED.origin_host
  AND (runs.origin_dir IS NULL OR runs.origin_dir = EXCLUDED.origin_dir)
RETURNING run_id
)sql";

constexpr const char* kInsertWaits = R"sql(
INSERT INTO pgwaitprof.run_waits
SELECT $1, w.backend_type, w.state, w.wait_event_type, w.wait_event, w.samples, w.aas, w.idle
FROM jsonb_to_recordset($2::jsonb) AS w(backend_type text, state text, wait_event_type text,
  wait_event text, samples bigint, aas float8, idle boolean)
)sql";

constexpr const char* kInsertTimeline = R"sql(
INSERT INTO pgwaitprof.run_timeline
SELECT $1, t.start_s, t.duration_s, t.tps, t.latency_ms, t.aas, t.class_aas
FROM jsonb_to_recordset($2::jsonb) AS t(start_s float8, duration_s float8, tps float8,
  latency_ms float8, aas float8, class_aas jsonb)
)sql";

std::vector<std::string> run_params(const model::Run& run, const RunSummary& summary,
                                    const std::string& text, const RunOrigin& origin) {
  const auto report = nlohmann::json::parse(text);
  auto stored = to_json(summary);
  stored.erase("report_mtime_ns");
  return {run.id,
          summary.host,
          run.label,
          summary.status,
          run.error,
          run.workload,
          run.variant,
          std::to_string(run.clients),
          run.started_at,
          run.ended_at,
          text_of(run.duration.count()),
          text_of(summary.tps),
          text_of(summary.tps_half_width),
          text_of(summary.latency_ms),
          text_of(summary.aas),
          summary.top_wait,
          base::json_text(nlohmann::json(summary.class_aas)),
          summary.server_version,
          std::to_string(summary.server_version_num),
          summary.kernel,
          base::json_text(nlohmann::json(summary.settings)),
          base::json_text(report.at("environment")),
          text,
          origin.host,
          origin.dir.string(),
          base::json_text(stored),
          std::to_string(kSummaryVersion)};
}

// "HOST:DIR" of an origin as the refusal names it, whole, control characters written out.
std::string origin_text(const std::string& host, const std::string& dir) {
  return fmt::format("{:?}", dir.empty() ? host : host + ":" + dir);
}

}  // namespace

base::Expected<ResultsDb> ResultsDb::connect(const std::string& dsn) {
  const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"5", "pgwaitprof-results", dsn.c_str(), nullptr};
  collectors::PgConnection connection(PQconnectdbParams(keywords, values, 1));
  if (!connection || PQstatus(connection.get()) != CONNECTION_OK) {
    std::string message = connection ? PQerrorMessage(connection.get()) : "out of memory";
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    for (auto& character : message) character = character == '\n' ? ' ' : character;
    return base::Error{
        collectors::mask_secrets("could not connect to the results database: " + message)};
  }
  // "schema ... already exists, skipping" and the like are not for the user.
  PQsetNoticeProcessor(
      connection.get(), [](void*, const char*) {}, nullptr);
  ResultsDb db(std::move(connection));
  const auto version = db.schema_version();
  if (!version) return version.error();
  if (auto newer = db.refuse_newer(*version)) return *newer;
  return db;
}

base::Status ResultsDb::refuse_newer(int version) const {
  if (version <= latest_schema_version()) return std::nullopt;
  const auto* connection = connection_.get();
  return base::Error{fmt::format(
      "results database \"{}:{}/{}\" has schema version {}, newer than this pgwaitprof's {}: "
      "upgrade pgwaitprof",
      PQhost(connection), PQport(connection), PQdb(connection), version, latest_schema_version())};
}

base::Expected<collectors::PgResult> ResultsDb::exec(const std::string& sql,
                                                     const std::vector<std::string>& params) {
  // Without parameters, the simple protocol: a migration is several statements.
  std::vector<const char*> values;
  for (const auto& param : params) values.push_back(param.c_str());
  collectors::PgResult result(
      params.empty() ? PQexec(connection_.get(), sql.c_str())
                     : PQexecParams(connection_.get(), sql.c_str(), static_cast<int>(values.size()),
                                    nullptr, values.data(), nullptr, nullptr, 0));
  const auto status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    std::string message = PQerrorMessage(connection_.get());
    while (!message.empty() && message.back() == '\n') message.pop_back();
    for (auto& character : message) character = character == '\n' ? ' ' : character;
    return base::Error{collectors::mask_secrets("results database: " + message)};
  }
  return result;
}

void ResultsDb::rollback() { collectors::PgResult(PQexec(connection_.get(), "ROLLBACK")); }

base::Expected<int> ResultsDb::schema_version() {
  auto exists = exec("SELECT to_regclass('pgwaitprof.schema_migrations') IS NOT NULL");
  if (!exists) return exists.error();
  if (collectors::cell(exists->get(), 0, 0) != "t") return 0;
  auto version = exec("SELECT coalesce(max(version), 0) FROM pgwaitprof.schema_migrations");
  if (!version) return version.error();
  return std::stoi(collectors::cell(version->get(), 0, 0));
}

base::Expected<int> ResultsDb::migrate() {
  const std::vector<std::string> setup = {
      "BEGIN", "SELECT pg_advisory_xact_lock(hashtext('pgwaitprof.schema_migrations'))",
      "CREATE SCHEMA IF NOT EXISTS pgwaitprof",
      "CREATE TABLE IF NOT EXISTS pgwaitprof.schema_migrations (version integer PRIMARY KEY, "
      "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"};
  for (const auto& sql : setup) {
    if (auto done = exec(sql); !done) {
      rollback();
      return done.error();
    }
  }
  auto current = schema_version();
  // Under the lock: a newer pgwaitprof may have migrated since connect() looked.
  if (current) {
    if (auto newer = refuse_newer(*current)) {
      rollback();
      return *newer;
    }
  }
  int applied = 0;
  for (const auto& migration : migrations()) {
    if (!current || migration.version <= *current) continue;
    auto done = exec(migration.sql);
    if (done) {
      done = exec(
          "INSERT INTO pgwaitprof.schema_migrations (version, description) VALUES "
          "($1::integer, $2)",
          {std::to_string(migration.version), migration.description});
    }
    if (!done) {
      rollback();
      return done.error();
    }
    ++applied;
  }
  if (!current) {
    rollback();
    return current.error();
  }
  if (auto done = exec("COMMIT"); !done) return done.error();
  return applied;
}

RunOrigin origin_of(const std::filesystem::path& run_dir) {
  utsname name{};
  return {uname(&name) == 0 ? name.nodename : "",
          std::filesystem::absolute(run_dir).lexically_normal()};
}

std::optional<UploadError> ResultsDb::upload(const model::Run& run, const std::string& report_json,
                                             const RunOrigin& origin) {
  const auto& id = run.id;
  if (auto invalid = check_run_id(id, origin.dir)) return UploadError{invalid->message, true};
  const auto summary = summarize(run, origin.dir);
  const auto failed = [&](const base::Error& error) {
    rollback();
    return UploadError{fmt::format("could not upload run {}: {}", id, error.message), false};
  };
  if (auto begun = exec("BEGIN"); !begun) return failed(begun.error());
  auto upserted = exec(kUpsertRun, run_params(run, summary, report_json, origin));
  if (!upserted) return failed(upserted.error());
  if (PQntuples(upserted->get()) == 0) return refuse_other_origin(id, origin);
  const std::vector<std::pair<const char*, std::vector<std::string>>> statements = {
      {"DELETE FROM pgwaitprof.run_waits WHERE run_id = $1", {id}},
      {kInsertWaits, {id, base::json_text(waits_of(run))}},
      {"DELETE FROM pgwaitprof.run_timeline WHERE run_id = $1", {id}},
      {kInsertTimeline, {id, base::json_text(timeline_of(run))}},
      {"INSERT INTO pgwaitprof.matrix_runs SELECT $1, $2, $3, $4::integer WHERE $1 <> '' "
       "ON CONFLICT (matrix, run_id) DO UPDATE SET variant = EXCLUDED.variant, "
       "repeat = EXCLUDED.repeat",
       {summary.matrix, id, run.variant, std::to_string(run.repeat)}},
      {"COMMIT", {}}};
  for (const auto& [sql, params] : statements) {
    if (auto done = exec(sql, params); !done) return failed(done.error());
  }
  return std::nullopt;
}

UploadError ResultsDb::refuse_other_origin(const std::string& id, const RunOrigin& origin) {
  auto holder = exec(
      "SELECT origin_host, coalesce(origin_dir, '') FROM pgwaitprof.runs WHERE run_id = $1", {id});
  rollback();
  if (!holder || PQntuples(holder->get()) == 0) {
    return UploadError{
        fmt::format("could not upload run {}: {}", id,
                    holder ? "it changed while it was uploaded" : holder.error().message),
        false};
  }
  return UploadError{
      fmt::format("run {} from {} not uploaded: the results database holds run {} pushed from {}",
                  id, origin_text(origin.host, origin.dir.string()), id,
                  origin_text(collectors::cell(holder->get(), 0, 0),
                              collectors::cell(holder->get(), 0, 1))),
      true};
}

}  // namespace pgwaitprof::store
