// The tps x clients table of a matrix sweep, as engineers post it to pgsql-hackers, with the
// dominant wait and the wait profile of each cell; text and Markdown (CSV and JSON are
// matrix_data.cc, the HTML page matrix_html.cc, the wait-profile rows matrix_composition.cc; the
// cells are aggregated in model/matrix_aggregate.cc).
#include "exporters/render/matrix_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "exporters/render/matrix_detail.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters {

using namespace text_format;
using namespace matrix_detail;

namespace {

// Wide enough for six client counts of five-digit tps with their ranges on a mail client.
constexpr size_t kTextWidth = 100;

// A grid of variants down and client counts across, each variant on one or more lines (median,
// then range). Columns that do not fit in kTextWidth continue in a further block, repeating the
// variant names, as psql wraps wide output. Labels and cells (variant and wait names) are
// escaped here, as text_table escapes its cells.
struct GridRow {
  std::string label;
  std::vector<std::string> cells;
};

std::string render_grid(const std::vector<std::string>& headers,
                        const std::vector<GridRow>& raw_rows, bool right_aligned = true,
                        const std::string& corner = "clients") {
  std::vector<GridRow> rows;
  for (const auto& row : raw_rows) {
    rows.push_back({text_escape(row.label), {}});
    for (const auto& cell : row.cells) rows.back().cells.push_back(text_escape(cell));
  }
  // Widths in columns, not bytes: the composition's cells carry a "±".
  size_t label_width = display_width(corner);
  for (const auto& row : rows) label_width = std::max(label_width, display_width(row.label));
  std::vector<size_t> widths(headers.size());
  for (size_t column = 0; column < headers.size(); ++column) {
    widths[column] = display_width(headers[column]);
    for (const auto& row : rows) {
      widths[column] = std::max(widths[column], display_width(row.cells[column]));
    }
  }
  std::string out;
  for (size_t first = 0; first < headers.size();) {
    size_t last = first;  // exclusive
    size_t used = label_width;
    while (last < headers.size() && (last == first || used + 2 + widths[last] <= kTextWidth)) {
      used += 2 + widths[last];
      ++last;
    }
    if (first > 0) out += '\n';
    auto line = [&](const std::string& label, const std::vector<std::string>& cells) {
      std::string text = pad_right(label, label_width);
      for (size_t column = first; column < last; ++column) {
        text += "  " + (right_aligned ? pad_left(cells[column], widths[column])
                                      : pad_right(cells[column], widths[column]));
      }
      out += rstrip(std::move(text)) + '\n';
    };
    line(corner, headers);
    for (const auto& row : rows) line(row.label, row.cells);
    first = last;
  }
  return out;
}

std::vector<std::string> client_headers(const MatrixTable& table) {
  std::vector<std::string> headers;
  for (const int clients : table.clients) headers.push_back(std::to_string(clients));
  return headers;
}

bool all_empty(const std::vector<std::string>& cells) {
  return std::all_of(cells.begin(), cells.end(),
                     [](const std::string& text) { return text.empty(); });
}

// Per variant: total AAS, the share of each wait class and of the largest wait events.
std::string text_composition(const MatrixTable& table) {
  std::string out;
  for (const auto& variant : table.variants) {
    const auto composition = composition_rows(table, variant, " ±");
    if (all_empty(composition.front().cells)) continue;
    std::vector<GridRow> rows;
    for (const auto& row : composition) {
      const bool heading = row.kind == CompositionRow::Kind::kHeading;
      rows.push_back({heading ? row.label + ":" : row.label, row.cells});
    }
    out += "\n" + text_escape(variant_label(variant)) + "\n" +
           render_grid(client_headers(table), rows);
  }
  if (out.empty()) return out;  // no run sampled anything
  return "\n" + composition_title() + "\n" + composition_note(table) + "\n" + out;
}

std::string markdown_composition(const MatrixTable& table) {
  std::string out;
  for (const auto& variant : table.variants) {
    const auto composition = composition_rows(table, variant, " ± ");
    if (all_empty(composition.front().cells)) continue;
    std::vector<std::vector<std::string>> rows{{"wait"}};
    for (const int clients : table.clients) rows[0].push_back(std::to_string(clients));
    std::vector<bool> right_aligned(rows[0].size(), true);
    right_aligned[0] = false;
    for (const auto& row : composition) {
      const bool heading = row.kind == CompositionRow::Kind::kHeading;
      rows.push_back({heading ? row.label + ":" : row.label});
      rows.back().insert(rows.back().end(), row.cells.begin(), row.cells.end());
    }
    out += "### " + markdown_escape("Wait profile: " + variant_label(variant)) + "\n\n" +
           markdown_table(rows, right_aligned) + "\n";
  }
  if (out.empty()) return out;
  return "Wait profiles by clients: " + markdown_escape(composition_note(table)) + "\n\n" + out;
}

// "  label: value" within kTextWidth: a long value (the efficiency of every count, the waits
// across the knee) continues on lines indented under its start, broken between words. Measured
// in bytes, not columns: a line of "λ", "→" and "²" then fits in kTextWidth either way.
std::string wrap_fact(const std::string& label, const std::string& value) {
  const size_t indent = label.size();  // bytes; continuation lines indent by columns
  const std::string continuation(display_width(label), ' ');
  std::string out = label, line;
  size_t start = 0;
  while (start < value.size()) {
    size_t end = value.find(' ', start);
    // "41 %" stays on one line.
    while (end != std::string::npos && value.compare(end, 2, " %") == 0) {
      end = value.find(' ', end + 1);
    }
    end = end == std::string::npos ? value.size() : end + 1;
    const std::string word = value.substr(start, end - start);
    if (!line.empty() && indent + rstrip(line + word).size() > kTextWidth) {
      out += rstrip(line) + "\n" + continuation;
      line.clear();
    }
    line += word;
    start = end;
  }
  return out + line + "\n";
}

// Per variant: its facts as "label: value" lines, then the waits across its knee as a grid.
std::string text_scalability(const MatrixTable& table) {
  if (table.scalability.empty()) return "";
  std::string out =
      "\n" + wrap_fact("", scalability_title()) + wrap_fact("", scalability_note(table));
  for (const auto& variant : table.scalability) {
    out += "\n" + text_escape(variant_label(variant.variant)) + "\n";
    const auto facts = scalability_facts(variant);
    size_t width = 0;
    for (const auto& fact : facts) width = std::max(width, display_width(fact.label));
    for (const auto& fact : facts) {
      out += wrap_fact(pad_right("  " + text_escape(fact.label) + ":", width + 4),
                       text_escape(fact.value));
    }
    const auto growth = growth_rows(variant);
    if (growth.empty()) continue;
    std::vector<GridRow> rows;
    for (const auto& row : growth) {
      const bool heading = row.kind == CompositionRow::Kind::kHeading;
      rows.push_back({heading ? row.label + ":" : row.label, row.cells});
    }
    out += wrap_fact("",
                     "share of non-idle samples and AAS per client, below -> above the knee: "
                     "means of the cells on each side, ± from the cells' errors") +
           render_grid(growth_headers(), rows, true, "wait");
  }
  return out;
}

std::string markdown_scalability(const MatrixTable& table) {
  if (table.scalability.empty()) return "";
  std::string out = "### Scalability\n\n" + markdown_escape(scalability_title()) + "; " +
                    markdown_escape(scalability_note(table)) + "\n\n";
  for (const auto& variant : table.scalability) {
    out += "#### " + markdown_escape("Scalability: " + variant_label(variant.variant)) + "\n\n";
    for (const auto& fact : scalability_facts(variant)) {
      out += "- " + markdown_escape(fact.label) + ": " + markdown_escape(fact.value) + "\n";
    }
    out += "\n";
    const auto growth = growth_rows(variant);
    if (growth.empty()) continue;
    std::vector<std::vector<std::string>> rows{{"wait (below → above the knee)"}};
    const auto headers = growth_headers();
    rows[0].insert(rows[0].end(), headers.begin(), headers.end());
    std::vector<bool> right_aligned(rows[0].size(), true);
    right_aligned[0] = false;
    for (const auto& row : growth) {
      const bool heading = row.kind == CompositionRow::Kind::kHeading;
      rows.push_back({heading ? row.label + ":" : row.label});
      rows.back().insert(rows.back().end(), row.cells.begin(), row.cells.end());
    }
    out += markdown_table(rows, right_aligned) + "\n";
  }
  return out;
}

// A plan of builds: which build each variant ran, as the server said (version()), and how it
// was configured where pg_config could say; "" for a plan of settings.
std::string text_builds(const MatrixTable& table) {
  if (table.builds.empty()) return "";
  std::string out = "builds:\n";
  for (const auto& build : table.builds) {
    out += fmt::format("  {} = {}\n", text_escape(variant_label(build.variant)),
                       build.server_version.empty() ? "(no run recorded its version)"
                                                    : text_escape(build.server_version));
    if (!build.configure.empty()) out += "    configure: " + text_escape(build.configure) + "\n";
  }
  return out + "\n";
}

// A row per variant of one figure's cells.
template <typename Format>
std::vector<GridRow> grid_rows(const MatrixTable& table, Format format) {
  std::vector<GridRow> rows;
  for (const auto& variant : table.variants) {
    rows.push_back({variant_label(variant), row_cells(table, variant, format)});
  }
  return rows;
}

}  // namespace

