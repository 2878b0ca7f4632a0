// The scratch cluster a test runs against, when deploy/test.sh's ctest gives each test that needs
// one a cluster of its own: the tests that use a cluster ask for one (the RESOURCE_GROUPS
// property "cluster:1", tests/CMakeLists.txt), ctest hands out the clusters of the resource spec
// file that deploy/test.sh writes, and names the one it gave in CTEST_RESOURCE_GROUP_0_CLUSTER
// ("id:2,slots:1"). Before main, this points the PG* variables (and those of
// tests/integration/harness.h) at that cluster, from PGWAITPROF_TEST_CLUSTERS/<id>.env (one
// NAME=value a line); what the test starts inherits them. Without those variables (ctest run by
// hand, deploy/test.sh ARGS), the environment is left as it is.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace pgwaitprof::test_paths {
namespace {

[[noreturn]] void refuse(const std::string& message) {
  std::fprintf(stderr, "tests: %s\n", message.c_str());
  std::exit(2);
}

bool point_at_the_given_cluster() {
  const char* given = std::getenv("CTEST_RESOURCE_GROUP_0_CLUSTER");
  const char* clusters = std::getenv("PGWAITPROF_TEST_CLUSTERS");
  if (given == nullptr || clusters == nullptr) return false;
  const std::string slot(given);
  if (!slot.starts_with("id:"))
    refuse("unexpected CTEST_RESOURCE_GROUP_0_CLUSTER \"" + slot + "\"");
  const std::string id = slot.substr(3, slot.find(',') - 3);
  const std::string path = std::string(clusters) + "/" + id + ".env";
  std::ifstream file(path);
  if (!file) refuse("could not open the cluster's variables \"" + path + "\"");
  for (std::string line; std::getline(file, line);) {
    const auto equals = line.find('=');
    if (equals == std::string::npos || equals == 0) refuse("unexpected line in \"" + path + "\"");
    ::setenv(line.substr(0, equals).c_str(), line.substr(equals + 1).c_str(), 1);
  }
  return true;
}

// Before main: gtest, the tests and everything they start see the cluster's variables.
[[maybe_unused]] const bool kPointed = point_at_the_given_cluster();

}  // namespace
}  // namespace pgwaitprof::test_paths
