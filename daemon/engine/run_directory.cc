// Writing and reading run directories.
#include "daemon/engine/run_directory.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "daemon/engine/atomic_file.h"
#include "exporters/report_render.h"

namespace pgwaitprof::engine {

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

Status write_run_directory(const std::filesystem::path& dir, const model::Run& run) {
  if (auto failed = create_private_directories(dir)) return failed;
  // report.json last: its status is the run's final word, given only once everything it
  // stands for is durable.
  const std::pair<const char*, std::string (*)(const model::Run&)> files[] = {
      {"report.txt", [](const model::Run& r) { return exporters::render_text(r); }},
      {"report.md", [](const model::Run& r) { return exporters::render_markdown(r); }},
      {"profile.csv", [](const model::Run& r) { return exporters::render_profile_csv(r); }},
      {"timeline.csv", &exporters::render_timeline_csv},
      {"waits.folded", [](const model::Run& r) { return exporters::render_folded(r); }},
      {"report.html", [](const model::Run& r) { return exporters::render_html(r); }},
      {"report.json", &exporters::render_json},
  };
  for (const auto& [name, render] : files) {
    if (auto failed = write_file_atomically(dir / name, render(run))) return failed;
  }
  return std::nullopt;
}

void remove_rendered_files(const std::filesystem::path& dir) {
  for (const char* name :
       {"report.txt", "report.md", "profile.csv", "timeline.csv", "waits.folded", "report.html"}) {
    std::error_code ignored;
    std::filesystem::remove(dir / name, ignored);
  }
}

Status write_unfinished_report(const std::filesystem::path& dir, model::Run run) {
  run.status = model::RunStatus::kFailed;
  run.error = fmt::format(
      "unfinished: pgwaitprof (pid {}) is running this run, or ended before writing its report "
      "(killed, or the machine stopped)",
      ::getpid());
  return write_file_atomically(dir / "report.json", exporters::render_json(run));
}

Expected<model::Run> read_run(const std::filesystem::path& dir_or_report) {
  const auto path =
      std::filesystem::is_directory(dir_or_report) ? dir_or_report / "report.json" : dir_or_report;
  std::ifstream file(path);
  if (!file) {
    return Error{
        fmt::format("could not open report \"{}\": {}", path.string(), std::strerror(errno))};
  }
  try {
    return model::run_from_json(nlohmann::json::parse(file));
  } catch (const std::exception& error) {
    return Error{fmt::format("could not read report \"{}\": {}", path.string(), error.what())};
  }
}

}  // namespace pgwaitprof::engine
