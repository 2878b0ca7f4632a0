// The shared results database against forged and copied runs, and its history against the local
// one: a report edited to claim another run's id, a copy of a run in another directory, a run
// pushed from another host and a path as a run id are refused in one line and change nothing;
// re-pushing a run from where it was pushed stays idempotent; `runs` and `trend` say the same of
// runs read from the database as from their data directory, in every format; a push beside a
// backfill uploads each run once.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "base/programs.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string query(const std::string& database, const std::string& sql) {
  auto result = engine::run_command({base::find_executable("psql"), "-X", "-q", "-At", "-v",
                                     "ON_ERROR_STOP=1", "-c", sql, database_dsn(database)});
  EXPECT_EQ(result.exit_code, 0) << sql << "\n" << result.output;
  while (!result.output.empty() && result.output.back() == '\n') result.output.pop_back();
  return result.output;
}

// A migrated, empty results database.
std::string fresh_database(const std::string& database) {
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
  EXPECT_EQ(psql("CREATE DATABASE " + database).exit_code, 0);
  const auto dsn = database_dsn(database);
  auto migrated = pgwaitprof({"results", "migrate", "--results-dsn", dsn});
  EXPECT_EQ(migrated.output, "schema pgwaitprof at version 2 (2 migrations applied)\n");
  return dsn;
}

std::string this_host() {
  utsname name{};
  EXPECT_EQ(uname(&name), 0);
  return name.nodename;
}

// The fixture's report under `id` in <data>/runs/<dir_name> (the id's own name unless given),
// with `label` and the load generator's tps; queued for upload when `queued`.
fs::path write_run(const fs::path& data, const std::string& id, const std::string& label,
                   double tps, bool queued = true, std::string dir_name = "") {
  auto report = json::parse(read_text(fs::path(PGWAITPROF_FIXTURES) / "report_v1.json"));
  report["id"] = id;
  report["label"] = label;
  report["loadgen"]["tps"] = tps;
  const auto dir = data / "runs" / (dir_name.empty() ? id : dir_name);
  fs::create_directories(dir);
  write_text(dir / "report.json", report.dump());
  if (queued) {
    fs::create_directories(data / "results-pending");
    write_text(data / "results-pending" / dir.filename(), dir.string() + "\n");
  }
  return dir;
}

// A command's output without the log lines that any invocation may add when it sweeps what
// another pgwaitprof on this machine left ("... warning [supervisor] removed scratch cluster").
std::string without_log_lines(const std::string& output) {
  static const std::regex log_line(R"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} \w+ \[.*\n)");
  return std::regex_replace(output, log_line, "");
}

engine::CommandResult push(const std::string& dsn, const fs::path& data,
                           std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"results", "push",       "--results-dsn",
                                   dsn,       "--data-dir", data.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return pgwaitprof(args);
}

class ResultsOriginTest : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

