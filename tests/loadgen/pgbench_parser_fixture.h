// What the pgbench output parser tests share (pgbench_parser_test.cc, pgbench_summary_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "loadgen/pgbench_parser.h"

namespace pgwaitprof::loadgen::test_support {

inline std::string read_fixture(const std::string& name) {
  const std::string path = std::string(PGWAITPROF_FIXTURES) + "/pgbench/" + name;
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file) << "missing fixture " << path;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

inline std::vector<model::LoadgenProgress> progress_of(const std::string& stderr_text) {
  std::vector<model::LoadgenProgress> points;
  for (const std::string& line : lines_of(stderr_text)) {
    if (auto point = loadgen::parse_progress_line(line)) points.push_back(*point);
  }
  return points;
}

// The message parse_summary threw, or "" when it returned.
inline std::string summary_error(std::string_view text) {
  try {
    loadgen::parse_summary(text);
  } catch (const loadgen::PgbenchParseError& error) {
    return error.what();
  }
  return "";
}

// --- progress lines, PG 15 (real output) ---

}  // namespace pgwaitprof::loadgen::test_support
