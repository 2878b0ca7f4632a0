// The shared results database on the real test cluster: `results migrate` creates the schema in
// a second database, a run uploads itself and matches its report.json field by field, uploads
// are idempotent, `runs`/`trend`/`compare` read the database, a run made while the database
// does not exist yet is queued and pushed once it does, and the history dashboard's panels
// return rows.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "base/programs.h"
#include "model/run.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

engine::CommandResult psql_in(const std::string& database, const std::string& sql) {
  return engine::run_command({base::find_executable("psql"), "-X", "-q", "-At", "-v",
                              "ON_ERROR_STOP=1", "-c", sql, database_dsn(database)});
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

void recreate(const std::string& database) {
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
  ASSERT_EQ(psql("CREATE DATABASE " + database).exit_code, 0);
}

fs::path only_run(const fs::path& data) {
  fs::path found;
  for (const auto& entry : fs::directory_iterator(data / "runs")) found = entry.path();
  return found;
}

// Every SQL query of the history dashboard (panels and variables) with Grafana's macros and
// variables replaced by conditions true for every uploaded run.
std::vector<std::string> dashboard_queries() {
  const auto dashboard = json::parse(
      read_text(fs::path(PGWAITPROF_SOURCE_DIR) / "deploy/grafana/pgwaitprof-history.json"));
  std::vector<std::string> queries;
  for (const auto& panel : dashboard["panels"]) {
    for (const auto& target : panel["targets"]) queries.push_back(target["rawSql"]);
  }
  for (const auto& variable : dashboard["templating"]["list"]) {
    if (variable["type"] == "query") queries.push_back(variable["query"]);
  }
  for (auto& sql : queries) {
    sql = std::regex_replace(sql, std::regex(R"(\$__timeFilter\([^)]*\))"), "true");
    sql =
        std::regex_replace(sql, std::regex(R"(\(\$host\))"), "(SELECT host FROM pgwaitprof.runs)");
    sql = std::regex_replace(sql, std::regex(R"(\(\$label\))"),
                             "(SELECT label FROM pgwaitprof.runs)");
    sql = std::regex_replace(sql, std::regex(R"('\$run')"),
                             "(SELECT max(run_id) FROM pgwaitprof.runs)");
  }
  return queries;
}

// The runs row, its waits and its timeline against the report.json they were uploaded from.
void expect_row_matches_report(const std::string& database, const json& report) {
  const auto row = psql_in(
      database,
      "SELECT row_to_json(r)::text FROM (SELECT run_id, host, label, status, error, workload, "
      "variant, clients, extract(epoch FROM started_at) AS started, extract(epoch FROM ended_at) "
      "AS ended, duration_s, report, environment, settings FROM pgwaitprof.runs) r");
  ASSERT_EQ(row.exit_code, 0) << row.output;
  const auto uploaded = json::parse(row.output);
  EXPECT_EQ(uploaded["run_id"], report["id"]);
  EXPECT_EQ(uploaded["host"], report["environment"]["hostname"]);
  for (const char* field : {"label", "status", "error", "workload", "variant", "clients"}) {
    EXPECT_EQ(uploaded[field], report[field]) << field;
  }
  EXPECT_DOUBLE_EQ(uploaded["duration_s"].get<double>(), report["duration_s"].get<double>());
  EXPECT_EQ(uploaded["report"], report);  // every field of report.json
  EXPECT_EQ(uploaded["environment"], report["environment"]);
  for (const auto& setting : report["environment"]["settings"]) {
    EXPECT_EQ(uploaded["settings"][setting["name"].get<std::string>()], setting["value"]);
  }
  const auto started = report["started_at"].get<std::string>();
  EXPECT_EQ(trimmed(psql_in(database, "SELECT started_at = '" + started +
                                          "'::timestamptz AND ended_at = '" +
                                          report["ended_at"].get<std::string>() +
                                          "'::timestamptz FROM pgwaitprof.runs")
                        .output),
            "t");
  EXPECT_EQ(trimmed(psql_in(database, fmt::format("SELECT tps = {}::float8 FROM pgwaitprof.runs",
                                                  report["summary"]["tps"]["mean"].get<double>()))
                        .output),
            "t");

  uint64_t samples = 0;
  for (const auto& entry : report["profile"]["entries"]) samples += entry["count"].get<uint64_t>();
  EXPECT_EQ(trimmed(psql_in(database, "SELECT sum(samples) FROM pgwaitprof.run_waits").output),
            std::to_string(samples));
  EXPECT_EQ(trimmed(psql_in(database, "SELECT count(*) FROM pgwaitprof.run_timeline").output),
            std::to_string(report["timeline"].size()));
}

// Idempotent: the same run again, and a backfill, leave one row.
void expect_uploads_idempotent(const std::string& database, const fs::path& data,
                               const fs::path& dir, const std::string& id) {
  const auto dsn = database_dsn(database);
  auto backfill = pgwaitprof(
      {"results", "push", "--backfill", "--results-dsn", dsn, "--data-dir", data.string()});
  EXPECT_EQ(backfill.output, "uploaded 0 runs, 0 pending\n");
  write_text(data / "results-pending" / id, dir.string() + "\n");
  auto push = pgwaitprof({"results", "push", "--results-dsn", dsn, "--data-dir", data.string()});
  EXPECT_EQ(push.output, "uploaded 1 run, 0 pending\n");
  EXPECT_EQ(trimmed(psql_in(database, "SELECT count(*) FROM pgwaitprof.runs").output), "1");
}

// runs, trend, runs show and compare read the database.
void expect_commands_read_database(const std::string& database, const fs::path& dir,
                                   const json& report) {
  const auto dsn = database_dsn(database);
  const auto id = report["id"].get<std::string>();
  const auto started = report["started_at"].get<std::string>();
  auto listed = pgwaitprof_stdout({"runs", "--results-dsn", dsn, "--format", "json", "--host",
                                   report["environment"]["hostname"].get<std::string>()});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const auto runs = json::parse(listed.output);
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0]["id"], id);
  EXPECT_EQ(runs[0]["started_at"], started);
  EXPECT_EQ(json::parse(pgwaitprof_stdout({"runs", "--results-dsn", dsn, "--format", "json",
                                           "--host", "elsewhere"})
                            .output)
                .size(),
            0U);
  auto shown = pgwaitprof({"runs", "--results-dsn", dsn, "show", "uploaded"});
  EXPECT_EQ(shown.output, read_text(dir / "report.txt"));
  EXPECT_EQ(pgwaitprof({"trend", "--results-dsn", dsn}).exit_code, 0);
  auto compared = pgwaitprof({"compare", "--results-dsn", dsn, id, "label=uploaded"});
  EXPECT_EQ(compared.exit_code, 0) << compared.output;
}

