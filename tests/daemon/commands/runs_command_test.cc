// `runs show` and `runs prune` take the options of `runs` (--data-dir above all) after the
// subcommand as well as before it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/cli_capture.h"

namespace pgwaitprof::commands {
namespace {

namespace fs = std::filesystem;

using test_support::run_cli;

TEST(RunsCommand, DataDirIsTakenAfterTheSubcommandToo) {
  const auto data = fs::temp_directory_path() / ("pgwaitprof-runs-" + std::to_string(::getpid()));
  fs::create_directories(data / "runs");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"runs", "--data-dir", data.string(), "show", "nosuch"},
           {"runs", "show", "nosuch", "--data-dir", data.string()},
           {"runs", "show", "--data-dir", data.string(), "nosuch"}}) {
    const auto shown = run_cli(args);
    EXPECT_EQ(shown.code, 1) << args.back() << shown.err;
    EXPECT_EQ(shown.err, "pgwaitprof: no run \"nosuch\" in the history\n");
  }
  const auto pruned =
      run_cli({"runs", "prune", "--older-than", "90d", "--data-dir", data.string()});
  EXPECT_EQ(pruned.code, 0) << pruned.err;
  EXPECT_EQ(pruned.out, "no runs older than 90d\n");
  fs::remove_all(data);
}

}  // namespace
}  // namespace pgwaitprof::commands
