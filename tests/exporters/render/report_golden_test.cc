// The files of a run directory for fixed inputs, byte for byte: tests/fixtures/golden/FIXTURE/
// holds what each renderer wrote for tests/fixtures/FIXTURE.json. A moved or refactored renderer
// must leave them identical; a change that is meant shows here as a diff: regenerate with
// PGWAITPROF_UPDATE_GOLDEN=1 (the test then writes the files and fails, to be run again) and
// review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "exporters/render/report_render.h"
#include "model/run.h"

namespace pgwaitprof::exporters {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

class ReportGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(ReportGolden, EveryFileIsByteIdentical) {
  const fs::path fixtures = PGWAITPROF_FIXTURES;
  const std::string name = GetParam();
  std::ifstream input(fixtures / (name + ".json"));
  ASSERT_TRUE(input) << "missing fixture " << name;
  const model::Run run = model::run_from_json(nlohmann::json::parse(input));
  const std::pair<const char*, std::string> files[] = {
      {"report.txt", render_text(run)},         {"report.md", render_markdown(run)},
      {"profile.csv", render_profile_csv(run)}, {"timeline.csv", render_timeline_csv(run)},
      {"waits.folded", render_folded(run)},     {"report.html", render_html(run)},
      {"report.json", render_json(run)},
  };
  const fs::path golden = fixtures / "golden" / name;
  const bool update = std::getenv("PGWAITPROF_UPDATE_GOLDEN") != nullptr;
  for (const auto& [file, text] : files) {
    if (update) {
      fs::create_directories(golden);
      std::ofstream(golden / file, std::ios::binary) << text;
      ADD_FAILURE() << "wrote " << (golden / file) << ": review the diff, then run again";
      continue;
    }
    ASSERT_TRUE(fs::exists(golden / file)) << golden / file << " is missing";
    // EXPECT_TRUE, not EXPECT_EQ: a 300 kB page printed twice helps nobody; `git diff` after a
    // run with PGWAITPROF_UPDATE_GOLDEN=1 shows what changed.
    EXPECT_TRUE(text == read_file(golden / file))
        << file << " of " << name << " differs from " << golden / file;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReportGolden,
                         ::testing::Values("report_v1", "report_v3_latency_kernel", "report_failed",
                                           "report_v7_cpu"));

}  // namespace
}  // namespace pgwaitprof::exporters
