// Every class of bad configuration and plan file gives its exact one-line FILE:LINE:COLUMN
// message (one fixture each under tests/fixtures/config), and no bad fixture goes unlisted.
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
    // YAML's own spelling of NaN: not a number, whatever the YAML library makes of it.
    {"config_bad_hz_nan.yaml", R"(3:9: invalid value for "hz": ".nan" (must be a number))"},
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
    {"config_bad_sampler_host.yaml",
     "3:19: invalid value for \"sampler_host\": \"db1\" (expected ssh://[user@]host[:port])"},
    {"config_bad_source.yaml",
     "2:13: invalid value for \"source\": \"pg_stat_activity\" (must be one of \"auto\", "
     "\"activity\", \"pg_wait_sampling\", \"memory\", \"trace\")"},
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
    // pgbench's atof takes "nan" for a rate.
    {"config_bad_pgbench_rate_nan.yaml",
     R"(4:34: invalid value for "pgbench_args": "nan" (the value of pgbench option "-R" must be a )"
     R"(number between 0.001 and 1000000000))"},
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
    // pgbench -P is also the timeline's interval.
    {"plan_bad_pgbench_progress.yaml",
     R"(1:16: invalid value for "pgbench_args": "--progress=0" (the value of pgbench option )"
     R"("--progress" must be between 1 and 3600))"},
    {"plan_bad_syntax_tab.yaml", "2:2: invalid YAML: illegal block entry"},
    // A build as a variant runs in a scratch cluster of its own.
    {"plan_bad_server_bin_target.yaml",
     "4:5: \"server_bin\" runs the variant in a scratch cluster of that build: it cannot be used "
     "with \"target\""},
    {"plan_bad_server_bin_relative.yaml",
     "3:17: invalid value for \"server_bin\": \"build/bin\" (must be an absolute directory)"},
    {"plan_bad_server_bin_mixed.yaml",
     "4:5: variant \"installed\" has no \"server_bin\": in a plan of builds every variant names "
     "its build"},
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

}  // namespace
}  // namespace pgwaitprof::config
