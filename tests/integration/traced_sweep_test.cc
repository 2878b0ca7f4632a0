// A traced matrix and compare on the real scratch cluster of deploy/test.sh (root, like CI): two
// variants (synchronous_commit on and off) at 1 and 4 clients, one 2 s run each with
// --source trace. table.json carries each cell's wait durations (waits a second and p99 per wait
// event), the text table shows them, and compare of one variant's runs against the other's
// names the traced waits of each cell with their counts, time and p99 on both sides in JSON,
// text and Markdown.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/harness.h"

namespace pgwaitprof::testing {
namespace {

std::filesystem::path only_subdirectory(const std::filesystem::path& parent) {
  std::filesystem::path found;
  for (const auto& entry : std::filesystem::directory_iterator(parent)) found = entry.path();
  return found;
}

const nlohmann::json* find_wait(const nlohmann::json& list, const std::string& key,
                                const std::string& name, int clients = -1) {
  for (const auto& entry : list) {
    if (entry[key] == name && (clients < 0 || entry["clients"] == clients)) return &entry;
  }
  return nullptr;
}

// Every cell's ClientRead: the load's round trips, counted and timed by the kernel.
void expect_cell_durations(const nlohmann::json& table) {
  ASSERT_EQ(table["schema_version"], 4);
  ASSERT_EQ(table["cells"].size(), 4u) << table.dump();
  for (const auto& cell : table["cells"]) {
    ASSERT_TRUE(cell.contains("durations")) << cell.dump();
    EXPECT_EQ(cell["durations"]["traced_runs"], 1) << cell.dump();
    const auto* read = find_wait(cell["durations"]["events"], "name", "Client | ClientRead");
    ASSERT_NE(read, nullptr) << cell.dump();
    EXPECT_GT((*read)["waits_per_s"].get<double>(), 10) << read->dump();
    EXPECT_GT((*read)["p99_s"].get<double>(), 0) << read->dump();
    EXPECT_GE((*read)["p99_s"].get<double>(), (*read)["p50_s"].get<double>()) << read->dump();
    EXPECT_GE((*read)["longest_s"].get<double>(), (*read)["p99_s"].get<double>()) << read->dump();
    EXPECT_TRUE((*read)["p99_error_s"].is_null()) << read->dump();  // one run a cell
  }
}

TEST(TracedSweepTest, AMatrixCarriesWaitDurationsAndCompareNamesTheWaitsOfEachCell) {
  require_cluster();
  ASSERT_EQ(getuid(), 0u) << "the traced source's tests run as root, like CI";
  const auto dir = temp_dir("traced-sweep");
  write_text(dir / "plan.yaml",
             "name: traced\ntarget: \"" + test_conninfo() +
                 "\"\nscale: 2\nclients: [1, 4]\nduration: 2\nrepeats: 1\nsource: trace\n"
                 "variants:\n  - name: sync-on\n    settings: {synchronous_commit: \"on\"}\n"
                 "  - name: sync-off\n    settings: {synchronous_commit: \"off\"}\n");
  const auto result =
      engine::run_command({pgwaitprof_binary(), "matrix", (dir / "plan.yaml").string(),
                           "--data-dir", (dir / "data").string()});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto matrix = only_subdirectory(dir / "data" / "matrix");
  expect_cell_durations(nlohmann::json::parse(read_text(matrix / "table.json")));
  const auto text = read_text(matrix / "table.txt");
  EXPECT_NE(text.find("p99 of the blocking waits (traced):"), std::string::npos) << text;
  EXPECT_NE(text.find("blocking waits a second (traced):"), std::string::npos) << text;

  std::string sync_on, sync_off;
  for (const auto& entry : std::filesystem::directory_iterator(matrix / "runs")) {
    auto& side = entry.path().filename().string().starts_with("sync_on") ? sync_on : sync_off;
    side += (side.empty() ? "" : ",") + entry.path().string();
  }
  const auto compared = pgwaitprof_stdout({"compare", sync_on, sync_off, "--format", "json"});
  ASSERT_EQ(compared.exit_code, 0) << compared.output;
  const auto comparison = nlohmann::json::parse(compared.output);
  ASSERT_TRUE(comparison.contains("traced_waits")) << compared.output;
  for (const int clients : {1, 4}) {
    const auto* read =
        find_wait(comparison["traced_waits"], "wait", "Client | ClientRead", clients);
    ASSERT_NE(read, nullptr) << clients << " clients: " << compared.output;
    EXPECT_GT((*read)["waits_a"].get<uint64_t>(), 0u) << read->dump();
    EXPECT_GT((*read)["waits_b"].get<uint64_t>(), 0u) << read->dump();
    for (const char* figure : {"waits_per_s", "aas", "p99_s"}) {
      EXPECT_GT((*read)[figure]["a"].get<double>(), 0) << figure << ": " << read->dump();
      EXPECT_GT((*read)[figure]["b"].get<double>(), 0) << figure << ": " << read->dump();
    }
    // One 2 s run a side: no spread, so nothing is called a move.
    EXPECT_TRUE((*read)["p99_s"]["significant"].is_null()) << read->dump();
    EXPECT_TRUE((*read)["moved"].empty()) << read->dump();
  }
  const auto compared_text =
      engine::run_command({pgwaitprof_binary(), "compare", sync_on, sync_off});
  EXPECT_NE(compared_text.output.find("traced waits that moved"), std::string::npos)
      << compared_text.output;
  const auto compared_md =
      engine::run_command({pgwaitprof_binary(), "compare", sync_on, sync_off, "--format", "md"});
  EXPECT_NE(compared_md.output.find("### traced waits that moved"), std::string::npos)
      << compared_md.output;
}

}  // namespace
}  // namespace pgwaitprof::testing
