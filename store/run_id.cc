// Run ids.
#include "store/run_id.h"

#include <fmt/format.h>

#include <regex>

#include "config/quote.h"
#include "store/run_summary.h"

namespace pgwaitprof::store {

bool valid_run_id(std::string_view id) {
  static const std::regex pattern(R"(\d{8}-\d{6}-[0-9a-f]{4}(-[A-Za-z0-9_-]{0,39}[A-Za-z0-9_])?)");
  return std::regex_match(id.begin(), id.end(), pattern);
}

base::Status check_run_id(const std::string& id, const std::filesystem::path& dir) {
  // A report's id is anyone's text and the message goes to a terminal: quote() writes control
  // characters out and cuts it at 80 characters; the directory is written out whole ({:?}).
  if (!valid_run_id(id)) {
    return base::Error{fmt::format("run directory {:?} holds run id {}, not one pgwaitprof makes",
                                   dir.string(), config::quote(id))};
  }
  // A matrix's run directories are named by cell ("default-c1-r1"); its runs' ids carry the
  // plan's and the cell's name in their label part, cut at 40 characters.
  auto normal = dir.lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // "/d/runs/ID/"
  if (matrix_of_dir(normal).empty() && id != normal.filename().string()) {
    return base::Error{fmt::format("run directory {:?} holds run id {}, not its own name",
                                   dir.string(), config::quote(id))};
  }
  return std::nullopt;
}

}  // namespace pgwaitprof::store