// A matrix uploads its runs with their membership.
void expect_matrix_uploaded(const std::string& database, const fs::path& data) {
  const auto dsn = database_dsn(database);
  write_text(data / "plan.yaml", "name: tiny\nclients: [1]\nduration: 2\nrepeats: 1\n");
  auto matrix = pgwaitprof(
      {"matrix", (data / "plan.yaml").string(), "--data-dir", data.string(), "--results-dsn", dsn});
  ASSERT_EQ(matrix.exit_code, 0) << matrix.output;
  EXPECT_NE(matrix.output.find("uploaded 1 run to the results database"), std::string::npos)
      << matrix.output;
  const auto matrix_name = fs::directory_iterator(data / "matrix")->path().filename().string();
  EXPECT_EQ(trimmed(psql_in(database,
                            "SELECT m.matrix || ' ' || m.variant || ' ' || m.repeat FROM "
                            "pgwaitprof.matrix_runs m JOIN pgwaitprof.runs USING (run_id)")
                        .output),
            matrix_name + " default 1");
}

void expect_dashboard_queries_return_rows(const std::string& database) {
  const auto queries = dashboard_queries();
  EXPECT_EQ(queries.size(), 8U);
  for (const auto& sql : queries) {
    EXPECT_EQ(sql.find('$'), std::string::npos) << sql;
    auto rows = psql_in(database, "SELECT count(*) FROM (" + sql + ") q");
    ASSERT_EQ(rows.exit_code, 0) << sql << "\n" << rows.output;
    EXPECT_GT(std::stoi(rows.output), 0) << sql;
  }
}

class ResultsTest : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

