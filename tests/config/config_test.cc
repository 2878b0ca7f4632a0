// Tests of the daemon configuration and matrix plan parsers: good files give the expected
// values, every class of bad input gives its exact one-line FILE:LINE:COLUMN message, the
// shipped examples parse and document every key, and the jobs rule gives pgbench a valid -j.
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

namespace pgwaitprof::config {
namespace {

namespace fs = std::filesystem;
using model::SamplerSource;
using std::chrono::milliseconds;
using std::chrono::seconds;

const fs::path kFixtures = fs::path(PGWAITPROF_FIXTURES) / "config";
const fs::path kSourceDir = PGWAITPROF_SOURCE_DIR;

// The message of the ConfigError that `parse` throws, or a failure naming what it returned.
template <typename Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError was thrown";
  return "";
}

std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// ---- daemon configuration: good files ----

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
  EXPECT_EQ(target.source, SamplerSource::kActivity);
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
  EXPECT_EQ(model::sampler_source_names(),
            (std::vector<std::string>{"activity", "pg_wait_sampling"}));
  EXPECT_EQ(model::parse_sampler_source("auto"), std::nullopt);
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
            "could not read configuration file \"" + kFixtures.string() + "\": Is a directory");
}

TEST(ConfigErrors, ValuesWithNewlinesStayOnOneLine) {
  const std::string message =
      error_of([] { parse_config("targets:\n  - source: \"a\\nb\"\n", "p.yaml"); });
  EXPECT_EQ(message,
            "p.yaml:2:13: invalid value for \"source\": \"a\\nb\" (must be one of "
            "\"activity\", \"pg_wait_sampling\")");
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(ConfigErrors, EmptyFileNeedsATarget) {
  EXPECT_EQ(error_of([] { parse_config("", "empty.yaml"); }),
            "empty.yaml:1:1: at least one target is required");
  EXPECT_EQ(error_of([] { parse_config("# only a comment\n", "empty.yaml"); }),
            "empty.yaml:1:1: at least one target is required");
}

// ---- bad files: one fixture per class of error, with its exact message ----

struct BadFile {
  std::string file;
  std::string location_and_message;  // what follows "PATH:"
};

// Test names come from the fixture names so a failure says which file it was.
std::string bad_file_name(const testing::TestParamInfo<BadFile>& info) {
  std::string name = fs::path(info.param.file).stem().string();
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

class ConfigBadFile : public testing::TestWithParam<BadFile> {};

TEST_P(ConfigBadFile, FailsWithItsExactMessage) {
  const fs::path path = kFixtures / GetParam().file;
  ASSERT_TRUE(fs::exists(path)) << path;
  EXPECT_EQ(error_of([&] { load_config(path); }),
            path.string() + ":" + GetParam().location_and_message);
}

const std::vector<BadFile> kBadConfigs = {
    {"config_bad_unknown_key.yaml", "3:5: unrecognized configuration key \"hzz\""},
    {"config_bad_unknown_top_key.yaml", "2:1: unrecognized configuration key \"target\""},
    {"config_bad_hz_range.yaml",
     "3:9: invalid value for \"hz\": 20000 (must be between 1 and 10000)"},
    {"config_bad_hz_type.yaml", R"(3:9: invalid value for "hz": "fast" (must be a number))"},
    {"config_bad_hz_quoted.yaml",
     R"(2:9: invalid value for "hz": "100" (must be a number, not a string))"},
    {"config_bad_hz_missing_value.yaml", "2:5: missing value for \"hz\""},
    {"config_bad_targets_scalar.yaml", "1:10: \"targets\" must be a list, not a scalar"},
    {"config_bad_target_scalar_item.yaml",
     "2:5: each item of \"targets\" must be a map, not a scalar"},
    {"config_bad_no_targets.yaml", "1:1: at least one target is required"},
    {"config_bad_empty_targets.yaml", "1:10: at least one target is required"},
    {"config_bad_duplicate_target.yaml", "4:11: duplicate target name \"db1\""},
    {"config_bad_target_name_chars.yaml",
     "2:11: invalid value for \"name\": \"db 1\" (must contain only letters, digits, \"_\", "
     "\".\" and \"-\")"},
    {"config_bad_missing_target_name.yaml",
     "3:5: missing required key \"name\" (required when there is more than one target)"},
    {"config_bad_source.yaml",
     "2:13: invalid value for \"source\": \"pg_stat_activity\" (must be one of \"activity\", "
     "\"pg_wait_sampling\")"},
    {"config_bad_source_auto.yaml",
     "2:13: invalid value for \"source\": \"auto\" (\"auto\" is no longer accepted: choose "
     "\"activity\" (pg_stat_activity at hz, the default) or \"pg_wait_sampling\" (the "
     "extension's own profile))"},
    {"config_bad_hz_with_wait_sampling.yaml",
     "2:9: invalid value for \"hz\": 1000 (cannot be used with source pg_wait_sampling: the "
     "extension samples at its own pg_wait_sampling.profile_period)"},
    {"config_bad_listen_unprotected.yaml",
     "1:9: invalid value for \"listen\": \"0.0.0.0:9816\" (a non-loopback address needs "
     "web.basic_auth_users, or web.insecure: true to serve /metrics to anyone who can reach it)"},
    {"config_bad_bcrypt.yaml",
     "3:17: invalid value for \"prometheus\": not a bcrypt hash (make one with: htpasswd -nBC 10 "
     "\"\" | tr -d ':\\n')"},
    {"config_bad_control.yaml",
     "2:20: invalid value for \"max_connections\": 0 (must be between 1 and 1000)"},
    {"config_bad_poll_range.yaml",
     "2:31: invalid value for \"pg_wait_sampling_poll_ms\": 50 (must be between 100 and 60000)"},
    {"config_bad_poll_not_integer.yaml",
     "2:31: invalid value for \"pg_wait_sampling_poll_ms\": 1.5 (must be an integer)"},
    {"config_bad_labels_type.yaml", "2:13: \"labels\" must be a map, not a list"},
    {"config_bad_label_name.yaml",
     "3:7: invalid label name \"cluster-name\" (must match [a-zA-Z_][a-zA-Z0-9_]* and not begin "
     "with \"__\")"},
    {"config_bad_label_reserved.yaml",
     "3:7: label name \"wait_event\" is reserved (used by pgwaitprof's own metrics)"},
    {"config_bad_duplicate_key.yaml", "4:5: duplicate configuration key \"hz\""},
    {"config_bad_run_unknown_target.yaml",
     "5:13: invalid value for \"target\": \"db3\" (must name a configured target: \"db1\", "
     "\"db2\")"},
    {"config_bad_run_missing_target.yaml",
     "5:5: missing required key \"target\" (required when there is more than one target)"},
    {"config_bad_workload.yaml",
     "4:15: invalid value for \"workload\": \"tpcc\" (must be one of \"tpcb\", \"tpcb-func\", "
     "\"select-only\", \"update-5rows\", \"tpcb-fewer-accounts\", \"bulk-copy\", \"copy\")"},
    {"config_bad_interval.yaml",
     "4:15: invalid value for \"interval\": 0 (must be between 1 and 3600)"},
    {"config_bad_interval_fraction.yaml",
     "4:15: invalid value for \"interval\": 0.5 (must be an integer)"},
    {"config_bad_pgbench_args_scalar.yaml", "4:19: \"pgbench_args\" must be a list, not a scalar"},
    {"config_bad_pgbench_args_item.yaml",
     "4:24: each item of \"pgbench_args\" must be a string, not a map"},
    {"config_bad_log_level.yaml",
     "1:12: invalid value for \"log_level\": \"verbose\" (must be one of \"trace\", \"debug\", "
     "\"info\", \"warn\", \"error\", \"off\")"},
    {"config_bad_listen.yaml",
     "1:9: invalid value for \"listen\": 9816 (must be HOST:PORT, such as \"127.0.0.1:9816\" or "
     "\"[::1]:9816\")"},
    {"config_bad_listen_port.yaml",
     R"(1:9: invalid value for "listen": "localhost:0" (port must be between 1 and 65535))"},
    {"config_bad_loadgen_relative.yaml",
     "1:23: invalid value for \"loadgen_executables\": \"bin/pgbench\" (must be a command name "
     "or an absolute path)"},
    {"config_bad_data_dir_empty.yaml",
     R"(1:11: invalid value for "data_dir": "" (must not be empty))"},
    {"config_bad_matrix_plans_scalar.yaml", "1:15: \"matrix_plans\" must be a list, not a scalar"},
    {"config_bad_syntax.yaml", "3:8: invalid YAML: illegal map value"},
    {"config_bad_syntax_unclosed.yaml", "3:1: invalid YAML: end of sequence flow not found"},
    // yaml-cpp 0.7's LoadAll never returns on this input; the parser must not use it.
    {"config_bad_stray_comma.yaml", R"(1:1: invalid YAML: unexpected ",")"},
    {"config_bad_top_level_list.yaml", "1:1: configuration must be a map, not a list"},
    {"config_bad_two_documents.yaml", "4:1: configuration must be a single YAML document"},
};
INSTANTIATE_TEST_SUITE_P(ConfigFixtures, ConfigBadFile, testing::ValuesIn(kBadConfigs),
                         bad_file_name);

class MatrixBadFile : public testing::TestWithParam<BadFile> {};

TEST_P(MatrixBadFile, FailsWithItsExactMessage) {
  const fs::path path = kFixtures / GetParam().file;
  ASSERT_TRUE(fs::exists(path)) << path;
  EXPECT_EQ(error_of([&] { load_matrix_plan(path); }),
            path.string() + ":" + GetParam().location_and_message);
}

const std::vector<BadFile> kBadPlans = {
    {"plan_bad_unknown_key.yaml", "1:1: unrecognized configuration key \"client\""},
    {"plan_bad_name_type.yaml", "1:7: \"name\" must be a string, not a list"},
    {"plan_bad_scale_range.yaml",
     "1:8: invalid value for \"scale\": 0 (must be between 1 and 100000)"},
    {"plan_bad_scale_type.yaml", R"(1:8: invalid value for "scale": "ten" (must be an integer))"},
    {"plan_bad_workload.yaml",
     "1:11: invalid value for \"workload\": \"tpcc\" (must be one of \"tpcb\", \"tpcb-func\", "
     "\"select-only\", \"update-5rows\", \"tpcb-fewer-accounts\", \"bulk-copy\", \"copy\")"},
    {"plan_bad_clients_empty.yaml", "1:10: \"clients\" must list at least one client count"},
    {"plan_bad_clients_duplicate.yaml", "1:21: duplicate value in \"clients\": 8"},
    {"plan_bad_clients_range.yaml",
     "3:5: invalid value for \"clients\": 20000 (must be between 1 and 10000)"},
    {"plan_bad_clients_scalar.yaml", "1:10: \"clients\" must be a list, not a scalar"},
    {"plan_bad_jobs.yaml",
     "1:7: invalid value for \"jobs\": \"all\" (must be a positive integer or one of "
     "\"min(clients, cores)\", \"clients\", \"cores\")"},
    {"plan_bad_jobs_zero.yaml",
     "1:7: invalid value for \"jobs\": 0 (must be a positive integer or one of "
     "\"min(clients, cores)\", \"clients\", \"cores\")"},
    {"plan_bad_duration_format.yaml",
     "1:11: invalid value for \"duration\": \"10 minutes\" (must be a whole number of seconds or "
     "a duration such as \"30s\", \"2m\" or \"1h30m\")"},
    {"plan_bad_duration_unit.yaml",
     "1:11: invalid value for \"duration\": \"2d\" (must be a whole number of seconds or a "
     "duration such as \"30s\", \"2m\" or \"1h30m\")"},
    {"plan_bad_duration_range.yaml",
     R"(1:11: invalid value for "duration": "25h" (must be between 1 and 86400 seconds))"},
    {"plan_bad_duration_zero.yaml",
     "1:11: invalid value for \"duration\": 0 (must be between 1 and 86400 seconds)"},
    {"plan_bad_warmup_negative.yaml",
     "1:9: invalid value for \"warmup\": -5 (must be between 0 and 86400 seconds)"},
    {"plan_bad_repeats.yaml", "1:10: invalid value for \"repeats\": 0 (must be between 1 and 100)"},
    {"plan_bad_variants_scalar.yaml", "1:11: \"variants\" must be a list, not a scalar"},
    {"plan_bad_variant_missing_name.yaml", "3:5: missing required key \"name\""},
    {"plan_bad_variant_duplicate.yaml", "3:11: duplicate variant name \"master\""},
    {"plan_bad_variant_unknown_key.yaml", "3:5: unrecognized configuration key \"setting\""},
    {"plan_bad_setting_name.yaml",
     "4:7: invalid setting name \"work_mem; drop table x\" (must be a PostgreSQL parameter name "
     "such as \"work_mem\")"},
    {"plan_bad_setting_value.yaml", "4:17: \"work_mem\" must be a string, not a list"},
    {"plan_bad_checkpoint.yaml",
     R"(1:13: invalid value for "checkpoint": "sometimes" (must be true or false))"},
    {"plan_bad_hz.yaml", "1:5: invalid value for \"hz\": 0.5 (must be between 1 and 10000)"},
    {"plan_bad_pgbench_args_owned.yaml",
     "1:30: invalid value for \"pgbench_args\": \"-c\" (clients, jobs and duration are set by the "
     "plan's \"clients\", \"jobs\" and \"duration\")"},
    {"plan_bad_syntax_tab.yaml", "2:2: invalid YAML: illegal block entry"},
};
INSTANTIATE_TEST_SUITE_P(MatrixFixtures, MatrixBadFile, testing::ValuesIn(kBadPlans),
                         bad_file_name);

// A bad fixture that no table lists would never be checked.
TEST(ConfigFixtureList, EveryBadFixtureHasAnExpectedMessage) {
  std::set<std::string> listed;
  for (const BadFile& bad : kBadConfigs) listed.insert(bad.file);
  for (const BadFile& bad : kBadPlans) listed.insert(bad.file);
  std::size_t bad_fixtures = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kFixtures)) {
    const std::string name = entry.path().filename().string();
    if (name.find("_bad_") == std::string::npos) continue;
    ++bad_fixtures;
    EXPECT_TRUE(listed.contains(name)) << name << " has no expected message";
  }
  EXPECT_EQ(bad_fixtures, listed.size());
}

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