// A report edited to claim another run's id overwrote that run ("uploaded 1 run": the forged
// label and another run's tps), and a backfill uploaded a run whose id was a path.
TEST_F(ResultsOriginTest, ForgedAndCopiedRunsNeverReplaceAnotherOriginsRun) {
  const std::string database = "pgwaitprof_results_origin";
  const auto dsn = fresh_database(database);
  const auto owner = temp_dir("results-owner");
  const auto other = temp_dir("results-other");
  const std::string id = "20261205-100000-0a0a-real";
  const auto owned = write_run(owner, id, "real", 1000);
  auto first = push(dsn, owner);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output, "uploaded 1 run, 0 pending\n");
  EXPECT_EQ(query(database, "SELECT origin_host || ' ' || origin_dir FROM pgwaitprof.runs"),
            this_host() + " " + owned.string());
  const auto unchanged = [&] {
    EXPECT_EQ(query(database,
                    "SELECT label || ' ' || (report #>> '{loadgen,tps}')::float8 "
                    "FROM pgwaitprof.runs"),
              "real 1000");
  };

  // The same id in another directory (a copy, or a forged report in a directory of that name).
  const auto copy = write_run(other, id, "forged", 9999);
  auto copied = push(dsn, other);
  EXPECT_EQ(copied.exit_code, 1);
  // One line naming both.
  EXPECT_NE(copied.output.find(fmt::format(
                "pgwaitprof: run {} from \"{}:{}\" not uploaded: the results database holds run "
                "{} pushed from \"{}:{}\"\n",
                id, this_host(), copy.string(), id, this_host(), owned.string())),
            std::string::npos)
      << copied.output;
  EXPECT_NE(copied.output.find("uploaded 0 runs, 0 pending\n"), std::string::npos);
  const auto lines = without_log_lines(copied.output);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 2) << copied.output;
  unchanged();
  EXPECT_TRUE(fs::is_empty(other / "results-pending"));  // refused for good: not kept queued

  // A report that claims another run's id in a directory of its own name, and a path as an id.
  fs::remove_all(copy);
  write_run(other, id, "forged", 9999, true, "20261205-100001-0b0b-mine");
  write_run(other, "../../../tmp/evil", "evil", 9999, false, "evil");
  auto forged = push(dsn, other, {"--backfill"});
  EXPECT_EQ(forged.exit_code, 1);
  EXPECT_NE(forged.output.find(fmt::format(
                "pgwaitprof: run directory \"{}\" holds run id \"{}\", not its own name\n",
                (other / "runs" / "20261205-100001-0b0b-mine").string(), id)),
            std::string::npos)
      << forged.output;
  EXPECT_NE(forged.output.find(fmt::format("pgwaitprof: run directory \"{}\" holds run id "
                                           "\"../../../tmp/evil\", not one pgwaitprof makes\n",
                                           (other / "runs" / "evil").string())),
            std::string::npos)
      << forged.output;
  EXPECT_NE(forged.output.find("uploaded 0 runs, 0 pending\n"), std::string::npos) << forged.output;
  unchanged();

  // The run's own origin re-pushes it as often as it likes.
  write_text(owner / "results-pending" / id, owned.string() + "\n");
  auto again = push(dsn, owner);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output, "uploaded 1 run, 0 pending\n");
  unchanged();

  // Pushed from another host: refused naming that host.
  query(database, "UPDATE pgwaitprof.runs SET origin_host = 'bench-elsewhere'");
  write_text(owner / "results-pending" / id, owned.string() + "\n");
  auto elsewhere = push(dsn, owner);
  EXPECT_EQ(elsewhere.exit_code, 1);
  EXPECT_NE(elsewhere.output.find(fmt::format("the results database holds run {} pushed from "
                                              "\"bench-elsewhere:{}\"",
                                              id, owned.string())),
            std::string::npos)
      << elsewhere.output;
  unchanged();

  // A run pushed under schema 1 has no directory: the first push from its host records one.
  query(database,
        "UPDATE pgwaitprof.runs SET origin_host = '" + this_host() + "', origin_dir = NULL");
  write_text(owner / "results-pending" / id, owned.string() + "\n");
  EXPECT_EQ(push(dsn, owner).output, "uploaded 1 run, 0 pending\n");
  EXPECT_EQ(query(database, "SELECT origin_dir FROM pgwaitprof.runs"), owned.string());
  EXPECT_EQ(query(database, "SELECT count(*) FROM pgwaitprof.runs"), "1");
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

