// Writing and reading run directories.
#include "store/run_directory.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "base/regular_file.h"
#include "store/atomic_file.h"

namespace pgwaitprof::store {
namespace {

constexpr std::string_view kReportJson = "report.json";
// How an unfinished report's error begins.
constexpr std::string_view kUnfinished = "unfinished:";

// "NAME.tmp.PID" of a process that is gone: NAME; nullopt for any other file.
std::optional<std::string> orphaned_temporary(const std::string& file_name) {
  const auto at = file_name.rfind(".tmp.");
  if (at == std::string::npos || at == 0) return std::nullopt;
  const std::string_view digits = std::string_view(file_name).substr(at + 5);
  pid_t pid = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (error != std::errc() || end != digits.data() + digits.size() || pid <= 0) {
    return std::nullopt;
  }
  if (::kill(pid, 0) == 0 || errno == EPERM) return std::nullopt;  // still writing it
  return file_name.substr(0, at);
}

// A run directory's renderings belong in place when its report.json is final.
bool report_is_final(const std::filesystem::path& dir) {
  std::error_code error;
  if (!std::filesystem::exists(dir / kReportJson, error)) return false;
  auto run = read_run(dir);
  return run && !is_unfinished_report(*run);
}

// One directory's temporary files of gone processes; in a run directory (`run_directory`) whose
// report.json is final, staged renderings are put in place (report.json is read only then).
int finish_directory(const std::filesystem::path& dir, bool run_directory) {
  std::vector<std::pair<std::filesystem::path, std::string>> orphans;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    auto name = orphaned_temporary(entry.path().filename().string());
    if (name && entry.is_regular_file(error)) orphans.emplace_back(entry.path(), *name);
  }
  if (orphans.empty()) return 0;
  const bool roll_forward = run_directory && report_is_final(dir);
  for (const auto& [path, name] : orphans) {
    if (!roll_forward || name == kReportJson || publish_staged_file(dir / name, path)) {
      std::filesystem::remove(path, error);
    }
  }
  return static_cast<int>(orphans.size());
}

}  // namespace

std::string make_run_id(std::string_view label) {
  static std::mt19937 random{std::random_device{}()};
  std::string id =
      fmt::format("{:%Y%m%d-%H%M%S}-{:04x}", fmt::gmtime(std::time(nullptr)), random() & 0xffff);
  std::string suffix;
  for (char character : label) {
    if (std::isalnum(static_cast<unsigned char>(character)) || character == '-' ||
        character == '_') {
      suffix.push_back(character);
    } else if (!suffix.empty() && suffix.back() != '-') {
      suffix.push_back('-');
    }
    if (suffix.size() >= 40) break;
  }
  while (!suffix.empty() && suffix.back() == '-') suffix.pop_back();
  return suffix.empty() ? id : id + "-" + suffix;
}

base::Status write_run_directory(const std::filesystem::path& dir, const model::Run& run,
                                 std::span<const RunFile> files,
                                 const std::function<void(RunWriteStep)>& at_step) {
  if (auto failed = create_private_directories(dir)) return failed;
  std::vector<std::filesystem::path> staged;
  auto discard = [&staged] {
    for (const auto& path : staged) ::unlink(staged_path(path).c_str());
  };
  for (const auto& file : files) {
    if (auto failed = stage_file(dir / file.name, file.render(run))) {
      discard();
      return failed;
    }
    staged.push_back(dir / file.name);
  }
  if (at_step) at_step(RunWriteStep::kStaged);
  // report.json first: once it is in place, the renderings staged beside it are its own.
  std::stable_partition(staged.begin(), staged.end(),
                        [](const auto& path) { return path.filename() == kReportJson; });
  for (const auto& path : staged) {
    const bool commit = path.filename() == kReportJson;
    if (auto failed = publish_staged_file(path, staged_path(path))) {
      if (commit) discard();
      return failed;
    }
    if (commit && at_step) at_step(RunWriteStep::kCommitted);
  }
  return std::nullopt;
}

void remove_rendered_files(const std::filesystem::path& dir, std::span<const RunFile> files) {
  for (const auto& file : files) {
    if (std::string_view(file.name) == "report.json") continue;
    std::error_code ignored;
    std::filesystem::remove(dir / file.name, ignored);
  }
}

base::Status write_unfinished_report(const std::filesystem::path& dir, model::Run run,
                                     RenderRun report_json) {
  run.status = model::RunStatus::kFailed;
  run.error = fmt::format(
      "{} pgwaitprof (pid {}) is running this run, or ended before writing its report "
      "(killed, or the machine stopped)",
      kUnfinished, ::getpid());
  return write_file_atomically(dir / "report.json", report_json(run));
}

bool is_unfinished_report(const model::Run& run) {
  return run.status == model::RunStatus::kFailed && run.error.starts_with(kUnfinished);
}

int finish_interrupted_writes(const std::filesystem::path& root) {
  int handled = finish_directory(root, false);
  std::error_code error;
  auto subdirectories = [&error](const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
      if (entry.is_directory(error) && !entry.is_symlink(error)) found.push_back(entry.path());
    }
    return found;
  };
  // ROOT/runs/ID, ROOT/matrix/M, ROOT/matrix/M/runs/CELL (or, from a matrix directory, runs/CELL).
  for (const auto& child : subdirectories(root)) {
    handled += finish_directory(child, false);
    for (const auto& grandchild : subdirectories(child)) {
      handled += finish_directory(grandchild, true);
      for (const auto& cell : subdirectories(grandchild / "runs")) {
        handled += finish_directory(cell, true);
      }
    }
  }
  return handled;
}

base::Expected<model::Run> read_run(const std::filesystem::path& dir_or_report) {
  const auto path =
      std::filesystem::is_directory(dir_or_report) ? dir_or_report / "report.json" : dir_or_report;
  const auto text = base::read_regular_file(path, "report");
  if (!text) return text.error();
  try {
    return model::run_from_json(nlohmann::json::parse(*text));
  } catch (const std::exception& error) {
    return base::Error{
        fmt::format("could not read report \"{}\": {}", path.string(), error.what())};
  }
}

}  // namespace pgwaitprof::store
