// What the matrix table tests share (matrix_table_test.cc, matrix_composition_test.cc).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>

#include "exporters/render/matrix_table.h"
#include "exporters/render/text_format.h"
#include "model/run_estimates.h"
#include "tests/exporters/render/fixtures.h"

namespace pgwaitprof::exporters::test_support {

using test_fixtures::compare_dir;
using test_fixtures::load_runs;
using test_fixtures::loadgen_run;
using text_format::display_width;
using text_format::wait_class_colour;

// As a matrix directory would list them: variants interleaved within each repeat, here with
// the patched runs listed first to show that order comes from the repeat, then the listing.
inline const std::vector<model::Run>& fixture_runs() {
  static const std::vector<model::Run> runs = [] {
    auto all = load_runs(compare_dir() / "patched");
    auto master = load_runs(compare_dir() / "master");
    all.insert(all.end(), master.begin(), master.end());
    return all;
  }();
  return runs;
}

inline const MatrixTable& fixture_table() {
  static const MatrixTable table = build_matrix_table(fixture_runs(), "clog-buffers");
  return table;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

}  // namespace pgwaitprof::exporters::test_support
