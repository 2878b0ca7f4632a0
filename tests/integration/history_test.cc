// Run history and the shared results database on the real test cluster: 30 runs (a few real,
// the rest copies of a real report with their labels, workloads, settings, hosts and dates
// changed) listed and filtered; a deliberate regression (synchronous_commit on after runs with
// it off) found by `trend` as a change point, explained, and flagged by its old rule; runs uploaded
// to a second database matching report.json field by field; a run made while the results database
// does not exist uploaded once it does.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/run.h"
#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A short real run on the test cluster; its run directory.
fs::path real_run(const fs::path& data, const std::string& label,
                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"run",     test_conninfo(), "--no-daemon", "--hz",       "100",
                                   "--label", label,           "--data-dir",  data.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--", "-c", "1", "-j", "1", "-R", kModestRate, "-T", "2"});
  const auto before =
      fs::exists(data / "runs")
          ? std::distance(fs::directory_iterator(data / "runs"), fs::directory_iterator())
          : 0;
  auto result = pgwaitprof(args);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  fs::path newest;
  for (const auto& entry : fs::directory_iterator(data / "runs")) {
    if (newest.empty() || entry.path().filename() > newest.filename()) newest = entry.path();
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(data / "runs"), fs::directory_iterator()),
            before + 1);
  return newest;
}

json runs_json(const fs::path& data, std::vector<std::string> filters) {
  std::vector<std::string> args = {"runs", "--data-dir", data.string(), "--format", "json"};
  args.insert(args.end(), filters.begin(), filters.end());
  auto result = pgwaitprof_stdout(args);
  EXPECT_EQ(result.exit_code, 0) << pgwaitprof(args).output;
  try {
    return json::parse(result.output);
  } catch (const std::exception&) {
    ADD_FAILURE() << result.output;
    return json::array();
  }
}

struct Synthetic {
  std::string id, label, workload, started, status, host;
  bool async_commit = false;
};

// 28 copies of `real` with differing labels, workloads, settings, hosts, dates and statuses;
// four of them in a matrix directory.
std::vector<Synthetic> write_synthetic(const fs::path& data, const fs::path& real) {
  const auto report = json::parse(read_text(real / "report.json"));
  std::vector<Synthetic> made;
  for (int i = 0; i < 28; ++i) {
    Synthetic s;
    const auto day = fmt::format("{:02d}", i + 1);
    s.label = (i % 3 == 0 ? "nightly-" : i % 3 == 1 ? "adhoc-" : "ci-") + std::to_string(i);
    s.id = "202511" + day + "-100000-" + fmt::format("{:04x}", i) + "-" + s.label;
    s.workload = i % 2 ? "tpcb" : "select_only";
    s.started = "2025-11-" + day + "T10:00:00.000Z";
    s.status = i == 5 ? "interrupted" : i == 7 ? "failed" : "completed";
    s.host = i % 2 ? "bench01" : "bench02";
    s.async_commit = i % 4 == 0;
    auto copy = report;
    copy["id"] = s.id;
    copy["label"] = s.label;
    copy["workload"] = s.workload;
    copy["started_at"] = s.started;
    copy["status"] = s.status;
    copy["environment"]["hostname"] = s.host;
    auto& settings = copy["environment"]["settings"];
    if (s.async_commit) {
      settings.push_back({{"name", "synchronous_commit"},
                          {"value", "off"},
                          {"unit", ""},
                          {"source", "configuration file"}});
    }
    const auto parent = i < 4 ? data / "matrix" / "20251101-sweep" / "runs" : data / "runs";
    fs::create_directories(parent / s.id);
    write_text(parent / s.id / "report.json", copy.dump());
    made.push_back(s);
  }
  return made;
}

template <typename Keep>
size_t count_of(const std::vector<Synthetic>& runs, Keep keep) {
  return static_cast<size_t>(std::count_if(runs.begin(), runs.end(), keep));
}

class HistoryTest : public ::testing::Test {
 protected:
  void SetUp() override { require_cluster(); }
};