TEST_F(ResultsTest, UploadedRunMatchesItsReportFieldByField) {
  const std::string database = "pgwaitprof_results_it";
  recreate(database);
  const auto dsn = database_dsn(database);
  auto migrated = pgwaitprof({"results", "migrate", "--results-dsn", dsn});
  ASSERT_EQ(migrated.exit_code, 0) << migrated.output;
  EXPECT_EQ(migrated.output, "schema pgwaitprof at version 2 (2 migrations applied)\n");
  auto again = pgwaitprof({"results", "migrate", "--results-dsn", dsn});
  EXPECT_EQ(again.output, "schema pgwaitprof at version 2 (0 migrations applied)\n");

  const auto data = temp_dir("results-upload");
  auto run = pgwaitprof({"run", test_conninfo(), "--no-daemon", "--label", "uploaded", "--data-dir",
                         data.string(), "--results-dsn", dsn, "--", "-c", "2", "-R", kModestRate,
                         "-T", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("uploaded 1 run to the results database"), std::string::npos)
      << run.output;
  const auto dir = only_run(data);
  const auto report = json::parse(read_text(dir / "report.json"));
  const auto id = report["id"].get<std::string>();

  expect_row_matches_report(database, report);
  expect_uploads_idempotent(database, data, dir, id);
  expect_commands_read_database(database, dir, report);
  expect_matrix_uploaded(database, data);
  expect_dashboard_queries_return_rows(database);
}

TEST_F(ResultsTest, RunMadeWhileTheDatabaseIsMissingIsUploadedWhenItIsBack) {
  const std::string database = "pgwaitprof_results_later";
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
  const auto dsn = database_dsn(database) + " password=sekrit-pw";
  const auto data = temp_dir("results-later");
  auto run = pgwaitprof({"run", test_conninfo(), "--no-daemon", "--label", "offline", "--data-dir",
                         data.string(), "--results-dsn", dsn, "--", "-c", "1", "-R", kModestRate,
                         "-T", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.output;  // the run does not fail
  EXPECT_NE(run.output.find("1 run queued in"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("sekrit-pw"), std::string::npos) << run.output;
  const auto id = only_run(data).filename().string();
  EXPECT_TRUE(fs::exists(data / "results-pending" / id));

  auto down = pgwaitprof({"results", "push", "--results-dsn", dsn, "--data-dir", data.string()});
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_NE(down.output.find("uploaded 0 runs, 1 pending"), std::string::npos) << down.output;
  EXPECT_EQ(down.output.find("sekrit-pw"), std::string::npos) << down.output;

  ASSERT_EQ(psql("CREATE DATABASE " + database).exit_code, 0);
  auto pushed = pgwaitprof({"results", "push", "--results-dsn", dsn, "--data-dir", data.string()});
  EXPECT_EQ(pushed.exit_code, 0) << pushed.output;
  EXPECT_EQ(pushed.output, "uploaded 1 run, 0 pending\n");
  EXPECT_FALSE(fs::exists(data / "results-pending" / id));
  EXPECT_EQ(trimmed(psql_in(database, "SELECT run_id FROM pgwaitprof.runs").output), id);
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

// A database that a newer pgwaitprof migrated (version 3 here, with a column this one does not
// fill) is refused with one line by migrate and by push, before anything is written: the run
// stays queued for the newer pgwaitprof.
TEST_F(ResultsTest, NewerSchemaIsRefusedWithOneLine) {
  const std::string database = "pgwaitprof_results_newer";
  recreate(database);
  const auto dsn = database_dsn(database);
  ASSERT_EQ(pgwaitprof({"results", "migrate", "--results-dsn", dsn}).exit_code, 0);
  ASSERT_EQ(psql_in(database,
                    "ALTER TABLE pgwaitprof.runs ADD COLUMN cost double precision NOT NULL; "
                    "INSERT INTO pgwaitprof.schema_migrations (version, description) "
                    "VALUES (3, 'from a newer pgwaitprof')")
                .exit_code,
            0);
  const std::string refusal = fmt::format(
      "pgwaitprof: results database \"{}:{}/{}\" has schema version 3, newer than "
      "this pgwaitprof's 2: upgrade pgwaitprof\n",
      env("PGHOST"), env("PGPORT"), database);
  auto migrated = pgwaitprof({"results", "migrate", "--results-dsn", dsn});
  EXPECT_EQ(migrated.exit_code, 1);
  EXPECT_EQ(migrated.output, refusal);

  const auto data = temp_dir("results-newer");
  fs::create_directories(data / "runs" / "queued");
  fs::create_directories(data / "results-pending");
  fs::copy_file(fs::path(PGWAITPROF_FIXTURES) / "report_v1.json",
                data / "runs" / "queued" / "report.json");
  write_text(data / "results-pending" / "queued", (data / "runs" / "queued").string() + "\n");
  auto pushed = pgwaitprof({"results", "push", "--results-dsn", dsn, "--data-dir", data.string()});
  EXPECT_EQ(pushed.exit_code, 1);
  EXPECT_NE(pushed.output.find(refusal), std::string::npos) << pushed.output;
  EXPECT_NE(pushed.output.find("uploaded 0 runs, 1 pending"), std::string::npos) << pushed.output;
  EXPECT_EQ(pushed.output.find("null value"), std::string::npos) << pushed.output;
  EXPECT_TRUE(fs::exists(data / "results-pending" / "queued"));
  EXPECT_EQ(trimmed(psql_in(database, "SELECT count(*) FROM pgwaitprof.runs").output), "0");
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

// Two `results push` of one queue at once: the second waits for the first and finds the queue
// empty. They both took every entry, and the second read an entry the first had removed as the
// run directory "" ("could not open report """) and still exited 0.
TEST_F(ResultsTest, ConcurrentPushesUploadEachRunOnce) {
  using namespace std::chrono_literals;
  const std::string database = "pgwaitprof_results_concurrent";
  recreate(database);
  const auto dsn = database_dsn(database);
  ASSERT_EQ(pgwaitprof({"results", "migrate", "--results-dsn", dsn}).exit_code, 0);
  const auto data = temp_dir("results-concurrent");
  fs::create_directories(data / "results-pending");
  auto report = json::parse(read_text(fs::path(PGWAITPROF_FIXTURES) / "report_v1.json"));
  constexpr int kRuns = 12;
  for (int index = 0; index < kRuns; ++index) {
    const auto id = fmt::format("20261203-000000-{:04}", index);
    report["id"] = id;
    fs::create_directories(data / "runs" / id);
    write_text(data / "runs" / id / "report.json", report.dump());
    write_text(data / "results-pending" / id, (data / "runs" / id).string() + "\n");
  }
  const std::vector<std::string> push{
      pgwaitprof_binary(), "results", "push", "--results-dsn", dsn, "--data-dir", data.string()};
  ChildProcess first(push, data / "first.log");
  ChildProcess second(push, data / "second.log");
  ASSERT_EQ(first.wait(60s), 0) << first.log();
  ASSERT_EQ(second.wait(60s), 0) << second.log();
  int uploaded = 0;
  for (const auto& log : {first.log(), second.log()}) {
    EXPECT_EQ(log.find("could not"), std::string::npos) << log;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(log, match, std::regex(R"(uploaded (\d+) runs?, 0 pending)")))
        << log;
    uploaded += std::stoi(match[1]);
  }
  EXPECT_EQ(uploaded, kRuns);
  EXPECT_EQ(trimmed(psql_in(database, "SELECT count(*) FROM pgwaitprof.runs").output),
            std::to_string(kRuns));
  EXPECT_TRUE(fs::is_empty(data / "results-pending"));
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

TEST_F(ResultsTest, DaemonRetriesWithBackoffUntilTheDatabaseIsBack) {
  using namespace std::chrono_literals;
  const std::string database = "pgwaitprof_results_daemon";
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
  const auto dir = temp_dir("results-daemon");
  const auto port = engine::free_port();
  write_text(dir / "pgwaitprof.yaml",
             "listen: 127.0.0.1:" + std::to_string(port) +
                 "\ndata_dir: " + (dir / "data").string() +
                 "\ntargets:\n  - name: local\n    dsn: \"" + test_conninfo() +
                 "\"\n    hz: 50\nruns:\n  - target: local\n    label: daemon-run\n" +
                 "    pgbench_args: [\"-c\", \"1\", \"-T\", \"2\"]\nresults:\n  dsn: \"" +
                 database_dsn(database) + " password=sekrit-pw\"\n");
  ChildProcess daemon({pgwaitprof_binary(), "daemon", "-c", (dir / "pgwaitprof.yaml").string()},
                      dir / "daemon.log");
  ASSERT_TRUE(eventually(60s, [&] {
    return daemon.log().find("results database upload failed pending=1") != std::string::npos;
  })) << daemon.log();
  ASSERT_EQ(psql("CREATE DATABASE " + database).exit_code, 0);
  ASSERT_TRUE(eventually(30s, [&] {
    return daemon.log().find("uploaded runs=1 pending=0") != std::string::npos;
  })) << daemon.log();
  EXPECT_EQ(trimmed(psql_in(database, "SELECT label FROM pgwaitprof.runs").output), "daemon-run");
  EXPECT_EQ(daemon.log().find("sekrit-pw"), std::string::npos) << daemon.log();
  EXPECT_TRUE(fs::is_empty(dir / "data" / "results-pending"));
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

}  // namespace
}  // namespace pgwaitprof::testing