std::string render_matrix_text(const MatrixTable& table) {
  std::string out;
  if (!table.name.empty()) out += text_escape(table.name) + "\n\n";
  if (!table.mixed_majors.empty()) out += "mixed majors: " + majors_text(table) + "\n";
  out += text_builds(table);
  out += fmt::format("{} by clients, median of {} (min-max below)\n\n", figure_title(table),
                     repeats_text(table));
  const auto headers = client_headers(table);

  std::vector<GridRow> rows;
  for (const auto& variant : table.variants) {
    rows.push_back({variant_label(variant), row_cells(table, variant, median_text)});
    const auto ranges = row_cells(table, variant, range_text);
    if (std::any_of(ranges.begin(), ranges.end(), [](const auto& text) { return !text.empty(); })) {
      rows.push_back({"", ranges});
    }
  }
  out += render_grid(headers, rows);
  out += "\nlatency, ms (median of the runs' averages)\n\n" +
         render_grid(headers, grid_rows(table, latency_text));
  if (has_checkpoint(table)) {
    out += "\ncheckpoint after the run, s (median)\n\n" +
           render_grid(headers, grid_rows(table, checkpoint_text));
  }
  if (has_p99(table)) {
    out += "\np99 latency, ms (median of the runs' p99)\n\n" +
           render_grid(headers, grid_rows(table, p99_text));
  }
  // Names read better left-aligned; the share follows each name.
  out += "\ndominant wait (share of non-idle samples)\n\n" +
         render_grid(headers, grid_rows(table, dominant_text), false);
  out += text_composition(table);
  out += text_scalability(table);

  const auto notes = failed_notes(table);
  if (!notes.empty()) {
    out += "\n* failed runs, left out of tps, latency and wait profiles:\n";
    for (const auto& note : notes) out += "  " + text_escape(note) + "\n";
  }
  return out;
}

