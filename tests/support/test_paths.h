// Where the tests find the checkout and the build: the source tree, its fixtures, the program
// under test and the JSON outputs' collecting directory. Constants of one generated file
// (tests/CMakeLists.txt), not definitions on every test file's command line: a clone at another
// path then recompiles that one file, and ccache serves every test file from an earlier clone.
// Every test file sees this header (forced with -include).
#pragma once

namespace pgwaitprof::test_paths {
extern const char* const kSourceDir;
extern const char* const kFixtures;
extern const char* const kBinary;
extern const char* const kJsonOutputs;
}  // namespace pgwaitprof::test_paths

#define PGWAITPROF_SOURCE_DIR ::pgwaitprof::test_paths::kSourceDir
#define PGWAITPROF_FIXTURES ::pgwaitprof::test_paths::kFixtures
#define PGWAITPROF_BINARY ::pgwaitprof::test_paths::kBinary
#define PGWAITPROF_JSON_OUTPUTS ::pgwaitprof::test_paths::kJsonOutputs
