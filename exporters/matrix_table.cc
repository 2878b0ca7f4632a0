// The tps x clients table of a matrix sweep, as engineers post it to pgsql-hackers, with the
// dominant wait of each cell; text, Markdown, CSV, JSON and a self-contained HTML page.
#include "exporters/matrix_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <utility>

#include "exporters/text_format.h"

namespace pgwaitprof::exporters {

using namespace text_format;

namespace {

// Wide enough for six client counts of five-digit tps with their ranges on a mail client.
constexpr size_t kTextWidth = 100;

struct CellRuns {
  std::vector<double> tps;
  std::vector<double> latency_ms;
  model::Profile profile;  // of the completed runs only, like the tps
  int failed = 0;
};

void set_dominant(MatrixCell& cell, const model::Profile& profile) {
  // One wait event under several backend types or states is one line in the hackers' tables,
  // so it is ranked as one.
  std::map<std::string, std::pair<uint64_t, std::string>> by_name;  // count, wait class
  for (const auto& [key, count] : profile.counts()) {
    if (model::is_idle(key)) continue;
    auto& entry = by_name[model::display_name(key)];
    entry.first += count;
    entry.second = key.wait_event_type;
  }
  const uint64_t total = profile.total(false);
  uint64_t best = 0;
  for (const auto& [name, entry] : by_name) {  // name order breaks ties
    if (entry.first <= best) continue;
    best = entry.first;
    cell.dominant_wait = name;
    cell.dominant_class = entry.second;
  }
  if (total > 0) cell.dominant_share = static_cast<double>(best) / static_cast<double>(total);
}

std::string variant_label(const std::string& variant) { return variant.empty() ? "-" : variant; }

bool has_tps(const MatrixCell* cell) { return cell != nullptr && !cell->tps.empty(); }

std::string median_text(const MatrixCell* cell) {
  if (cell == nullptr) return "";
  std::string text = has_tps(cell) ? format_tps(cell->tps_median) : "failed";
  if (cell->failed_runs > 0 && has_tps(cell)) text += "*";
  return text;
}

std::string range_text(const MatrixCell* cell) {
  if (!has_tps(cell) || cell->tps.size() < 2) return "";
  return fmt::format("{}-{}", format_tps(cell->tps_min), format_tps(cell->tps_max));
}

std::string latency_text(const MatrixCell* cell) {
  if (!has_tps(cell)) return "";
  return fmt::format("{:.3f}", cell->latency_median_ms);
}

std::string share_text(double share) { return fmt::format("{:.0f}%", share * 100); }

std::string dominant_text(const MatrixCell* cell) {
  if (cell == nullptr || cell->dominant_wait.empty()) return "";
  return fmt::format("{} {}", cell->dominant_wait, share_text(cell->dominant_share));
}

// A grid of variants down and client counts across, each variant on one or more lines (median,
// then range). Columns that do not fit in kTextWidth continue in a further block, repeating the
// variant names, as psql wraps wide output.
struct GridRow {
  std::string label;
  std::vector<std::string> cells;
};

std::string render_grid(const std::vector<std::string>& headers, const std::vector<GridRow>& rows,
                        bool right_aligned = true) {
  size_t label_width = std::string("clients").size();
  for (const auto& row : rows) label_width = std::max(label_width, row.label.size());
  std::vector<size_t> widths(headers.size());
  for (size_t column = 0; column < headers.size(); ++column) {
    widths[column] = headers[column].size();
    for (const auto& row : rows)
      widths[column] = std::max(widths[column], row.cells[column].size());
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
      std::string text = fmt::format("{:<{}}", label, label_width);
      for (size_t column = first; column < last; ++column) {
        text += right_aligned ? fmt::format("  {:>{}}", cells[column], widths[column])
                              : fmt::format("  {:<{}}", cells[column], widths[column]);
      }
      out += rstrip(std::move(text)) + '\n';
    };
    line("clients", headers);
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

template <typename Format>
std::vector<std::string> row_cells(const MatrixTable& table, const std::string& variant,
                                   Format format) {
  std::vector<std::string> cells;
  for (const int clients : table.clients) cells.push_back(format(table.find(variant, clients)));
  return cells;
}

std::string repeats_text(const MatrixTable& table) {
  size_t fewest = SIZE_MAX, most = 0;
  for (const auto& cell : table.cells) {
    fewest = std::min(fewest, cell.tps.size());
    most = std::max(most, cell.tps.size());
  }
  if (most == 0) return "no completed runs";
  if (fewest == most) return fmt::format("{} repeat{}", most, most == 1 ? "" : "s");
  return fmt::format("{}-{} repeats", fewest, most);
}

std::vector<std::string> failed_notes(const MatrixTable& table) {
  std::vector<std::string> notes;
  for (const auto& cell : table.cells) {
    if (cell.failed_runs == 0) continue;
    notes.push_back(fmt::format("{} at {} clients: {} of {} runs failed",
                                variant_label(cell.variant), cell.clients, cell.failed_runs,
                                cell.failed_runs + static_cast<int>(cell.tps.size())));
  }
  return notes;
}

// Colours of the wait classes, the same in every pgwaitprof picture.
std::string class_colour(const std::string& wait_class) {
  return std::string(wait_class_colour(wait_class));
}

constexpr std::array<const char*, 8> kVariantColours{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                     "#9467bd", "#8c564b", "#17becf", "#7f7f7f"};

// A round axis step (1, 2, 2.5 or 5 times a power of ten) giving about `ticks` intervals.
double nice_step(double max_value, int ticks) {
  if (max_value <= 0) return 1;
  const double raw = max_value / ticks;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (factor * magnitude >= raw) return factor * magnitude;
  }
  return 10 * magnitude;
}

std::string format_axis(double value) {
  if (value >= 1000 && std::fmod(value, 1000) == 0) return fmt::format("{:.0f}k", value / 1000);
  if (value >= 1000) return fmt::format("{:.1f}k", value / 1000);
  return fmt::format("{:g}", value);
}

std::string svg_chart(const MatrixTable& table) {
  const double width = 900, height = 400;
  const double left = 70, right = 170, top = 20, bottom = 50;
  const double plot_width = width - left - right, plot_height = height - top - bottom;
  double max_tps = 0;
  for (const auto& cell : table.cells) {
    if (!cell.tps.empty()) max_tps = std::max(max_tps, cell.tps_max);
  }
  const double step = nice_step(max_tps * 1.05, 5);
  const double y_max = std::max(step, std::ceil(max_tps * 1.05 / step) * step);
  const size_t columns = std::max<size_t>(table.clients.size(), 1);
  // Client counts are usually powers of two: evenly spaced by index reads like a log axis.
  auto x_of = [&](size_t index) {
    return left + (static_cast<double>(index) + 0.5) * plot_width / static_cast<double>(columns);
  };
  auto y_of = [&](double tps) { return top + plot_height * (1 - tps / y_max); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" role=\"img\" aria-label=\"median tps by clients per variant\">\n",
      width, height);
  for (double tick = 0; tick <= y_max + step / 2; tick += step) {
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" class=\"ytick\">{5}</text>\n",
        left, left + plot_width, y_of(tick), left - 8, y_of(tick) + 4, format_axis(tick));
  }
  for (size_t index = 0; index < table.clients.size(); ++index) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"xtick\">{}</text>\n", x_of(index),
                       top + plot_height + 20, table.clients[index]);
  }
  svg += fmt::format(
      "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" class=\"axis\"/>"
      "<line x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\" class=\"axis\"/>\n"
      "<text x=\"{4:.1f}\" y=\"{5}\" class=\"label\">clients</text>\n"
      "<text x=\"16\" y=\"{6:.1f}\" class=\"label\" transform=\"rotate(-90 16 {6:.1f})\">tps "
      "(median, min-max)</text>\n",
      left, top, top + plot_height, left + plot_width, left + plot_width / 2, height - 8,
      top + plot_height / 2);

  for (size_t variant_index = 0; variant_index < table.variants.size(); ++variant_index) {
    const std::string& variant = table.variants[variant_index];
    const char* colour = kVariantColours[variant_index % kVariantColours.size()];
    // A missing or failed cell breaks the line rather than joining across it.
    std::string path;
    bool pen_down = false;
    std::string marks;
    for (size_t index = 0; index < table.clients.size(); ++index) {
      const MatrixCell* cell = table.find(variant, table.clients[index]);
      if (!has_tps(cell)) {
        pen_down = false;
        continue;
      }
      const double x = x_of(index);
      path += fmt::format("{}{:.1f},{:.1f} ", pen_down ? "L" : "M", x, y_of(cell->tps_median));
      pen_down = true;
      if (cell->tps.size() > 1) {
        // Variants' whiskers side by side, so overlapping ranges do not hide each other.
        const double dodge = (static_cast<double>(variant_index) -
                              static_cast<double>(table.variants.size() - 1) / 2) *
                             6;
        marks += fmt::format(
            "<path d=\"M{0:.1f},{1:.1f}V{2:.1f}M{3:.1f},{1:.1f}h8M{3:.1f},{2:.1f}h8\" "
            "stroke=\"{4}\" class=\"whisker\"/>\n",
            x + dodge, y_of(cell->tps_min), y_of(cell->tps_max), x + dodge - 4, colour);
      }
      marks += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{} at {} clients: {} "
          "tps ({}-{}, {} runs)</title></circle>\n",
          x, y_of(cell->tps_median), colour, html_escape(variant_label(variant)), cell->clients,
          format_tps(cell->tps_median), format_tps(cell->tps_min), format_tps(cell->tps_max),
          cell->tps.size());
    }
    if (!path.empty()) {
      svg += fmt::format("<path d=\"{}\" stroke=\"{}\" class=\"series\"/>\n", path, colour);
    }
    svg += marks;
    const double legend_y = top + 10 + 22 * static_cast<double>(variant_index);
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
        "class=\"series\"/><text x=\"{4}\" y=\"{5:.1f}\" class=\"legend\">{6}</text>\n",
        left + plot_width + 20, left + plot_width + 44, legend_y, colour, left + plot_width + 50,
        legend_y + 4, html_escape(variant_label(variant)));
  }
  svg += "</svg>\n";
  return svg;
}

