// Fixtures shared by the exporter tests: the report.json files of the fixture matrices under
// tests/fixtures/compare/{master,patched} (see its README), synthetic runs, and readers of what
// the HTML pages embed.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/run.h"

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
                              model::RunStatus status = model::RunStatus::kCompleted) {
  model::Run result;
  result.variant = variant;
  result.clients = clients;
  result.repeat = repeat;
  result.status = status;
  model::LoadgenSummary summary;
  summary.tps = tps;
  summary.latency_avg = base::Milliseconds(clients * 1000.0 / tps);
  result.loadgen = summary;
  return result;
}

// As loadgen_run, with a profile: `counts` of client backends per (wait_event_type,
// wait_event), all active, in `snapshots` snapshots; plus one idle session in every snapshot,
// which no share may count.
inline model::Run profile_run(
    const std::string& variant, int clients, int repeat,
    std::initializer_list<std::tuple<std::string, std::string, uint64_t>> counts,
    uint64_t snapshots = 1000, model::RunStatus status = model::RunStatus::kCompleted) {
  model::Run result = loadgen_run(variant, clients, 1000.0 * clients, repeat, status);
  for (const auto& [type, event, count] : counts) {
    result.profile.add({"client backend", "active", type, event}, count);
  }
  result.profile.add({"client backend", "idle", "Client", "ClientRead"}, snapshots);
  result.profile.add_snapshots(snapshots);
  return result;
}

// A file of the source tree, whole ("" when missing).
inline std::string source_file(const std::string& path) {
  std::ifstream file(std::string(PGWAITPROF_SOURCE_DIR) + "/" + path, std::ios::binary);
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

// The text of <script type="application/json" id="ID"> in an HTML page, up to the first
// "</script>" as a browser reads it ("" when absent).
inline std::string script_json(const std::string& html, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  const size_t start = html.find(open);
  if (start == std::string::npos) return "";
  const size_t end = html.find("</script>", start);
  return html.substr(start + open.size(), end - start - open.size());
}

// Every "http" in the page is one of `allowed` (a URL in a comment or a namespace, not a fetch).
inline std::vector<std::string> unexpected_urls(const std::string& html,
                                                const std::vector<std::string>& allowed) {
  std::vector<std::string> found;
  for (size_t at = html.find("http"); at != std::string::npos; at = html.find("http", at + 1)) {
    const bool known = std::any_of(allowed.begin(), allowed.end(), [&](const std::string& url) {
      return html.compare(at, url.size(), url) == 0;
    });
    if (!known) found.push_back(html.substr(at, 60));
  }
  return found;
}

}  // namespace pgwaitprof::exporters::test_fixtures
