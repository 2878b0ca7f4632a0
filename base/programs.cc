// Finding a program on PATH and in /usr/lib/postgresql/*/bin, and how one ended.
#include "base/programs.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <vector>

namespace pgwaitprof::base {

std::string find_executable(const std::string& name) {
  namespace fs = std::filesystem;
  auto executable = [](const fs::path& path) { return ::access(path.c_str(), X_OK) == 0; };
  if (name.find('/') != std::string::npos) return executable(name) ? name : "";
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const fs::path candidate = fs::path(rest.substr(0, colon)) / name;
      if (executable(candidate)) return candidate.string();
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  std::vector<fs::path> versions;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", error)) {
    versions.push_back(entry.path());
  }
  std::sort(versions.begin(), versions.end(), [](const fs::path& a, const fs::path& b) {
    return std::atoi(a.filename().c_str()) > std::atoi(b.filename().c_str());
  });
  for (const auto& version : versions) {
    if (executable(version / "bin" / name)) return (version / "bin" / name).string();
  }
  return "";
}

std::string describe_exit(int exit_code) {
  if (exit_code > 128 && exit_code < 128 + NSIG) {
    const int signal_number = exit_code - 128;
    const char* name = ::sigabbrev_np(signal_number);
    return fmt::format("was killed by signal {} (SIG{})", signal_number, name ? name : "?");
  }
  return fmt::format("exited with code {}", exit_code);
}

}  // namespace pgwaitprof::base