// Heat map: one cell per (variant, clients), coloured by the dominant wait's class, more
// saturated the larger its share.
std::string html_heat_map(const MatrixTable& table) {
  std::string html = "<table class=\"heat\">\n<tr><th>variant \\ clients</th>";
  for (const int clients : table.clients) html += fmt::format("<th>{}</th>", clients);
  html += "</tr>\n";
  for (const auto& variant : table.variants) {
    html += fmt::format("<tr><th>{}</th>", html_escape(variant_label(variant)));
    for (const int clients : table.clients) {
      const MatrixCell* cell = table.find(variant, clients);
      if (cell == nullptr || cell->dominant_wait.empty()) {
        html += "<td class=\"empty\">-</td>";
        continue;
      }
      // The share sets how far the class colour is mixed into white; the text is dark or light
      // by the mixed colour's luminance, so pale pink and deep blue both stay readable.
      const double strength = 0.2 + 0.8 * std::clamp(cell->dominant_share, 0.0, 1.0);
      const std::string colour = class_colour(cell->dominant_class);
      std::array<int, 3> mixed{};
      double luminance = 0;
      const std::array<double, 3> weights{0.2126, 0.7152, 0.0722};
      for (size_t channel = 0; channel < 3; ++channel) {
        const int full = std::stoi(colour.substr(1 + 2 * channel, 2), nullptr, 16);
        mixed[channel] = static_cast<int>(std::lround(255 - strength * (255 - full)));
        luminance += weights[channel] * mixed[channel] / 255.0;
      }
      html += fmt::format(
          "<td style=\"background:#{:02x}{:02x}{:02x};color:{}\" data-class=\"{}\" "
          "title=\"{} ({})\"><div class=\"wait\">{}</div><div class=\"share\">{}</div></td>",
          mixed[0], mixed[1], mixed[2], luminance > 0.45 ? "#111" : "#fff",
          html_escape(cell->dominant_class), html_escape(cell->dominant_wait),
          html_escape(cell->dominant_class), html_escape(cell->dominant_wait),
          share_text(cell->dominant_share));
    }
    html += "</tr>\n";
  }
  html += "</table>\n<p class=\"legend\">";
  for (const char* wait_class : {"CPU", "LWLock", "Lock", "IO", "IPC", "Client"}) {
    html += fmt::format("<span><i style=\"background:{}\"></i>{}</span> ", class_colour(wait_class),
                        wait_class);
  }
  html += fmt::format("<span><i style=\"background:{}\"></i>other</span></p>\n", class_colour(""));
  return html;
}