std::string render_matrix_markdown(const MatrixTable& table) {
  std::string out = "## " + markdown_escape(table.name.empty() ? "Matrix" : table.name) + "\n\n";
  if (!table.mixed_majors.empty()) out += "**Mixed majors: " + majors_text(table) + "**\n\n";
  if (!table.builds.empty()) {
    out += "Builds:\n\n";
    for (const auto& build : table.builds) {
      out += fmt::format("- {}: {}\n", markdown_escape(variant_label(build.variant)),
                         build.server_version.empty() ? "(no run recorded its version)"
                                                      : markdown_escape(build.server_version));
      if (!build.configure.empty()) {
        out += "  configure: " + markdown_escape(build.configure) + "\n";
      }
    }
    out += "\n";
  }
  auto grid = [&](const std::string& title, auto format, bool numbers = true) {
    std::vector<std::string> header{"variant"};
    for (const int clients : table.clients) header.push_back(std::to_string(clients));
    std::vector<bool> right_aligned(header.size(), numbers);
    right_aligned[0] = false;
    std::vector<std::vector<std::string>> rows;
    rows.push_back(std::move(header));
    for (const auto& variant : table.variants) {
      std::vector<std::string> row{variant_label(variant)};
      const auto cells = row_cells(table, variant, format);
      row.insert(row.end(), cells.begin(), cells.end());
      rows.push_back(std::move(row));
    }
    return "### " + title + "\n\n" + markdown_table(rows, right_aligned) + "\n";
  };
  out += grid(fmt::format("{} (median of {}, min-max)", figure_title(table), repeats_text(table)),
              [](const MatrixCell* cell) {
                const std::string range = range_text(cell);
                return range.empty() ? median_text(cell)
                                     : fmt::format("{} ({})", median_text(cell), range);
              });
  out += grid("Latency (ms, median)", latency_text);
  if (has_checkpoint(table)) out += grid("Checkpoint after the run (s, median)", checkpoint_text);
  if (has_p99(table)) out += grid("p99 latency (ms, median of the runs' p99)", p99_text);
  out += grid("Dominant wait (share of non-idle samples)", dominant_text, false);
  out += markdown_composition(table);
  out += markdown_scalability(table);
  const auto notes = failed_notes(table);
  if (!notes.empty()) {
    out += "\\* failed runs, left out of tps, latency and wait profiles:\n\n";
    for (const auto& note : notes) out += "- " + markdown_escape(note) + "\n";
  }
  return out;
}

}  // namespace pgwaitprof::exporters
