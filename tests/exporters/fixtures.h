// Fixtures shared by the exporter tests: the report.json files of the fixture matrices under
// tests/fixtures/compare/{master,patched} (see its README), and synthetic runs.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "daemon/model/run.h"

namespace pgwaitprof::exporters::test_fixtures {

// tests/fixtures/compare: one matrix directory per side.
inline std::filesystem::path compare_dir() {
  return std::filesystem::path(PGWAITPROF_FIXTURES) / "compare";
}

// Every report.json under `dir`, in path order (run ids start with their start time).
inline std::vector<model::Run> load_runs(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().filename() == "report.json") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<model::Run> runs;
  for (const auto& path : paths) {
    std::ifstream file(path);
    runs.push_back(model::run_from_json(nlohmann::json::parse(file)));
  }
  return runs;
}

// A run with only what the comparison and the matrix table read: variant, clients, repeat,
// status and a load generator summary with `tps` and the latency pgbench would derive from it.
inline model::Run loadgen_run(const std::string& variant, int clients, double tps, int repeat = 1,
                              std::string status = "completed") {
  model::Run result;
  result.variant = variant;
  result.clients = clients;
  result.repeat = repeat;
  result.status = std::move(status);
  model::LoadgenSummary summary;
  summary.tps = tps;
  summary.latency_avg_ms = clients * 1000.0 / tps;
  result.loadgen = summary;
  return result;
}

}  // namespace pgwaitprof::exporters::test_fixtures
