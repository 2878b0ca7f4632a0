// `pgwaitprof report` (render a saved run again) and `pgwaitprof compare` (A/B of runs or
// matrices): they only read run directories.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace pgwaitprof::commands {

struct ReportCommand {
  std::filesystem::path run_dir;
  std::string format = "text";
  std::string by = "wait_event";
  int top = 20;
  bool include_idle = false;
  bool no_trim = false;  // keep the warm-up in the summary figures
};

int report_command(const ReportCommand& command);

struct CompareCommand {
  std::string side_a, side_b;
  std::filesystem::path data_dir;  // whose history run ids, labels and filters are looked up in
  std::optional<std::string> results_dsn;  // or this results database's
  std::string format = "text";
  std::string split_by;  // "" or an environment attribute: sides regrouped by its two values
};

int compare_command(const CompareCommand& command);

}  // namespace pgwaitprof::commands
