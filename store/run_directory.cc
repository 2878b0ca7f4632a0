// Writing and reading run directories.
#include "store/run_directory.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "base/regular_file.h"
#include "store/atomic_file.h"

namespace pgwaitprof::store {

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
                                 std::span<const RunFile> files) {
  if (auto failed = create_private_directories(dir)) return failed;
  for (const auto& [name, render] : files) {
    if (auto failed = write_file_atomically(dir / name, render(run))) return failed;
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
      "unfinished: pgwaitprof (pid {}) is running this run, or ended before writing its report "
      "(killed, or the machine stopped)",
      ::getpid());
  return write_file_atomically(dir / "report.json", report_json(run));
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
