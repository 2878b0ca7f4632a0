// Matrix plans that parse (every key and its default), the shipped example config and plan
// (they parse and document every key), and the jobs rule that gives pgbench a valid -j.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/daemon_config.h"
#include "config/daemon_config_keys.h"
#include "config/matrix_plan.h"
#include "tests/config/config_fixture.h"

namespace pgwaitprof::config {
namespace {

using namespace test_support;

// ---- matrix plans: good files ----

TEST(MatrixParse, EmptyPlanGetsDocumentedDefaults) {
  const MatrixPlan plan = load_matrix_plan(kFixtures / "plan_good_minimal.yaml");
  EXPECT_EQ(plan.name, "plan_good_minimal");  // the file name stands in for a missing name
  EXPECT_EQ(plan.target, "");
  EXPECT_EQ(plan.scale, 10);
  EXPECT_EQ(plan.workload, "tpcb");
  EXPECT_EQ(plan.clients, std::vector<int>{1});
  EXPECT_EQ(plan.jobs, "min(clients, cores)");
  EXPECT_EQ(plan.duration, seconds(10));
  EXPECT_EQ(plan.repeats, 1);
  ASSERT_EQ(plan.variants.size(), 1u);
  EXPECT_EQ(plan.variants[0].name, "default");
  EXPECT_TRUE(plan.variants[0].settings.empty());
  EXPECT_FALSE(plan.checkpoint);
  EXPECT_EQ(plan.warmup, seconds(0));
  EXPECT_EQ(plan.hz, 100);
  EXPECT_TRUE(plan.pgbench_args.empty());
}

TEST(MatrixParse, BuildsAsVariants) {
  const MatrixPlan plan = load_matrix_plan(kFixtures / "plan_good_builds.yaml");
  ASSERT_EQ(plan.variants.size(), 3u);
  EXPECT_TRUE(has_builds(plan));
  EXPECT_EQ(plan.target, "");
  // Normalized, so "bin/" and "bin" are one build (one cluster).
  EXPECT_EQ(plan.variants[0].server_bin, std::filesystem::path("/opt/pg/master/bin"));
  EXPECT_EQ(plan.variants[1].server_bin, std::filesystem::path("/opt/pg/patched/bin"));
  EXPECT_EQ(plan.variants[2].server_bin, plan.variants[1].server_bin);
  // Settings still apply per variant, on that variant's build.
  EXPECT_EQ(plan.variants[2].settings,
            (std::map<std::string, std::string>{{"wal_buffers", "64MB"}}));
  EXPECT_FALSE(has_builds(load_matrix_plan(kFixtures / "plan_good_minimal.yaml")));
}

TEST(MatrixParse, FullPlanSetsEveryKey) {
  const MatrixPlan plan = load_matrix_plan(kFixtures / "plan_good_full.yaml");
  EXPECT_EQ(plan.name, "full");
  EXPECT_EQ(plan.target, "host=bench dbname=bench");
  EXPECT_EQ(plan.scale, 100);
  EXPECT_EQ(plan.workload, "update-5rows");
  EXPECT_EQ(plan.clients, (std::vector<int>{1, 16, 64}));  // sorted
  EXPECT_EQ(plan.jobs, "4");
  EXPECT_EQ(plan.duration, seconds(120));
  EXPECT_EQ(plan.repeats, 5);
  ASSERT_EQ(plan.variants.size(), 2u);
  EXPECT_EQ(plan.variants[0].name, "master");
  EXPECT_TRUE(plan.variants[0].settings.empty());
  EXPECT_EQ(plan.variants[1].name, "tuned");
  // Values are kept as written: "off" stays "off" (not "false"), and "" is a real value.
  EXPECT_EQ(plan.variants[1].settings,
            (std::map<std::string, std::string>{{"shared_buffers", "8GB"},
                                                {"synchronous_commit", "off"},
                                                {"search_path", ""},
                                                {"pg_stat_statements.max", "10000"}}));
  EXPECT_TRUE(plan.checkpoint);
  EXPECT_EQ(plan.warmup, seconds(30));
  EXPECT_EQ(plan.hz, 500);
  EXPECT_EQ(plan.pgbench_args, (std::vector<std::string>{"-M", "prepared"}));
}

TEST(MatrixParse, DurationsAcceptSecondsAndUnits) {
  const auto duration_of = [](const std::string& text) {
    return parse_matrix_plan("duration: " + text + "\n", "d.yaml").duration;
  };
  EXPECT_EQ(duration_of("45"), seconds(45));
  EXPECT_EQ(duration_of("30s"), seconds(30));
  EXPECT_EQ(duration_of("2m"), seconds(120));
  EXPECT_EQ(duration_of("1h"), seconds(3600));
  EXPECT_EQ(duration_of("1h30m"), seconds(5400));
  EXPECT_EQ(duration_of("\"90\""), seconds(90));
  EXPECT_EQ(duration_of("86400"), seconds(86400));
  EXPECT_EQ(parse_matrix_plan("warmup: 0s\n", "w.yaml").warmup, seconds(0));
  // Units must descend and not repeat: "30m1h" is more likely a typo than a duration.
  EXPECT_EQ(error_of([] { parse_matrix_plan("duration: 30m1h\n", "d.yaml"); }),
            "d.yaml:1:11: invalid value for \"duration\": \"30m1h\" (must be a whole number of "
            "seconds or a duration such as \"30s\", \"2m\" or \"1h30m\")");
  EXPECT_EQ(error_of([] { parse_matrix_plan("duration: 1.5\n", "d.yaml"); }),
            "d.yaml:1:11: invalid value for \"duration\": 1.5 (must be a whole number of "
            "seconds or a duration such as \"30s\", \"2m\" or \"1h30m\")");
}

TEST(MatrixParse, JobsRulesAreNormalized) {
  EXPECT_EQ(parse_matrix_plan("jobs: min(clients,cores)\n", "j.yaml").jobs, "min(clients, cores)");
  EXPECT_EQ(parse_matrix_plan("jobs: clients\n", "j.yaml").jobs, "clients");
  EXPECT_EQ(parse_matrix_plan("jobs: cores\n", "j.yaml").jobs, "cores");
  EXPECT_EQ(parse_matrix_plan("jobs: +8\n", "j.yaml").jobs, "8");
}

TEST(MatrixParse, SysbenchPlanWithVariantArgsAndSteps) {
  const MatrixPlan plan = parse_matrix_plan(
      "loadgen: sysbench\nargs: [\"--tables=1\", \"--rate={clients}0\"]\nsetup: prepare\n"
      "teardown: cleanup\nclients: [4]\nduration: 7\nvariants:\n  - name: ro\n"
      "    args: [oltp_read_only]\n",
      "s.yaml");
  EXPECT_EQ(plan.loadgen, "sysbench");
  EXPECT_EQ(plan.setup, "prepare");
  EXPECT_EQ(plan.teardown, "cleanup");
  EXPECT_EQ(cell_loadgen_args(plan, plan.variants[0], 4),
            (std::vector<std::string>{"--tables=1", "--rate=40", "oltp_read_only", "--threads=4",
                                      "--time=7"}));
  // A command's arguments are its own: only the placeholders are filled in.
  const MatrixPlan command = parse_matrix_plan(
      "loadgen: command\nargs: [./load.sh, \"{clients}\", \"{duration}\"]\nduration: 5\n",
      "c.yaml");
  EXPECT_EQ(cell_loadgen_args(command, command.variants[0], 8),
            (std::vector<std::string>{"./load.sh", "8", "5"}));
  EXPECT_EQ(error_of([] {
              parse_matrix_plan("loadgen: hammerdb\n", "l.yaml");
            }).rfind("l.yaml:1:10: invalid value for \"loadgen\"", 0),
            0u);
  EXPECT_EQ(error_of([] { parse_matrix_plan("loadgen: command\n", "l.yaml"); }),
            "l.yaml:1:1: missing required key \"args\" (the command, for loadgen command)");
  EXPECT_NE(error_of([] {
              parse_matrix_plan("setup: prepare\n", "l.yaml");
            }).find("set-up and tear-down steps are sysbench's"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_matrix_plan("loadgen: sysbench\npgbench_args: [-n]\n", "l.yaml");
            }).find("the load generator's arguments go in \"args\""),
            std::string::npos);
}

TEST(MatrixParse, ClientsAutoTakesAMaximum) {
  const MatrixPlan plan = parse_matrix_plan("clients: auto\nmax_clients: 32\n", "auto.yaml");
  EXPECT_TRUE(plan.clients_auto);
  EXPECT_EQ(plan.max_clients, 32);
  EXPECT_TRUE(plan.clients.empty());
  EXPECT_EQ(error_of([] { parse_matrix_plan("clients: auto\n", "a.yaml"); }),
            "a.yaml:1:10: \"clients: auto\" needs \"max_clients\"");
  EXPECT_EQ(error_of([] { parse_matrix_plan("clients: [1, 2]\nmax_clients: 8\n", "a.yaml"); }),
            "a.yaml:2:14: invalid value for \"max_clients\": 8 (is the limit of \"clients: "
            "auto\" and needs it)");
  EXPECT_EQ(error_of([] { parse_matrix_plan("clients: auto\nmax_clients: 1\n", "a.yaml"); }),
            "a.yaml:2:14: invalid value for \"max_clients\": 1 (must be between 2 and 10000)");
  EXPECT_EQ(
      error_of(
          [] { parse_matrix_plan("clients: auto\nmax_clients: 8\nworkload: copy\n", "a.yaml"); }),
      "a.yaml:1:10: \"clients: auto\" finds where tps stops rising: it needs runs measured by "
      "tps, not fixed-work runs");
  // A quoted "auto" is a string where a list belongs.
  EXPECT_NE(error_of([] {
              parse_matrix_plan("clients: \"auto\"\n", "a.yaml");
            }).find("\"clients\" must be a list"),
            std::string::npos);
}

TEST(MatrixParse, EmptyVariantListGetsTheDefaultVariant) {
  const MatrixPlan plan = parse_matrix_plan("variants: []\n", "v.yaml");
  ASSERT_EQ(plan.variants.size(), 1u);
  EXPECT_EQ(plan.variants[0].name, "default");
}

TEST(MatrixParse, PgbenchArgsMayNotOverrideThePlan) {
  // Attached and long forms are caught too; other options pass.
  for (const std::string arg :
       {"-c8", "-j2", "-T60", "-t100", "--client=8", "--jobs", "--time=5", "--transactions=10"}) {
    EXPECT_NE(error_of([&] {
                parse_matrix_plan("pgbench_args: [\"" + arg + "\"]\n", "a.yaml");
              }).find("(clients, jobs and duration are set by the plan's"),
              std::string::npos)
        << arg;
  }
  EXPECT_EQ(
      parse_matrix_plan("pgbench_args: [-M, prepared, --protocol=simple, -P, \"1\"]\n", "a.yaml")
          .pgbench_args.size(),
      5u);
}

TEST(MatrixParse, AWorkloadBesideTheUsersScriptOptionIsRefused) {
  // The plan's own workload, and a variant's.
  EXPECT_EQ(error_of([] { parse_matrix_plan("workload: tpcb\npgbench_args: [-S]\n", "a.yaml"); }),
            "a.yaml:1:11: workload \"tpcb\" and pgbench's script option \"-S\" cannot be "
            "used together");
  EXPECT_NE(error_of([] {
              parse_matrix_plan(
                  "pgbench_args: [--file=mine.sql]\nvariants:\n  - name: a\n"
                  "    workload: tpcb-func\n",
                  "a.yaml");
            }).find("a.yaml:4:15: workload \"tpcb-func\" and pgbench's script option"),
            std::string::npos);
  // No workload named: the user's scripts are the workload.
  EXPECT_EQ(parse_matrix_plan("pgbench_args: [-S]\n", "a.yaml").pgbench_args.size(), 1u);
}

TEST(ConfigParse, ARunsWorkloadBesideTheUsersScriptOptionIsRefused) {
  EXPECT_NE(error_of([] {
              parse_config(
                  "targets:\n  - name: local\nruns:\n  - workload: select-only\n"
                  "    pgbench_args: [-N]\n",
                  "c.yaml");
            }).find("c.yaml:4:15: workload \"select-only\" and pgbench's script option \"-N\""),
            std::string::npos);
  EXPECT_EQ(parse_config("targets:\n  - name: local\nruns:\n  - pgbench_args: [-N]\n", "c.yaml")
                .runs.size(),
            1u);
}

// ---- the shipped examples ----

TEST(ConfigExample, DaemonExampleParses) {
  const ValidatedConfig config = load_config(kSourceDir / "config/pgwaitprof.example.yaml");
  EXPECT_EQ(config.listen, "127.0.0.1:9816");
  EXPECT_EQ(config.log_level, "info");
  ASSERT_EQ(config.targets.size(), 2u);
  EXPECT_EQ(config.targets[0].name, "local");
  EXPECT_EQ(config.targets[0].dsn, "");
  EXPECT_EQ(config.targets[0].labels.at("cluster"), "dev");
  EXPECT_EQ(config.targets[1].source, SamplerSource::kActivity);
  // Runs replace pgbench tables: an example copied as-is must not start one.
  EXPECT_TRUE(config.runs.empty());
  EXPECT_TRUE(config.matrix_plans.empty());
  EXPECT_EQ(config.results.dsn, "");  // no upload as shipped
  EXPECT_EQ(config.targets[0].local, LocalMode::kAuto);
}

TEST(MatrixExample, MatrixExampleParses) {
  const MatrixPlan plan = load_matrix_plan(kSourceDir / "config/matrix.example.yaml");
  EXPECT_EQ(plan.name, "wal-insert-scaling");
  EXPECT_EQ(plan.target, "");  // a scratch cluster: safe to run as shipped
  EXPECT_EQ(plan.clients, (std::vector<int>{1, 8, 16, 32, 64}));
  EXPECT_EQ(plan.duration, seconds(30));
  EXPECT_EQ(plan.warmup, seconds(5));
  ASSERT_EQ(plan.variants.size(), 3u);
  EXPECT_EQ(plan.variants[1].settings.at("commit_delay"), "10");
}

// Documentation that misses a key rots silently: the example shows every key the parser takes.
TEST(ConfigExample, ExamplesDocumentEveryKey) {
  const std::string daemon = read_text(kSourceDir / "config/pgwaitprof.example.yaml");
  // Every key the parser takes, of every map: "results" and a target's "local" were missing.
  const auto keys = daemon_config_keys();
  EXPECT_GE(keys.size(), 28u);
  for (const auto key : keys) {
    EXPECT_NE(daemon.find(std::string(key) + ":"), std::string::npos) << key;
  }
  const std::string matrix = read_text(kSourceDir / "config/matrix.example.yaml");
  for (const std::string key :
       {"name", "target", "scale", "workload", "clients", "jobs", "duration", "repeats", "variants",
        "server_bin", "settings", "checkpoint", "warmup", "hz", "source", "pgbench_args",
        "max_clients", "cpu_profile"}) {
    EXPECT_NE(matrix.find(key + ":"), std::string::npos) << key;
  }
  // Every commented-out key must be a real one: the example runs and results blocks,
  // uncommented, parse.
  const auto commented_block = [&](const std::string& first_line) {
    std::string block;
    std::istringstream lines(daemon);
    bool in_block = false;
    for (std::string line; std::getline(lines, line);) {
      if (line == first_line) in_block = true;
      if (in_block && !line.starts_with("#   ")) break;
      if (in_block) block += line.substr(4) + "\n";
    }
    return block;
  };
  const auto runs_block = commented_block("#   runs:");
  ASSERT_FALSE(runs_block.empty());
  const ValidatedConfig with_runs =
      parse_config("targets:\n  - name: local\n" + runs_block, "runs-example.yaml");
  ASSERT_EQ(with_runs.runs.size(), 1u);
  EXPECT_EQ(with_runs.runs[0].workload, "select-only");
  const auto results_block = commented_block("#   results:");
  ASSERT_FALSE(results_block.empty());
  EXPECT_EQ(parse_config("targets:\n  - name: local\n" + results_block, "results-example.yaml")
                .results.dsn,
            "host=results.example.com dbname=pgwaitprof user=bench");
}

// ---- jobs_for: the -j that pgbench gets ----

MatrixPlan plan_with_jobs(const std::string& jobs) {
  MatrixPlan plan;
  plan.jobs = jobs;
  return plan;
}

TEST(MatrixJobs, IntegerIsCappedByClients) {
  EXPECT_EQ(jobs_for(plan_with_jobs("4"), 16, 2), 4);  // cores do not matter
  EXPECT_EQ(jobs_for(plan_with_jobs("4"), 2, 64), 2);  // pgbench needs threads <= clients
}

TEST(MatrixJobs, MinOfClientsAndCores) {
  EXPECT_EQ(jobs_for(plan_with_jobs("min(clients, cores)"), 64, 8), 8);
  EXPECT_EQ(jobs_for(plan_with_jobs("min(clients, cores)"), 4, 8), 4);
}

TEST(MatrixJobs, ClientsAndCores) {
  EXPECT_EQ(jobs_for(plan_with_jobs("clients"), 64, 8), 64);
  EXPECT_EQ(jobs_for(plan_with_jobs("cores"), 64, 8), 8);
  EXPECT_EQ(jobs_for(plan_with_jobs("cores"), 2, 8), 2);
}

TEST(MatrixJobs, NeverBelowOne) {
  // An unknown core count (0) or a degenerate call still gives pgbench a valid -j.
  EXPECT_EQ(jobs_for(plan_with_jobs("cores"), 8, 0), 1);
  EXPECT_EQ(jobs_for(plan_with_jobs("min(clients, cores)"), 0, 8), 1);
  EXPECT_EQ(jobs_for(plan_with_jobs("clients"), 0, 8), 1);
}

TEST(MatrixJobs, ParsedPlanRuleIsUsed) {
  const MatrixPlan plan = parse_matrix_plan("jobs: min(clients,cores)\n", "j.yaml");
  EXPECT_EQ(jobs_for(plan, 32, 4), 4);
}

TEST(MatrixJobs, HandBuiltPlanWithUnknownRuleThrows) {
  EXPECT_THROW(jobs_for(plan_with_jobs("threads"), 8, 4), std::invalid_argument);
  EXPECT_THROW(jobs_for(plan_with_jobs("0"), 8, 4), std::invalid_argument);
}

}  // namespace
}  // namespace pgwaitprof::config