// Documentation that misses a key rots silently; the parser's keys are listed here once more.
TEST(ConfigExample, ExamplesDocumentEveryKey) {
  const std::string daemon = read_text(kSourceDir / "config/pgwaitprof.example.yaml");
  for (const std::string key : {"listen",
                                "data_dir",
                                "log_level",
                                "loadgen_executables",
                                "targets",
                                "name",
                                "dsn",
                                "hz",
                                "source",
                                "pg_wait_sampling_poll_ms",
                                "labels",
                                "runs",
                                "target",
                                "workload",
                                "label",
                                "pgbench_args",
                                "interval",
                                "matrix_plans",
                                "web",
                                "basic_auth_users",
                                "insecure",
                                "control",
                                "max_connections",
                                "request_timeout"}) {
    EXPECT_NE(daemon.find(key + ":"), std::string::npos) << key;
  }
  const std::string matrix = read_text(kSourceDir / "config/matrix.example.yaml");
  for (const std::string key :
       {"name", "target", "scale", "workload", "clients", "jobs", "duration", "repeats", "variants",
        "settings", "checkpoint", "warmup", "hz", "pgbench_args"}) {
    EXPECT_NE(matrix.find(key + ":"), std::string::npos) << key;
  }
  // Every commented-out key must be a real one: the example runs block, uncommented, parses.
  std::string runs_block;
  std::istringstream lines(daemon);
  bool in_block = false;
  for (std::string line; std::getline(lines, line);) {
    if (line == "#   runs:") in_block = true;
    if (in_block && !line.starts_with("#   ")) break;
    if (in_block) runs_block += line.substr(4) + "\n";
  }
  ASSERT_FALSE(runs_block.empty());
  const ValidatedConfig with_runs =
      parse_config("targets:\n  - name: local\n" + runs_block, "runs-example.yaml");
  ASSERT_EQ(with_runs.runs.size(), 1u);
  EXPECT_EQ(with_runs.runs[0].workload, "select-only");
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
