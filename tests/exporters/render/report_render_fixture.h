// Fixtures and readers shared by the report renderer tests (report_render_test.cc: text and
// Markdown; report_data_test.cc: CSV, folded stacks, report.json; report_html_test.cc): the
// fixture report.json, its raw counts recomputed here (not through the model), and parsers of
// the rendered text and CSV.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "exporters/render/html_assets.h"
#include "exporters/render/report_common.h"
#include "exporters/render/report_render.h"
#include "exporters/render/report_sections.h"
#include "exporters/render/text_format.h"
#include "model/run.h"
#include "tests/exporters/render/fixtures.h"

namespace pgwaitprof::exporters::render_test {

using report_detail::error_text;

using nlohmann::json;

inline json load_json(const std::string& name) {
  std::ifstream file(std::string(PGWAITPROF_FIXTURES) + "/" + name);
  EXPECT_TRUE(file) << "missing fixture " << name;
  return json::parse(file);
}

inline model::Run load_run(const std::string& name) {
  return model::run_from_json(load_json(name));
}

// The fixture's own view of idleness and naming, written out again rather than borrowed.
inline bool raw_is_idle(const json& entry) {
  const auto state = entry.at("state").get<std::string>();
  return state == "idle" ||
         (state == "background" && (entry.at("wait_event_type").get<std::string>() == "Activity" ||
                                    entry.at("wait_event_type").get<std::string>() == "Extension" ||
                                    entry.at("wait_event_type").get<std::string>() == "Timeout"));
}

inline std::string raw_name(const json& entry) {
  const auto type = entry.at("wait_event_type").get<std::string>();
  return type == "CPU" ? "CPU" : type + " | " + entry.at("wait_event").get<std::string>();
}

struct RawProfile {
  std::map<std::string, uint64_t> by_name;      // non-idle, merged over backend types and states
  std::map<std::string, uint64_t> by_type;      // non-idle
  std::map<std::string, uint64_t> all_by_name;  // idle included
  uint64_t total = 0;                           // non-idle
  uint64_t idle_total = 0;
  uint64_t full_keys = 0;  // non-idle (backend_type, state, type, event) entries
  uint64_t snapshots = 0;
};

inline RawProfile raw_profile(const json& report) {
  RawProfile raw;
  raw.snapshots = report.at("profile").at("snapshots").get<uint64_t>();
  for (const auto& entry : report.at("profile").at("entries")) {
    const auto count = entry.at("count").get<uint64_t>();
    raw.all_by_name[raw_name(entry)] += count;
    if (raw_is_idle(entry)) {
      raw.idle_total += count;
      continue;
    }
    raw.by_name[raw_name(entry)] += count;
    raw.by_type[entry.at("wait_event_type").get<std::string>()] += count;
    raw.total += count;
    ++raw.full_keys;
  }
  return raw;
}

// One row of the hackers' table without its error column: count, name, share, AAS. The error
// (batch means over the timeline) is checked apart, in ErrorsComeFromBatchMeans.
inline std::string expected_row(uint64_t count, const std::string& name, uint64_t total,
                                uint64_t snapshots) {
  const double p = static_cast<double>(count) / static_cast<double>(total);
  const double aas = static_cast<double>(count) / static_cast<double>(snapshots);
  return fmt::format("  {:>9}  {:<32}  {:>6}  {:>7.2f}  ", count, name,
                     fmt::format("{:.1f}%", 100 * p), aas);
}

inline std::string expected_total(uint64_t total, uint64_t snapshots) {
  return fmt::format("  {:>9}  {:<32}  {:>6}  {:>7.2f}", total, "total", "100.0%",
                     static_cast<double>(total) / static_cast<double>(snapshots));
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

inline bool has_line(const std::string& text, const std::string& line) {
  const auto lines = split_lines(text);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// A profile row: `prefix` (expected_row) then its error column, a number or "-".
inline bool has_row(const std::string& text, const std::string& prefix) {
  static const std::regex error_column(R"( *(\d+\.\d+|-))");
  for (const auto& line : split_lines(text)) {
    if (line.starts_with(prefix) && std::regex_match(line.substr(prefix.size()), error_column)) {
      return true;
    }
  }
  return false;
}

// The rows of the first profile table: from the line after its header to the dashed rule.
struct TableRow {
  uint64_t count;
  std::string label;
};
inline std::vector<TableRow> table_rows(const std::string& text) {
  const auto lines = split_lines(text);
  std::vector<TableRow> rows;
  bool inside = false;
  static const std::regex row_pattern(R"(^ +(\d+)  (.+?) +\d+\.\d%.*$)");
  for (const auto& line : lines) {
    if (!inside) {
      inside = line.starts_with("      count  ") && line.find("share") != std::string::npos;
      continue;
    }
    if (line.starts_with("  ---------")) break;
    std::smatch match;
    EXPECT_TRUE(std::regex_match(line, match, row_pattern)) << line;
    if (!match.empty()) rows.push_back({std::stoull(match[1].str()), match[2].str()});
  }
  return rows;
}

// RFC 4180, enough for these files: quoted fields with doubled quotes and embedded commas.
inline std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  bool field_started = false;
  for (size_t index = 0; index < text.size(); ++index) {
    const char c = text[index];
    if (quoted) {
      if (c == '"' && index + 1 < text.size() && text[index + 1] == '"') {
        field += '"';
        ++index;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      field_started = false;
      rows.emplace_back();
    } else {
      field += c;
      field_started = true;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

class RenderFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    report_ = load_json("report_v1.json");
    run_ = model::run_from_json(report_);
    raw_ = raw_profile(report_);
  }
  json report_;
  model::Run run_;
  RawProfile raw_;
};

}  // namespace pgwaitprof::exporters::render_test
