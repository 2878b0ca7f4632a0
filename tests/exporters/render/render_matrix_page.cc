// Test helper for the browser check (browser_check.sh): prints the matrix page (or, with
// --format, the text, Markdown, CSV or JSON table) of the report.json files under the
// directories given, as `pgwaitprof matrix` writes them, without running a sweep.
// Usage: render_matrix_page [--format html|text|md|csv|json] NAME DIR...
#include <iostream>
#include <string>
#include <vector>

#include "exporters/render/matrix_table.h"
#include "tests/exporters/render/fixtures.h"

int main(int argc, char** argv) {
  using namespace pgwaitprof::exporters;
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string format = "html";
  if (args.size() >= 2 && args[0] == "--format") {
    format = args[1];
    args.erase(args.begin(), args.begin() + 2);
  }
  if (args.size() < 2) {
    std::cerr << "usage: render_matrix_page [--format html|text|md|csv|json] NAME DIR...\n";
    return 2;
  }
  std::vector<pgwaitprof::model::Run> runs;
  for (size_t index = 1; index < args.size(); ++index) {
    auto found = test_fixtures::load_runs(args[index]);
    runs.insert(runs.end(), found.begin(), found.end());
  }
  const MatrixTable table = build_matrix_table(runs, args[0]);
  if (format == "html") {
    std::cout << render_matrix_html(table);
  } else if (format == "text") {
    std::cout << render_matrix_text(table);
  } else if (format == "md") {
    std::cout << render_matrix_markdown(table);
  } else if (format == "csv") {
    std::cout << render_matrix_csv(table);
  } else if (format == "json") {
    std::cout << render_matrix_json(table);
  } else {
    std::cerr << "render_matrix_page: unknown format \"" << format << "\"\n";
    return 2;
  }
  return 0;
}
