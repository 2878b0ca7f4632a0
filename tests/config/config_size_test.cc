// Configuration files and plans are read up to a limit before they are parsed: a file beyond it
// (or one that never ends) is refused with one line at once, instead of taking seconds and
// hundreds of megabytes of memory to parse.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "config/daemon_config.h"
#include "config/matrix_plan.h"
#include "config/yaml_reader.h"
#include "tests/config/config_fixture.h"

namespace pgwaitprof::config {
namespace {

using namespace test_support;

// A valid configuration of `bytes` bytes: one target and as many labels as fit, padded with a
// comment to the exact size.
std::string config_of_size(std::size_t bytes) {
  std::string text = "targets:\n  - name: db1\n    labels:\n";
  for (int index = 0; text.size() + 40 < bytes; ++index) {
    text += "      l" + std::to_string(index) + ": v\n";
  }
  text += "#";
  text.append(bytes - text.size() - 1, 'x');
  text += "\n";
  return text;
}

TEST(ConfigSize, AFileAtTheLimitIsReadAndOneByteMoreIsRefused) {
  const fs::path dir =
      fs::temp_directory_path() / ("pgwaitprof-config-size-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path at_limit = dir / "at_limit.yaml";
  const fs::path beyond = dir / "beyond.yaml";
  std::ofstream(at_limit) << config_of_size(yaml::kMaxFileBytes);
  std::ofstream(beyond) << config_of_size(yaml::kMaxFileBytes + 1);
  ASSERT_EQ(fs::file_size(at_limit), yaml::kMaxFileBytes);

  const auto started = std::chrono::steady_clock::now();
  const auto config = load_config(at_limit);
  // The largest file allowed, all labels, is parsed well within the daemon's stop time.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_GT(config.targets.front().labels.size(), 5000U);

  EXPECT_EQ(error_of([&] { load_config(beyond); }),
            "configuration file \"" + beyond.string() + "\" is too large (more than 256 KiB)");
  EXPECT_EQ(error_of([&] { load_matrix_plan(beyond); }),
            "matrix plan file \"" + beyond.string() + "\" is too large (more than 256 KiB)");
  fs::remove_all(dir);
}

// A device that never ends is not a file (issue 40: refused before a byte is read), and a regular
// file beyond the limit is refused after one byte too many.
TEST(ConfigSize, AFileThatNeverEndsIsRefused) {
  EXPECT_EQ(error_of([] { load_config("/dev/zero"); }),
            "configuration file \"/dev/zero\" is not a regular file (it is a character device)");
}

}  // namespace
}  // namespace pgwaitprof::config
