// Tests of the daemon configuration parser: good files give the expected values and every
// class of bad input its exact one-line FILE:LINE:COLUMN message (bad fixture files:
// config_bad_files_test.cc; plans and the shipped examples: plan_and_examples_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/daemon_config.h"
#include "config/matrix_plan.h"
#include "tests/config/config_fixture.h"

namespace pgwaitprof::config {
namespace {

using namespace test_support;

TEST(ConfigParse, MinimalFileGetsDocumentedDefaults) {
  const ValidatedConfig config = load_config(kFixtures / "config_good_minimal.yaml");
  EXPECT_EQ(config.listen, "127.0.0.1:9816");
  EXPECT_EQ(config.data_dir, fs::path("/var/lib/pgwaitprof"));
  EXPECT_EQ(config.log_level, "info");
  EXPECT_EQ(config.loadgen_executables, std::vector<std::string>{"pgbench"});
  EXPECT_TRUE(config.runs.empty());
  EXPECT_TRUE(config.matrix_plans.empty());
  ASSERT_EQ(config.targets.size(), 1u);
  const TargetConfig& target = config.targets[0];
  EXPECT_EQ(target.name, "default");  // a single target needs no name
  EXPECT_EQ(target.dsn, "");          // `dsn:` with no value means the PG* variables
  EXPECT_EQ(target.hz, 100);
  EXPECT_EQ(target.source, SamplerSource::kAuto);
  EXPECT_EQ(target.pg_wait_sampling_poll, milliseconds(1000));
  EXPECT_TRUE(target.labels.empty());
}

TEST(ConfigParse, FullFileSetsEveryKey) {
  const fs::path path = kFixtures / "config_good_full.yaml";
  const ValidatedConfig config = load_config(path);
  EXPECT_EQ(config.listen, "0.0.0.0:9900");  // allowed: basic auth is configured
  EXPECT_EQ(config.web.basic_auth_users.at("prometheus").substr(0, 7), "$2y$10$");
  EXPECT_FALSE(config.web.insecure);
  EXPECT_EQ(config.control.max_connections, 4);
  EXPECT_EQ(config.control.request_timeout, std::chrono::seconds(30));
  EXPECT_EQ(config.data_dir, fs::path("/srv/pgwaitprof"));
  EXPECT_EQ(config.log_level, "debug");
  EXPECT_EQ(config.loadgen_executables,
            (std::vector<std::string>{"pgbench", "/opt/pg/bin/pgbench"}));

  ASSERT_EQ(config.targets.size(), 2u);
  const TargetConfig& db1 = config.targets[0];
  EXPECT_EQ(db1.name, "db1");
  EXPECT_EQ(db1.dsn, "host=db1 dbname=bench");
  EXPECT_EQ(db1.source, SamplerSource::kPgWaitSampling);
  EXPECT_EQ(db1.pg_wait_sampling_poll, milliseconds(500));
  EXPECT_EQ(db1.labels, (std::map<std::string, std::string>{{"cluster", "east"}, {"tier", "1"}}));
  const TargetConfig& db2 = config.targets[1];
  EXPECT_EQ(db2.name, "db2.replica-1");
  EXPECT_EQ(db2.dsn, "postgresql://monitor@db2/postgres");
  EXPECT_DOUBLE_EQ(db2.hz, 250.5);
  EXPECT_EQ(db2.source, SamplerSource::kActivity);

  ASSERT_EQ(config.runs.size(), 2u);
  const RunConfig& baseline = config.runs[0];
  EXPECT_EQ(baseline.target, "db2.replica-1");
  EXPECT_EQ(baseline.workload, "select-only");
  EXPECT_EQ(baseline.label, "baseline");
  EXPECT_EQ(baseline.pgbench_args, (std::vector<std::string>{"-c", "8", "-T", "30"}));
  EXPECT_EQ(baseline.interval, std::chrono::seconds(2));
  const RunConfig& defaults = config.runs[1];
  EXPECT_EQ(defaults.target, "db1");
  EXPECT_EQ(defaults.workload, "tpcb");
  EXPECT_EQ(defaults.label, "");
  EXPECT_TRUE(defaults.pgbench_args.empty());
  EXPECT_EQ(defaults.interval, std::chrono::seconds(1));

  // Relative plan paths follow the configuration file; absolute ones are kept.
  ASSERT_EQ(config.matrix_plans.size(), 2u);
  EXPECT_EQ(config.matrix_plans[0], path.parent_path() / "plans/sweep.yaml");
  EXPECT_EQ(config.matrix_plans[1], fs::path("/etc/pgwaitprof/other.yaml"));
}

TEST(ConfigParse, RunWithoutTargetUsesTheOnlyTarget) {
  const ValidatedConfig config =
      parse_config("targets:\n  - name: db1\nruns:\n  - workload: bulk-copy\n", "p.yaml");
  ASSERT_EQ(config.runs.size(), 1u);
  EXPECT_EQ(config.runs[0].target, "db1");
  EXPECT_EQ(config.runs[0].workload, "bulk-copy");
}

TEST(ConfigParse, MatrixPlanPathsResolveAgainstTheConfigDirectory) {
  const ValidatedConfig config = parse_config(
      "targets: [{}]\nmatrix_plans: [sweep.yaml, ../shared/ab.yaml]\n", "/etc/pgwaitprof/p.yaml");
  EXPECT_EQ(config.matrix_plans, (std::vector<fs::path>{"/etc/pgwaitprof/sweep.yaml",
                                                        "/etc/pgwaitprof/../shared/ab.yaml"}));
  // A bare file name has no directory: the path stays relative to the working directory.
  const ValidatedConfig bare =
      parse_config("targets: [{}]\nmatrix_plans: [sweep.yaml]\n", "p.yaml");
  EXPECT_EQ(bare.matrix_plans, std::vector<fs::path>{"sweep.yaml"});
}

TEST(ConfigParse, EmptyListsAndMapsMayBeLeftEmpty) {
  // `runs:` whose items were all commented out is an empty list, not a type error.
  const ValidatedConfig config = parse_config(
      "targets:\n  - labels:\nruns:\nmatrix_plans:\nloadgen_executables: []\n", "p.yaml");
  EXPECT_TRUE(config.targets.at(0).labels.empty());
  EXPECT_TRUE(config.runs.empty());
  EXPECT_TRUE(config.matrix_plans.empty());
  EXPECT_TRUE(config.loadgen_executables.empty());
}

TEST(ConfigSource, TheRegistryGivesTheConfigSpelling) {
  EXPECT_EQ(model::to_string(SamplerSource::kActivity), "activity");
  EXPECT_EQ(model::to_string(SamplerSource::kPgWaitSampling), "pg_wait_sampling");
  EXPECT_EQ(model::to_string(SamplerSource::kMemory), "memory");
  EXPECT_EQ(model::to_string(SamplerSource::kTrace), "trace");
  EXPECT_EQ(model::to_string(SamplerSource::kAuto), "auto");
  EXPECT_EQ(model::sampler_source_names(),
            (std::vector<std::string>{"auto", "activity", "pg_wait_sampling", "memory", "trace"}));
  EXPECT_EQ(model::parse_sampler_source("trace"), SamplerSource::kTrace);
  EXPECT_EQ(model::parse_sampler_source("auto"), SamplerSource::kAuto);
  EXPECT_EQ(model::parse_sampler_source("pg_stat_activity"), std::nullopt);
}

TEST(ConfigListen, OnlyLoopbackMayGoWithoutAuthentication) {
  EXPECT_TRUE(is_loopback_listen("127.0.0.1:9816"));
  EXPECT_TRUE(is_loopback_listen("[::1]:9816"));
  EXPECT_TRUE(is_loopback_listen("localhost:9816"));
  EXPECT_FALSE(is_loopback_listen("0.0.0.0:9816"));
  EXPECT_FALSE(is_loopback_listen("[::]:9816"));
  EXPECT_NO_THROW(check_listen_protected("0.0.0.0:9816", WebConfig{{}, true}));
  EXPECT_NO_THROW(check_listen_protected("10.0.0.1:9816", WebConfig{{{"p", "hash"}}, false}));
  EXPECT_THROW(check_listen_protected("10.0.0.1:9816", WebConfig{}), ConfigError);
  const auto insecure =
      parse_config("listen: 0.0.0.0:9816\nweb:\n  insecure: true\ntargets: [{}]\n", "p.yaml");
  EXPECT_TRUE(insecure.web.insecure);
}

// ---- error format ----

TEST(ConfigErrors, MessagesMatchTheDocumentedExamples) {
  // The two examples of the message format, reproduced at the same line and column.
  EXPECT_EQ(error_of([] {
              parse_config(
                  "listen: 127.0.0.1:9816\n"
                  "data_dir: /tmp/pgwaitprof\n"
                  "targets:\n"
                  "  - name: a\n"
                  "    dsn: \"\"\n"
                  "  - name: b\n"
                  "    hz: 20000\n",
                  "pgwaitprof.yaml");
            }),
            "pgwaitprof.yaml:7:9: invalid value for \"hz\": 20000 (must be between 1 and 10000)");
  EXPECT_EQ(error_of([] { parse_config("targets:\n- name: a\n  hzz: 5\n", "pgwaitprof.yaml"); }),
            "pgwaitprof.yaml:3:3: unrecognized configuration key \"hzz\"");
}

TEST(ConfigErrors, UnreadableFileNamesThePathAndTheReason) {
  const fs::path missing = kFixtures / "no_such_file.yaml";
  EXPECT_EQ(
      error_of([&] { load_config(missing); }),
      "could not open configuration file \"" + missing.string() + "\": No such file or directory");
  EXPECT_EQ(
      error_of([&] { load_matrix_plan(missing); }),
      "could not open matrix plan file \"" + missing.string() + "\": No such file or directory");
  EXPECT_EQ(error_of([&] { load_config(kFixtures); }),
            "configuration file \"" + kFixtures.string() +
                "\" is not a regular file (it is a directory)");
}

TEST(ConfigErrors, ValuesWithNewlinesStayOnOneLine) {
  const std::string message =
      error_of([] { parse_config("targets:\n  - source: \"a\\nb\"\n", "p.yaml"); });
  EXPECT_EQ(message,
            "p.yaml:2:13: invalid value for \"source\": \"a\\nb\" (must be one of "
            "\"auto\", \"activity\", \"pg_wait_sampling\", \"memory\", \"trace\")");
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(ConfigErrors, EmptyFileNeedsATarget) {
  EXPECT_EQ(error_of([] { parse_config("", "empty.yaml"); }),
            "empty.yaml:1:1: at least one target is required");
  EXPECT_EQ(error_of([] { parse_config("# only a comment\n", "empty.yaml"); }),
            "empty.yaml:1:1: at least one target is required");
}

}  // namespace
}  // namespace pgwaitprof::config