// The quickstart's way (deploy/quickstart.sh): runs with --brief print one line each (pgbench's
// own tps and where the report is, none of pgbench's output), and `runs --format scaling` sets
// them side by side by client count.
TEST_F(HistoryTest, BriefRunsAndTheirScalingTable) {
  const auto data = temp_dir("history-brief");
  for (const char* clients : {"2", "1"}) {
    auto run = pgwaitprof({"run",
                           test_conninfo(),
                           "--no-daemon",
                           "--hz",
                           "50",
                           "--brief",
                           "--label",
                           fmt::format("brief-c{}", clients),
                           "--tag",
                           "set=brief",
                           "--data-dir",
                           data.string(),
                           "--",
                           "-c",
                           clients,
                           "-j",
                           "1",
                           "-R",
                           kModestRate,
                           "-T",
                           "2"});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(run.output.find("progress:"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("wait events:"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find(fmt::format("brief-c{}: ", clients)), std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find(" tps, completed; report: "), std::string::npos) << run.output;
  }
  auto table = pgwaitprof(
      {"runs", "--data-dir", data.string(), "--tag", "set=brief", "--format", "scaling"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  // The table's header begins a line: stderr's lines come in the same output, and another test's
  // scratch directory swept by this invocation is one (a warning before the table).
  const auto header = table.output.rfind("clients ", 0) == 0 ? 0 : table.output.find("\nclients ");
  ASSERT_NE(header, std::string::npos) << table.output;
  const auto one = table.output.find("brief-c1\n");
  const auto two = table.output.find("brief-c2\n");
  ASSERT_NE(one, std::string::npos) << table.output;
  ASSERT_NE(two, std::string::npos) << table.output;
  EXPECT_LT(one, two) << table.output;
  EXPECT_NE(table.output.find("\nscaling: "), std::string::npos) << table.output;
}

TEST_F(HistoryTest, ThirtyRunsAreListedAndFiltered) {
  const auto data = temp_dir("history-list");
  const auto first = real_run(data, "real-1");
  real_run(data, "real-2");
  const auto synthetic = write_synthetic(data, first);

  const auto all = runs_json(data, {});
  ASSERT_EQ(all.size(), 30U);
  EXPECT_EQ(all[0]["label"], "real-2");  // newest first
  EXPECT_EQ(all[1]["label"], "real-1");
  EXPECT_EQ(all[29]["label"], "nightly-0");
  EXPECT_GT(all[0]["tps"].get<double>(), 0);
  EXPECT_FALSE(all[0]["top_wait"].get<std::string>().empty());
  EXPECT_EQ(all[29]["matrix"], "20251101-sweep");

  const auto check = [&](std::vector<std::string> filters, size_t expected) {
    EXPECT_EQ(runs_json(data, filters).size(), expected)
        << fmt::format("{}", fmt::join(filters, " "));
  };
  check({"--label", "nightly-*"},
        count_of(synthetic, [](const auto& s) { return s.label.rfind("nightly-", 0) == 0; }));
  check({"--workload", "select_only"},
        count_of(synthetic, [](const auto& s) { return s.workload == "select_only"; }));
  check({"--workload", "tpcb"},
        2 + count_of(synthetic, [](const auto& s) { return s.workload == "tpcb"; }));
  check({"--since", "2025-11-10", "--until", "2025-11-20"}, 11);
  check({"--since", "1d"}, 2);
  check({"--status", "interrupted"}, 1);
  check({"--status", "failed"}, 1);
  check({"--setting", "synchronous_commit=off"},
        count_of(synthetic, [](const auto& s) { return s.async_commit; }));
  check({"--host", "bench02"},
        count_of(synthetic, [](const auto& s) { return s.host == "bench02"; }));
  check({"--host", "bench02", "--label", "adhoc-*", "--workload", "tpcb"},
        count_of(synthetic, [](const auto& s) {
          return s.host == "bench02" && s.label.rfind("adhoc-", 0) == 0 && s.workload == "tpcb";
        }));

  auto text = pgwaitprof({"runs", "--data-dir", data.string()});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("interrupted (!)"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("30 runs, 2 interrupted or failed"), std::string::npos);
  auto md = pgwaitprof({"runs", "--data-dir", data.string(), "--format", "md", "--label", "ci-*"});
  EXPECT_NE(md.output.find("| id | label |"), std::string::npos) << md.output;
  auto csv = pgwaitprof({"runs", "--data-dir", data.string(), "--format", "csv"});
  EXPECT_EQ(std::count(csv.output.begin(), csv.output.end(), '\n'), 31);

  auto shown = pgwaitprof({"runs", "--data-dir", data.string(), "show", "real-1"});
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_EQ(shown.output, read_text(first / "report.txt"));
  auto by_prefix = pgwaitprof({"runs", "--data-dir", data.string(), "show", "20251102"});
  EXPECT_NE(by_prefix.output.find("adhoc-1"), std::string::npos) << by_prefix.output;
  auto ambiguous = pgwaitprof({"runs", "--data-dir", data.string(), "show", "202511"});
  EXPECT_EQ(ambiguous.exit_code, 1);
  EXPECT_NE(ambiguous.output.find("is ambiguous"), std::string::npos) << ambiguous.output;

  auto bad = pgwaitprof({"runs", "--data-dir", data.string(), "--since", "yesterday"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.output, "pgwaitprof: invalid value for --since: \"yesterday\"\n");

  auto compared = pgwaitprof({"compare", "--data-dir", data.string(), "real-1", "label=real-2"});
  EXPECT_EQ(compared.exit_code, 0) << compared.output;
  auto unknown = pgwaitprof({"compare", "--data-dir", data.string(), "real-1", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("no run \"nope\" in the history"), std::string::npos);

  fs::remove_all(data / "runs" / synthetic[10].id);  // deleting a run removes it from the list
  EXPECT_EQ(runs_json(data, {}).size(), 29U);

  auto refused = pgwaitprof({"runs", "--data-dir", data.string(), "prune", "--older-than", "30d"});
  EXPECT_EQ(refused.exit_code, 2);  // no terminal to ask on, and no --yes
  EXPECT_EQ(runs_json(data, {}).size(), 29U);
  auto pruned =
      pgwaitprof({"runs", "--data-dir", data.string(), "prune", "--older-than", "30d", "--yes"});
  EXPECT_EQ(pruned.exit_code, 0) << pruned.output;
  EXPECT_NE(pruned.output.find("removed 27 runs"), std::string::npos) << pruned.output;
  EXPECT_EQ(runs_json(data, {}).size(), 2U);
}

// A real history with a real step: 7 runs with synchronous_commit off, then 5 with it on.
// With it on, every commit waits for its WAL flush, and a flush waits commit_delay first
// (commit_siblings 0: even with one client); with it off, commits never flush and the delay
// costs nothing. So the step stands out of the noise of a busy test machine (a run with it on
// stays under 1000 / 20 ms = 50 tps). `trend` names the first run with it on as the change
// point of tps with its interval, the wait that moved and the setting that changed; the old
// rule (--rule mad) flags that run too.
TEST_F(HistoryTest, TrendNamesTheRunWhereSynchronousCommitWentOn) {
  const auto data = temp_dir("history-trend");
  ASSERT_EQ(psql("ALTER SYSTEM SET commit_delay = 20000").exit_code, 0);
  ASSERT_EQ(psql("ALTER SYSTEM SET commit_siblings = 0").exit_code, 0);
  ASSERT_EQ(psql("ALTER SYSTEM SET synchronous_commit = off").exit_code, 0);
  ASSERT_EQ(psql("SELECT pg_reload_conf()").exit_code, 0);
  for (int i = 1; i <= 7; ++i) real_run(data, "sc-off-" + std::to_string(i));
  ASSERT_EQ(psql("ALTER SYSTEM SET synchronous_commit = on").exit_code, 0);
  ASSERT_EQ(psql("SELECT pg_reload_conf()").exit_code, 0);
  for (int i = 1; i <= 5; ++i) real_run(data, "sc-on-" + std::to_string(i));
  psql("ALTER SYSTEM RESET synchronous_commit");
  psql("ALTER SYSTEM RESET commit_delay");
  psql("ALTER SYSTEM RESET commit_siblings");
  psql("SELECT pg_reload_conf()");

  auto result = pgwaitprof_stdout({"trend", "--data-dir", data.string(), "--format", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto changes = json::parse(result.output);
  ASSERT_EQ(changes["groups"].size(), 1U);
  const auto& group = changes["groups"][0];
  // A run that completed without a transaction (tps 0: on this shared machine one run of 2 s
  // once did, with the server starved) is kept out and named; the others are the series.
  ASSERT_EQ(group["runs"].size() + group["skipped"].size(), 12U) << changes.dump(2);
  EXPECT_LE(group["skipped"].size(), 1U) << changes.dump(2);
  int first_on = 0;  // 1-based, as the change points count runs
  for (size_t run = 0; run < group["runs"].size() && first_on == 0; ++run) {
    if (group["runs"][run]["label"] == "sc-on-1") first_on = static_cast<int>(run) + 1;
  }
  ASSERT_GT(first_on, 0) << changes.dump(2);
  json tps;
  for (const auto& change : group["change_points"]) {
    if (change["metric"] == "tps") {
      EXPECT_TRUE(tps.is_null()) << "a second tps change point: " << changes.dump(2);
      tps = change;
    }
  }
  ASSERT_FALSE(tps.is_null()) << changes.dump(2);
  // tps names the first run with it on, or on a loaded machine (builds beside the test) a slow
  // run just before it: 7 runs on a side are few against such noise (one run with it off took
  // 158 tps against 2,200 once). Some series (tps, or a wait that moved with the setting) has
  // its change point at the first run with it on, and names the setting that changed there.
  EXPECT_GE(tps["run"].get<int>(), first_on - 2) << changes.dump(2);
  EXPECT_LE(tps["run"].get<int>(), first_on) << changes.dump(2);
  EXPECT_LT(tps["mean_after"].get<double>(), 0.6 * tps["mean_before"].get<double>());
  EXPECT_LT(tps["ci_high_percent"].get<double>(), -40) << tps.dump(2);
  EXPECT_LT(tps["ci_low_percent"].get<double>(), tps["ci_high_percent"].get<double>());
  ASSERT_FALSE(tps["waits"].empty()) << tps.dump(2);
  EXPECT_EQ(tps["waits"][0]["significant"], true) << tps.dump(2);
  bool setting_named = false;
  for (const auto& change : group["change_points"]) {
    if (change["run"] != first_on) continue;
    for (const auto& changed : change["changed"]) {
      setting_named |= changed["name"] == "setting synchronous_commit" && changed["after"] == "on";
    }
  }
  EXPECT_TRUE(setting_named) << changes.dump(2);

  auto text = pgwaitprof({"trend", "--data-dir", data.string()});
  EXPECT_NE(text.output.find("method: E-Divisive with means"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("setting synchronous_commit off -> on"), std::string::npos)
      << text.output;
  auto html = pgwaitprof({"trend", "--data-dir", data.string(), "--format", "html"});
  EXPECT_NE(html.output.find("new uPlot"), std::string::npos);
  EXPECT_NE(html.output.find("segment mean"), std::string::npos);

  // The two periods, as compare does (issue 49 item 5): the runs with it off against those on.
  const auto started = [&](size_t run) {
    return group["runs"][run]["started_at"].get<std::string>().substr(0, 19);
  };
  const auto last = group["runs"].size() - 1;
  const auto on = static_cast<size_t>(first_on - 1);
  auto periods = pgwaitprof_stdout({"trend", "--data-dir", data.string(), "--between",
                                    started(0) + ".." + started(on - 1), "--and",
                                    started(on) + ".." + started(last), "--format", "json"});
  ASSERT_EQ(periods.exit_code, 0) << periods.output;
  const auto compared = json::parse(periods.output);
  ASSERT_EQ(compared["cells"].size(), 1U) << compared.dump(2);
  EXPECT_EQ(compared["cells"][0]["tps"]["a"].size(), on) << compared.dump(2);
  EXPECT_EQ(compared["cells"][0]["tps"]["b"].size(), 5U);
  EXPECT_EQ(compared["cells"][0]["tps"]["verdict"], "slower") << compared.dump(2);
  auto refused = pgwaitprof({"trend", "--data-dir", data.string(), "--between", started(0), "--and",
                             started(on) + ".." + started(last)});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.output, "pgwaitprof: invalid value for --between: \"" + started(0) +
                                "\" (a period is FROM..TO)\n");

  auto mad = pgwaitprof_stdout(
      {"trend", "--data-dir", data.string(), "--rule", "mad", "--format", "json"});
  ASSERT_EQ(mad.exit_code, 0) << mad.output;
  const auto trend = json::parse(mad.output);
  ASSERT_EQ(trend["points"].size(), 12U);
  EXPECT_EQ(trend["points"][7]["run"]["label"], "sc-on-1");
  EXPECT_NE(trend["rule"].get<std::string>().find("1.4826 x MAD"), std::string::npos);
  EXPECT_EQ(runs_json(data, {"--setting", "synchronous_commit=off"}).size(), 7U);
  auto grouped = pgwaitprof_stdout({"trend", "--data-dir", data.string(), "--group-by",
                                    "setting:synchronous_commit", "--format", "json"});
  ASSERT_EQ(grouped.exit_code, 0) << grouped.output;
  for (const auto& split : json::parse(grouped.output)["groups"]) {
    EXPECT_TRUE(split["change_points"].empty()) << split.dump(2);  // each group one level
    EXPECT_EQ(split["more_runs_needed"].get<size_t>(), 11 - split["runs"].size());
  }
}

}  // namespace
}  // namespace pgwaitprof::testing
