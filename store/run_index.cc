// The data directory's run index.
#include "store/run_index.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "base/json_text.h"
#include "store/atomic_file.h"
#include "store/run_directory.h"

namespace pgwaitprof::store {
namespace {

// The index is rebuilt from the reports when its summaries are of another version.
constexpr int kIndexVersion = kSummaryVersion;

void add_children(const std::filesystem::path& parent, std::vector<std::filesystem::path>& dirs) {
  std::error_code error;
  for (std::filesystem::directory_iterator it(parent, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_directory(error)) dirs.push_back(it->path());
  }
}

// Of file_clock, whose epoch need not be 1970 (libstdc++'s is in 2174: the count is negative).
std::optional<long long> mtime_ns(const std::filesystem::path& path) {
  std::error_code error;
  const auto time = std::filesystem::last_write_time(path, error);
  if (error) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

std::unordered_map<std::string, RunSummary> read_index(const std::filesystem::path& path) {
  std::unordered_map<std::string, RunSummary> entries;
  std::ifstream file(path);
  if (!file) return entries;
  try {
    const auto json = nlohmann::json::parse(file);
    if (json.value("version", 0) != kIndexVersion) return entries;
    for (const auto& entry : json.at("runs")) {
      auto summary = summary_from_json(entry);
      entries.emplace(summary.dir, std::move(summary));
    }
  } catch (const std::exception&) {
    entries.clear();  // rebuilt from the reports
  }
  return entries;
}

}  // namespace

std::filesystem::path index_path(const std::filesystem::path& data_dir) {
  return data_dir / "runs-index.json";
}

std::vector<std::filesystem::path> find_run_directories(const std::filesystem::path& data_dir) {
  std::vector<std::filesystem::path> dirs;
  add_children(data_dir / "runs", dirs);
  std::vector<std::filesystem::path> matrices;
  add_children(data_dir / "matrix", matrices);
  for (const auto& matrix : matrices) add_children(matrix / "runs", dirs);
  return dirs;
}

std::vector<std::filesystem::path> find_run_directories_of_matrix(
    const std::filesystem::path& matrix_dir) {
  std::vector<std::filesystem::path> dirs;
  add_children(matrix_dir / "runs", dirs);
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::vector<RunSummary> load_history(const std::filesystem::path& data_dir,
                                     std::vector<std::string>* warnings, IndexStats* stats) {
  IndexStats local;
  auto cached = read_index(index_path(data_dir));
  std::vector<RunSummary> runs;
  bool changed = false;
  for (const auto& dir : find_run_directories(data_dir)) {
    const auto report = dir / "report.json";
    const auto mtime = mtime_ns(report);
    if (!mtime) continue;  // in progress, or not a run directory
    const auto key = dir.lexically_normal().string();
    if (auto found = cached.find(key);
        found != cached.end() && found->second.report_mtime_ns == *mtime) {
      runs.push_back(std::move(found->second));
      cached.erase(found);
      continue;
    }
    changed = true;
    ++local.read;
    std::error_code error;
    if (const auto bytes = std::filesystem::file_size(report, error);
        !error && bytes > kMaxHistoryReportBytes) {
      ++local.unreadable;
      if (warnings) {
        warnings->push_back(fmt::format(
            "report \"{}\" is too large for the run history ({} MB, at most {} MB): left out",
            report.string(), (bytes + (1 << 20) - 1) >> 20, kMaxHistoryReportBytes >> 20));
      }
      continue;
    }
    auto run = store::read_run(report);
    if (!run) {
      ++local.unreadable;
      if (warnings) warnings->push_back(run.error().message);
      continue;
    }
    auto summary = summarize(*run, dir);
    summary.report_mtime_ns = *mtime;
    runs.push_back(std::move(summary));
  }
  changed = changed || !cached.empty();  // entries of deleted run directories
  std::sort(runs.begin(), runs.end(), newer_first);
  if (changed || !std::filesystem::exists(index_path(data_dir))) {
    nlohmann::json json{{"version", kIndexVersion}, {"runs", nlohmann::json::array()}};
    for (const auto& run : runs) json["runs"].push_back(to_json(run));
    // A read-only data directory still lists its runs; the index is only a cache.
    local.written = std::filesystem::is_directory(data_dir) &&
                    !store::write_file_atomically(index_path(data_dir), base::json_text(json));
  }
  local.runs = runs.size();
  if (stats) *stats = local;
  return runs;
}

base::Expected<RunSummary> resolve_run(const std::vector<RunSummary>& runs,
                                       const std::string& key) {
  std::vector<const RunSummary*> prefixed;
  for (const auto& run : runs) {
    if (run.id == key) return run;
    if (!key.empty() && run.id.rfind(key, 0) == 0) prefixed.push_back(&run);
  }
  if (prefixed.size() == 1) return *prefixed.front();
  if (prefixed.size() > 1) {
    std::string names;
    for (size_t i = 0; i < prefixed.size() && i < 5; ++i) {
      names += (i ? ", " : "") + prefixed[i]->id;
    }
    return base::Error{fmt::format("run id prefix \"{}\" is ambiguous: {}{}", key, names,
                                   prefixed.size() > 5 ? ", ..." : "")};
  }
  // runs are newest first: the first of the label is its newest run.
  for (const auto& run : runs) {
    if (!key.empty() && run.label == key) return run;
  }
  return base::Error{fmt::format("no run \"{}\" in the history", key)};
}

base::Expected<std::vector<RunSummary>> select_runs(const std::vector<RunSummary>& runs,
                                                    const std::string& key) {
  if (auto expression = parse_filter_expression(key)) {
    if (!*expression) return expression->error();
    auto selected = filter_runs(runs, **expression);
    if (selected.empty()) return base::Error{fmt::format("no run matches \"{}\"", key)};
    return selected;
  }
  std::vector<RunSummary> labelled;
  for (const auto& run : runs) {
    if (run.id == key) return std::vector<RunSummary>{run};
    if (run.label == key) labelled.push_back(run);
  }
  if (!labelled.empty()) return labelled;
  auto run = resolve_run(runs, key);
  if (!run) return run.error();
  return std::vector<RunSummary>{*run};
}

}  // namespace pgwaitprof::store
