// What the version matrix's tests share (version_matrix_test.cc, traced_matrix_test.cc): the
// cluster of the major each is parameterized by, which deploy/version-matrix.sh starts and
// exports as PGWAITPROF_TEST_PG<major>, and names that carry the major.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "tests/integration/harness.h"

namespace pgwaitprof::testing {

class MajorTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    const std::string variable = "PGWAITPROF_TEST_PG" + std::to_string(GetParam());
    conninfo_ = env(variable.c_str());
    if (conninfo_.empty()) {
      FAIL() << variable << " is not set: run the version matrix through "
             << "deploy/version-matrix.sh";
    }
  }
  std::string name(const std::string& what) const {
    return "pg" + std::to_string(GetParam()) + "-" + what;
  }
  std::string conninfo_;
};

}  // namespace pgwaitprof::testing
