// The collector of the suite's JSON outputs (tests/support/json_output_collector.cc): a
// report.json written the way pgwaitprof writes it reaches the collecting directory, so the
// schema check after the suite (json_schema_outputs) sees it. Without it that check would pass
// on nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "store/atomic_file.h"

namespace pgwaitprof::store {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(JsonOutputCollectorTest, AReportWrittenAtomicallyIsCollected) {
  const char* preload = std::getenv("LD_PRELOAD");
  ASSERT_TRUE(preload && std::string(preload).find("json_output_collector") != std::string::npos)
      << "run through ctest, which preloads tests/json_output_collector.so";
  const fs::path dir =
      fs::temp_directory_path() / ("pgwaitprof-collector-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string text = "{\"written_by\": \"JsonOutputCollectorTest\"}\n";
  ASSERT_FALSE(write_file_atomically(dir / "report.json", text));

  // The origins file names the copy of this very file; the copy holds what was written.
  std::istringstream origins(read_all(fs::path(PGWAITPROF_JSON_OUTPUTS) / "origins.tsv"));
  std::string line;
  std::string copy;
  while (std::getline(origins, line)) {
    const auto tab = line.find('\t');
    if (tab != std::string::npos && line.substr(tab + 1) == (dir / "report.json").string()) {
      copy = line.substr(0, tab);
    }
  }
  ASSERT_FALSE(copy.empty()) << "no line for " << (dir / "report.json") << " in origins.tsv";
  const fs::path copied = fs::path(PGWAITPROF_JSON_OUTPUTS) / copy;
  EXPECT_EQ(read_all(copied), text);
  // Not a report: the schema check must not see it.
  fs::remove(copied);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pgwaitprof::store