// `runs --format scaling` and `json` from the database showed CPU 0 %, no top waits, no
// whole-run tps and the steady state's tps where the data directory showed 36 %, the waits and
// pgbench's tps. Every format of `runs` and `trend` now says the same from both, also of runs
// whose stored summary is of another version (or none, as schema 1 stored).
TEST_F(ResultsOriginTest, SharedHistoryAnswersAsTheLocalOneInEveryFormat) {
  const std::string database = "pgwaitprof_results_same";
  const auto dsn = fresh_database(database);
  const auto data = temp_dir("results-same");
  for (const char* clients : {"1", "2"}) {
    auto run = pgwaitprof({"run", test_conninfo(), "--no-daemon", "--hz", "100", "--label",
                           fmt::format("same-c{}", clients), "--data-dir", data.string(), "--",
                           "-c", clients, "-j", "1", "-R", kModestRate, "-T", "3"});
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  auto backfilled = push(dsn, data, {"--backfill"});
  ASSERT_EQ(backfilled.output, "uploaded 2 runs, 0 pending\n");
  const auto compare_every_format = [&](const std::string& when) {
    for (const char* command : {"runs", "trend"}) {
      const std::vector<std::string> formats =
          std::string(command) == "runs"
              ? std::vector<std::string>{"text", "md", "csv", "json", "scaling"}
              : std::vector<std::string>{"text", "md", "csv", "json"};
      for (const auto& format : formats) {
        // The two runs differ in -c: change points need them in groups of their own.
        const std::vector<std::string> split = std::string(command) == "trend"
                                                   ? std::vector<std::string>{"--group-by", "label"}
                                                   : std::vector<std::string>{};
        auto local_args =
            std::vector<std::string>{command, "--data-dir", data.string(), "--format", format};
        auto shared_args =
            std::vector<std::string>{command, "--results-dsn", dsn, "--format", format};
        local_args.insert(local_args.end(), split.begin(), split.end());
        shared_args.insert(shared_args.end(), split.begin(), split.end());
        auto local = pgwaitprof(local_args);
        auto shared = pgwaitprof(shared_args);
        ASSERT_EQ(local.exit_code, 0) << local.output;
        EXPECT_EQ(without_log_lines(shared.output), without_log_lines(local.output))
            << when << ": " << command << " " << format;
      }
    }
  };
  compare_every_format("stored summaries");
  // What the database's answer lacked, present in the local one that it now equals.
  const auto listed = json::parse(without_log_lines(
      pgwaitprof({"runs", "--data-dir", data.string(), "--format", "json"}).output));
  for (const auto& run : listed) {
    EXPECT_TRUE(run["whole_run_tps"].is_number()) << run.dump();
    EXPECT_FALSE(run["wait_shares"].empty()) << run.dump();
  }
  query(database, "UPDATE pgwaitprof.runs SET summary = NULL, summary_version = 0");
  compare_every_format("summaries made again from the reports");
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

// pgwaitprof's own version (report schema 14) travels to the results database in the stored
// summary (version 6); a row of an older pgwaitprof (summary version 5, a report without it)
// still reads, the version unknown ("").
TEST_F(ResultsOriginTest, PgwaitprofsVersionTravelsAndAnOldRowStillReads) {
  const std::string database = "pgwaitprof_results_version";
  const auto dsn = fresh_database(database);
  const auto data = temp_dir("results-version");
  const auto newer = write_run(data, "20261205-120000-0b0b-new", "new", 1000);
  auto report = json::parse(read_text(newer / "report.json"));
  report["schema_version"] = 14;
  report["environment"]["pgwaitprof_version"] = "0.1.0 (6a6e3daf2c1f)";
  write_text(newer / "report.json", report.dump());
  write_run(data, "20261205-110000-0a0a-old", "old", 900);  // report schema 1: no version
  auto pushed = push(dsn, data);
  ASSERT_EQ(pushed.exit_code, 0) << pushed.output;
  EXPECT_EQ(query(database,
                  "SELECT string_agg(label || '=' || (summary ->> 'pgwaitprof_version') "
                  "|| ' ' || summary_version, ',' ORDER BY label) FROM pgwaitprof.runs"),
            "new=0.1.0 (6a6e3daf2c1f) 6,old= 6");
  const auto versions = [&] {
    const auto listed = json::parse(
        without_log_lines(pgwaitprof({"runs", "--results-dsn", dsn, "--format", "json"}).output));
    std::map<std::string, std::string> by_label;
    for (const auto& run : listed) by_label[run["label"]] = run.value("pgwaitprof_version", "?");
    return by_label;
  };
  const std::map<std::string, std::string> expected = {{"new", "0.1.0 (6a6e3daf2c1f)"},
                                                       {"old", ""}};
  EXPECT_EQ(versions(), expected);
  // Rows as a pgwaitprof of summary version 5 wrote them: summarized again from the report.
  query(database,
        "UPDATE pgwaitprof.runs SET summary = summary - 'pgwaitprof_version', summary_version = 5");
  EXPECT_EQ(versions(), expected);
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

// `results push` beside `results push --backfill` uploaded 39 runs twice: the backfill asked the
// database what it held and queued the rest before it took the queue's lock, while the push
// uploaded and unqueued them.
TEST_F(ResultsOriginTest, PushBesideBackfillUploadsEachRunOnce) {
  using namespace std::chrono_literals;
  const std::string database = "pgwaitprof_results_backfill";
  const auto dsn = fresh_database(database);
  const auto data = temp_dir("results-backfill");
  constexpr int kRuns = 40;
  for (int index = 0; index < kRuns; ++index) {
    write_run(data, fmt::format("20261205-110000-{:04x}", index), "queued", 100 + index);
  }
  const std::vector<std::string> args = {
      pgwaitprof_binary(), "results", "push", "--results-dsn", dsn, "--data-dir", data.string()};
  ChildProcess pushing(args, data / "push.log");
  // The backfill starts while the push is uploading.
  ASSERT_TRUE(eventually(30s, [&] {
    return query(database, "SELECT count(*) > 0 FROM pgwaitprof.runs") == "t";
  })) << pushing.log();
  auto with_backfill = args;
  with_backfill.push_back("--backfill");
  ChildProcess backfilling(with_backfill, data / "backfill.log");
  ASSERT_EQ(pushing.wait(60s), 0) << pushing.log();
  ASSERT_EQ(backfilling.wait(60s), 0) << backfilling.log();
  int uploaded = 0;
  for (const auto& log : {pushing.log(), backfilling.log()}) {
    std::smatch match;
    ASSERT_TRUE(std::regex_search(log, match, std::regex(R"(uploaded (\d+) runs?, 0 pending)")))
        << log;
    uploaded += std::stoi(match[1]);
  }
  EXPECT_EQ(uploaded, kRuns) << "push: " << pushing.log() << "backfill: " << backfilling.log();
  EXPECT_EQ(query(database, "SELECT count(*) FROM pgwaitprof.runs"), std::to_string(kRuns));
  EXPECT_TRUE(fs::is_empty(data / "results-pending"));
  psql("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
}

}  // namespace
}  // namespace pgwaitprof::testing