template <typename Format>
std::string html_grid(const MatrixTable& table, const std::string& caption, Format format,
                      bool numbers = true) {
  std::string html =
      fmt::format("<table class=\"{}\">\n<caption>{}</caption>\n<tr><th>variant</th>",
                  numbers ? "grid" : "grid text", html_escape(caption));
  for (const int clients : table.clients) html += fmt::format("<th>{}</th>", clients);
  html += "</tr>\n";
  for (const auto& variant : table.variants) {
    html += fmt::format("<tr><th>{}</th>", html_escape(variant_label(variant)));
    for (const auto& text : row_cells(table, variant, format)) {
      html += fmt::format("<td>{}</td>", text);  // `format` returns escaped HTML
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

const MatrixCell* MatrixTable::find(const std::string& variant, int clients) const {
  for (const auto& cell : cells) {
    if (cell.variant == variant && cell.clients == clients) return &cell;
  }
  return nullptr;
}

MatrixTable build_matrix_table(const std::vector<model::Run>& runs, std::string name) {
  MatrixTable table;
  table.name = std::move(name);
  // The orchestrator interleaves variants within each repeat, so the first repeat shows the
  // plan's variant order even when files are listed in another order.
  std::vector<size_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return runs[x].repeat < runs[y].repeat; });

  std::map<std::pair<std::string, int>, CellRuns> grouped;
  std::set<int> clients;
  for (const size_t index : order) {
    const model::Run& run = runs[index];
    if (std::find(table.variants.begin(), table.variants.end(), run.variant) ==
        table.variants.end()) {
      table.variants.push_back(run.variant);
    }
    clients.insert(run.clients);
    CellRuns& cell = grouped[{run.variant, run.clients}];
    if (run.status != "completed") {
      ++cell.failed;
      continue;
    }
    cell.profile.merge(run.profile);
    if (!run.loadgen) continue;
    cell.tps.push_back(run.loadgen->tps);
    if (std::isfinite(run.loadgen->latency_avg_ms)) {
      cell.latency_ms.push_back(run.loadgen->latency_avg_ms);
    }
  }
  table.clients.assign(clients.begin(), clients.end());

  for (const auto& variant : table.variants) {
    for (const int count : table.clients) {
      const auto found = grouped.find({variant, count});
      if (found == grouped.end()) continue;
      const CellRuns& runs_of_cell = found->second;
      MatrixCell cell;
      cell.variant = variant;
      cell.clients = count;
      cell.tps = runs_of_cell.tps;
      if (!cell.tps.empty()) {
        const auto [min_it, max_it] = std::minmax_element(cell.tps.begin(), cell.tps.end());
        cell.tps_min = *min_it;
        cell.tps_max = *max_it;
        cell.tps_median = median(cell.tps);
      }
      cell.latency_median_ms = median(runs_of_cell.latency_ms);
      set_dominant(cell, runs_of_cell.profile);
      cell.failed_runs = runs_of_cell.failed;
      table.cells.push_back(std::move(cell));
    }
  }
  return table;
}

std::string render_matrix_text(const MatrixTable& table) {
  std::string out;
  if (!table.name.empty()) out += table.name + "\n\n";
  out += fmt::format("tps by clients, median of {} (min-max below)\n\n", repeats_text(table));
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

  rows.clear();
  for (const auto& variant : table.variants) {
    rows.push_back({variant_label(variant), row_cells(table, variant, latency_text)});
  }
  out += "\nlatency, ms (median of the runs' averages)\n\n" + render_grid(headers, rows);

  rows.clear();
  for (const auto& variant : table.variants) {
    rows.push_back({variant_label(variant), row_cells(table, variant, dominant_text)});
  }
  // Names read better left-aligned; the share follows each name.
  out += "\ndominant wait (share of non-idle samples)\n\n" + render_grid(headers, rows, false);

  const auto notes = failed_notes(table);
  if (!notes.empty()) {
    out += "\n* failed runs, left out of tps and latency:\n";
    for (const auto& note : notes) out += "  " + note + "\n";
  }
  return out;
}

std::string render_matrix_markdown(const MatrixTable& table) {
  std::string out = "## " + markdown_escape(table.name.empty() ? "Matrix" : table.name) + "\n\n";
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
  out += grid(
      fmt::format("tps (median of {}, min-max)", repeats_text(table)), [](const MatrixCell* cell) {
        const std::string range = range_text(cell);
        return range.empty() ? median_text(cell) : fmt::format("{} ({})", median_text(cell), range);
      });
  out += grid("Latency (ms, median)", latency_text);
  out += grid("Dominant wait (share of non-idle samples)", dominant_text, false);
  const auto notes = failed_notes(table);
  if (!notes.empty()) {
    out += "\\* failed runs, left out of tps and latency:\n\n";
    for (const auto& note : notes) out += "- " + markdown_escape(note) + "\n";
  }
  return out;
}

std::string render_matrix_csv(const MatrixTable& table) {
  std::string out =
      "variant,clients,repeats,tps_median,tps_min,tps_max,latency_median_ms,dominant_wait,"
      "dominant_class,dominant_share,failed_runs\n";
  for (const auto& cell : table.cells) {
    const bool tps = !cell.tps.empty();
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(cell.variant), cell.clients,
                       cell.tps.size(), tps ? fmt::format("{:.2f}", cell.tps_median) : "",
                       tps ? fmt::format("{:.2f}", cell.tps_min) : "",
                       tps ? fmt::format("{:.2f}", cell.tps_max) : "",
                       tps ? fmt::format("{:.3f}", cell.latency_median_ms) : "",
                       csv_field(cell.dominant_wait), csv_field(cell.dominant_class),
                       cell.dominant_wait.empty() ? "" : fmt::format("{:.4f}", cell.dominant_share),
                       cell.failed_runs);
  }
  return out;
}

