// The command line run in-process, as a user runs it: its exit code and what it wrote to stdout
// and stderr (gtest's capture).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "daemon/commands/cli.h"

namespace pgwaitprof::test_support {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

// `args` without the program's name.
inline CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "pgwaitprof");
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int code = commands::main_cli(static_cast<int>(argv.size()), argv.data());
  auto out = testing::internal::GetCapturedStdout();
  return {code, std::move(out), testing::internal::GetCapturedStderr()};
}

}  // namespace pgwaitprof::test_support