std::string render_matrix_json(const MatrixTable& table) {
  using nlohmann::json;
  json cells = json::array();
  for (const auto& cell : table.cells) {
    const bool tps = !cell.tps.empty();
    cells.push_back({{"variant", cell.variant},
                     {"clients", cell.clients},
                     {"tps", cell.tps},
                     {"tps_median", tps ? json(cell.tps_median) : json()},
                     {"tps_min", tps ? json(cell.tps_min) : json()},
                     {"tps_max", tps ? json(cell.tps_max) : json()},
                     {"latency_median_ms", tps ? json(cell.latency_median_ms) : json()},
                     {"dominant_wait", cell.dominant_wait},
                     {"dominant_class", cell.dominant_class},
                     {"dominant_share", cell.dominant_share},
                     {"failed_runs", cell.failed_runs}});
  }
  const json document = {{"name", table.name},
                         {"variants", table.variants},
                         {"clients", table.clients},
                         {"cells", std::move(cells)}};
  return document.dump(2) + "\n";
}

std::string render_matrix_html(const MatrixTable& table) {
  const std::string title = table.name.empty() ? "pgwaitprof matrix" : table.name;
  std::string html = fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{0}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 24px; color: #111; }}
h1 {{ font-size: 20px; }} h2 {{ font-size: 16px; margin-top: 28px; }}
svg text {{ font-size: 12px; fill: #333; }}
svg .ytick {{ text-anchor: end; }} svg .xtick {{ text-anchor: middle; }}
svg .label {{ text-anchor: middle; font-weight: 600; }}
svg .grid {{ stroke: #e4e4e4; }} svg .axis {{ stroke: #555; }}
svg .series {{ fill: none; stroke-width: 2.5; }} svg .whisker {{ stroke-width: 1.5; fill: none; }}
table {{ border-collapse: collapse; margin: 8px 0 16px; }}
th, td {{ border: 1px solid #ccc; padding: 4px 10px; }}
td {{ text-align: right; font-variant-numeric: tabular-nums; }}
td small {{ color: #666; }}
table.text td {{ text-align: left; }}
caption {{ text-align: left; font-weight: 600; padding: 4px 0; }}
table.heat td {{ text-align: center; min-width: 110px; font-size: 12px; }}
table.heat .share {{ font-size: 16px; font-weight: 600; }}
table.heat td.empty {{ color: #999; }}
p.legend span {{ margin-right: 14px; font-size: 13px; }}
p.legend i {{ display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }}
</style>
</head>
<body>
<h1>{0}</h1>
<p>tps by clients per variant: median of {1}; whiskers span min-max.</p>
)",
                                 html_escape(title), html_escape(repeats_text(table)));
  html += svg_chart(table);
  html += "<h2>Dominant wait per cell (share of non-idle samples)</h2>\n";
  html += html_heat_map(table);
  html += "<h2>Tables</h2>\n";
  html += html_grid(table, "tps (median, min-max below)", [](const MatrixCell* cell) {
    const std::string range = range_text(cell);
    std::string text = html_escape(median_text(cell));
    if (!range.empty()) text += "<br><small>" + html_escape(range) + "</small>";
    return text;
  });
  html += html_grid(table, "latency, ms (median)",
                    [](const MatrixCell* cell) { return html_escape(latency_text(cell)); });
  // The heat map above is the dominant-wait table; this one is for copying as text.
  html += html_grid(
      table, "dominant wait (share of non-idle samples)",
      [](const MatrixCell* cell) { return html_escape(dominant_text(cell)); }, false);
  const auto notes = failed_notes(table);
  if (!notes.empty()) {
    html += "<p>* failed runs, left out of tps and latency:</p>\n<ul>\n";
    for (const auto& note : notes) html += "<li>" + html_escape(note) + "</li>\n";
    html += "</ul>\n";
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace pgwaitprof::exporters
