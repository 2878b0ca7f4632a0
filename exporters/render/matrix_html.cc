// The matrix page: one self-contained HTML file with tps against clients per variant (SVG),
// the heat map of each cell's dominant wait, how the wait profile shifts with the client count
// (per variant, AAS by wait class stacked, drawn by web/charts.js with uPlot, and its table of
// shares with errors), and the tables of the text output.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "exporters/render/html_assets.h"
#include "exporters/render/matrix_detail.h"
#include "exporters/render/matrix_table.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters {

using namespace text_format;
using namespace matrix_detail;

namespace {

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

// Where everything of the tps chart goes. Client counts are usually powers of two: evenly
// spaced by index, they read like a log axis.
struct TpsFrame {
  static constexpr double kWidth = 900, kHeight = 400;
  static constexpr double kLeft = 70, kTop = 20;
  static constexpr double kPlotWidth = kWidth - kLeft - 170, kPlotHeight = kHeight - kTop - 50;
  double step = 1;
  double y_max = 1;
  size_t columns = 1;

  double x_of(size_t index) const {
    return kLeft + (static_cast<double>(index) + 0.5) * kPlotWidth / static_cast<double>(columns);
  }
  double y_of(double tps) const { return kTop + kPlotHeight * (1 - tps / y_max); }
};

TpsFrame tps_frame(const MatrixTable& table) {
  double max_tps = 0;
  for (const auto& cell : table.cells) {
    if (!cell.tps.empty()) max_tps = std::max(max_tps, cell.tps_max);
  }
  TpsFrame frame;
  frame.step = nice_step(max_tps * 1.05, 5);
  frame.y_max = std::max(frame.step, std::ceil(max_tps * 1.05 / frame.step) * frame.step);
  frame.columns = std::max<size_t>(table.clients.size(), 1);
  return frame;
}

std::string svg_tps_axes(const MatrixTable& table, const TpsFrame& frame) {
  using F = TpsFrame;
  std::string svg;
  for (double tick = 0; tick <= frame.y_max + frame.step / 2; tick += frame.step) {
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" class=\"ytick\">{5}</text>\n",
        F::kLeft, F::kLeft + F::kPlotWidth, frame.y_of(tick), F::kLeft - 8, frame.y_of(tick) + 4,
        format_axis(tick));
  }
  for (size_t index = 0; index < table.clients.size(); ++index) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"xtick\">{}</text>\n",
                       frame.x_of(index), F::kTop + F::kPlotHeight + 20, table.clients[index]);
  }
  svg += fmt::format(
      "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" class=\"axis\"/>"
      "<line x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\" class=\"axis\"/>\n"
      "<text x=\"{4:.1f}\" y=\"{5}\" class=\"label\">clients</text>\n"
      "<text x=\"16\" y=\"{6:.1f}\" class=\"label\" transform=\"rotate(-90 16 {6:.1f})\">{7} "
      "(median, min-max)</text>\n",
      F::kLeft, F::kTop, F::kTop + F::kPlotHeight, F::kLeft + F::kPlotWidth,
      F::kLeft + F::kPlotWidth / 2, F::kHeight - 8, F::kTop + F::kPlotHeight / 2,
      table.metric == model::Metric::kDuration ? "elapsed s" : "tps");
  return svg;
}

// One variant's line of medians, whiskers for cells of several runs, and its legend entry.
std::string svg_variant_line(const MatrixTable& table, size_t variant_index,
                             const TpsFrame& frame) {
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
    const double x = frame.x_of(index);
    path += fmt::format("{}{:.1f},{:.1f} ", pen_down ? "L" : "M", x, frame.y_of(cell->tps_median));
    pen_down = true;
    if (cell->tps.size() > 1) {
      // Variants' whiskers side by side, so overlapping ranges do not hide each other.
      const double dodge = (static_cast<double>(variant_index) -
                            static_cast<double>(table.variants.size() - 1) / 2) *
                           6;
      marks += fmt::format(
          "<path d=\"M{0:.1f},{1:.1f}V{2:.1f}M{3:.1f},{1:.1f}h8M{3:.1f},{2:.1f}h8\" "
          "stroke=\"{4}\" class=\"whisker\"/>\n",
          x + dodge, frame.y_of(cell->tps_min), frame.y_of(cell->tps_max), x + dodge - 4, colour);
    }
    marks += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{} at {} clients: {} "
        "{} ({}-{}, {} runs)</title></circle>\n",
        x, frame.y_of(cell->tps_median), colour, html_escape(variant_label(variant)), cell->clients,
        format_figure(cell, cell->tps_median),
        cell->metric == model::Metric::kDuration ? "s" : "tps", format_figure(cell, cell->tps_min),
        format_figure(cell, cell->tps_max), cell->tps.size());
  }
  std::string svg;
  if (!path.empty()) {
    svg += fmt::format("<path d=\"{}\" stroke=\"{}\" class=\"series\"/>\n", path, colour);
  }
  const double legend_x = TpsFrame::kLeft + TpsFrame::kPlotWidth + 20;
  const double legend_y = TpsFrame::kTop + 10 + 22 * static_cast<double>(variant_index);
  svg +=
      marks + fmt::format(
                  "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
                  "class=\"series\"/><text x=\"{4}\" y=\"{5:.1f}\" class=\"legend\">{6}</text>\n",
                  legend_x, legend_x + 24, legend_y, colour, legend_x + 30, legend_y + 4,
                  html_escape(variant_label(variant)));
  return svg;
}

std::string svg_tps_chart(const MatrixTable& table) {
  const TpsFrame frame = tps_frame(table);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" role=\"img\" aria-label=\"median tps by clients per variant\">\n",
      TpsFrame::kWidth, TpsFrame::kHeight);
  svg += svg_tps_axes(table, frame);
  for (size_t index = 0; index < table.variants.size(); ++index) {
    svg += svg_variant_line(table, index, frame);
  }
  return svg + "</svg>\n";
}

// The share sets how far the class colour is mixed into white; the text is dark or light by the
// mixed colour's luminance, so pale pink and deep blue both stay readable.
std::string heat_cell(const MatrixCell& cell) {
  const double strength = 0.2 + 0.8 * std::clamp(cell.dominant_share, 0.0, 1.0);
  const std::string colour = class_colour(cell.dominant_class);
  std::array<int, 3> mixed{};
  double luminance = 0;
  const std::array<double, 3> weights{0.2126, 0.7152, 0.0722};
  for (size_t channel = 0; channel < 3; ++channel) {
    const int full = std::stoi(colour.substr(1 + 2 * channel, 2), nullptr, 16);
    mixed[channel] = static_cast<int>(std::lround(255 - strength * (255 - full)));
    luminance += weights[channel] * mixed[channel] / 255.0;
  }
  return fmt::format(
      "<td style=\"background:#{:02x}{:02x}{:02x};color:{}\" data-class=\"{}\" "
      "title=\"{} ({})\"><div class=\"wait\">{}</div><div class=\"share\">{:.0f}%</div></td>",
      mixed[0], mixed[1], mixed[2], luminance > 0.45 ? "#111" : "#fff",
      html_escape(cell.dominant_class), html_escape(cell.dominant_wait),
      html_escape(cell.dominant_class), html_escape(cell.dominant_wait), cell.dominant_share * 100);
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
      html += cell == nullptr || cell->dominant_wait.empty() ? "<td class=\"empty\">-</td>"
                                                             : heat_cell(*cell);
    }
    html += "</tr>\n";
  }
  html += "</table>\n<p class=\"legend\">";
  for (const auto& wait_class : table_wait_classes(table)) {
    html += fmt::format("<span><i style=\"background:{}\"></i>{}</span> ", class_colour(wait_class),
                        html_escape(wait_class));
  }
  return html + "</p>\n";
}

// What web/charts.js draws each variant's composition chart from: per wait class, AAS and share
// with their errors per client count (null where the cell is missing or sampled nothing).
nlohmann::json composition_data(const MatrixTable& table) {
  using nlohmann::json;
  double aas_max = 0;
  for (const auto& cell : table.cells) aas_max = std::max(aas_max, cell.aas_total);
  json variants = json::array();
  for (const auto& variant : table.variants) {
    json series = json::array();
    for (const auto& wait_class : table_wait_classes(table)) {
      json aas = json::array(), aas_error = json::array();
      json share = json::array(), share_error = json::array();
      bool seen = false;
      for (const int clients : table.clients) {
        const MatrixCell* cell = table.find(variant, clients);
        const bool sampled = cell != nullptr && cell->profile_runs > 0;
        const WaitShare* part = sampled ? cell->find_class(wait_class) : nullptr;
        const WaitShare none;  // sampled, never in this class: a measured 0
        const WaitShare& value = part != nullptr ? *part : none;
        seen = seen || part != nullptr;
        aas.push_back(sampled ? json(value.aas) : json());
        aas_error.push_back(sampled && std::isfinite(value.aas_error) ? json(value.aas_error)
                                                                      : json());
        share.push_back(sampled ? json(value.share) : json());
        share_error.push_back(sampled && std::isfinite(value.share_error) ? json(value.share_error)
                                                                          : json());
      }
      if (!seen) continue;
      series.push_back({{"name", wait_class},
                        {"colour", class_colour(wait_class)},
                        {"aas", std::move(aas)},
                        {"aas_error", std::move(aas_error)},
                        {"share", std::move(share)},
                        {"share_error", std::move(share_error)}});
    }
    variants.push_back({{"name", variant_label(variant)}, {"series", std::move(series)}});
  }
  return {{"clients", table.clients}, {"aas_max", aas_max}, {"variants", std::move(variants)}};
}

std::string html_composition_table(const MatrixTable& table, const std::string& variant) {
  std::string html = "<table class=\"grid comp\">\n<tr><th>wait</th>";
  for (const int clients : table.clients) html += fmt::format("<th>{}</th>", clients);
  html += "</tr>\n";
  for (const auto& row : composition_rows(table, variant, " ± ")) {
    using Kind = CompositionRow::Kind;
    if (row.kind == Kind::kHeading) {
      html += fmt::format("<tr class=\"heading\"><th colspan=\"{}\">{}</th></tr>\n",
                          table.clients.size() + 1, html_escape(row.label));
      continue;
    }
    const std::string swatch =
        row.wait_class.empty()
            ? ""
            : fmt::format("<i style=\"background:{}\"></i>", class_colour(row.wait_class));
    html += fmt::format("<tr{}><th>{}{}</th>", row.kind == Kind::kTotal ? " class=\"total\"" : "",
                        swatch, html_escape(row.label));
    for (const auto& text : row.cells) html += "<td>" + html_escape(text) + "</td>";
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

bool any_profile(const MatrixTable& table) {
  return std::any_of(table.cells.begin(), table.cells.end(),
                     [](const MatrixCell& cell) { return cell.profile_runs > 0; });
}

std::string html_composition(const MatrixTable& table) {
  std::string html =
      "<h2 id=\"wait-profile\">Wait profile by clients</h2>\n<p>Average active sessions by wait "
      "class "
      "per variant, on one scale; the tables give each class's and the largest "
      "wait events' share of non-idle samples, %. " +
      html_escape(composition_note(table)) + ".</p>\n";
  html +=
      "<div class=\"view-toggle js-only\" id=\"composition-view\">"
      "<button type=\"button\" class=\"on\" data-view=\"aas\">average active sessions</button>"
      "<button type=\"button\" data-view=\"share\">% of non-idle samples</button></div>\n";
  html += "<div class=\"variants\">\n";
  for (size_t index = 0; index < table.variants.size(); ++index) {
    html += fmt::format(
        "<div class=\"variant\"><h3>{}</h3>\n<div class=\"uchart\" id=\"composition-chart-{}\" "
        "data-chart=\"composition\"></div>\n",
        html_escape(variant_label(table.variants[index])), index);
    html += "<div class=\"comp-wrap\">" + html_composition_table(table, table.variants[index]) +
            "</div></div>\n";
  }
  html += "</div>\n<script type=\"application/json\" id=\"composition-data\">" +
          html_assets::script_safe_json(base::json_text(composition_data(table))) + "</script>\n";
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

std::string html_tables(const MatrixTable& table) {
  std::string html = "<h2>Tables</h2>\n";
  html += html_grid(table, figure_title(table) + " (median, min-max below)",
                    [](const MatrixCell* cell) {
                      const std::string range = range_text(cell);
                      std::string text = html_escape(median_text(cell));
                      if (!range.empty()) text += "<br><small>" + html_escape(range) + "</small>";
                      return text;
                    });
  html += html_grid(table, "latency, ms (median)",
                    [](const MatrixCell* cell) { return html_escape(latency_text(cell)); });
  if (has_p99(table)) {
    html += html_grid(table, "p99 latency, ms (median of the runs' p99)",
                      [](const MatrixCell* cell) { return html_escape(p99_text(cell)); });
  }
  // The heat map above is the dominant-wait table; this one is for copying as text.
  html += html_grid(
      table, "dominant wait (share of non-idle samples)",
      [](const MatrixCell* cell) { return html_escape(dominant_text(cell)); }, false);
  const auto notes = failed_notes(table);
  if (!notes.empty()) {
    html += "<p>* failed runs, left out of tps, latency and wait profiles:</p>\n<ul>\n";
    for (const auto& note : notes) html += "<li>" + html_escape(note) + "</li>\n";
    html += "</ul>\n";
  }
  return html;
}

// The scalability chart's frame: its size, clients to x and tps to y, with round ticks.
struct UslScales {
  static constexpr double kWidth = 560, kHeight = 300, kLeft = 64, kTop = 16;
  static constexpr double kPlotWidth = kWidth - kLeft - 20, kPlotHeight = kHeight - kTop - 44;
  static constexpr int kCurvePoints = 120;  // the fitted curve's points, evenly over clients
  double x_max = 0, y_max = 0, x_step = 0, y_step = 0;
  double x_of(double clients) const { return kLeft + kPlotWidth * clients / x_max; }
  double y_of(double tps) const { return kTop + kPlotHeight * (1 - tps / y_max); }
  double curve_clients(int step) const { return 1 + (x_max - 1) * step / kCurvePoints; }
};

// Room for every run's tps, the fitted curve and N*, rounded up to the ticks.
UslScales usl_scales(const MatrixTable& table, const model::VariantScalability& result) {
  const auto& fit = result.fit;
  UslScales scales;
  scales.x_max = fit.max_clients;
  if (fit.peak_clients.constrained) {
    scales.x_max = std::max(scales.x_max, fit.peak_clients.value * 1.1);
  }
  for (const auto& cell : table.cells) {
    if (cell.variant == result.variant && !cell.tps.empty()) {
      scales.y_max = std::max(scales.y_max, cell.tps_max);
    }
  }
  for (int step = 0; step <= UslScales::kCurvePoints; ++step) {
    scales.y_max =
        std::max(scales.y_max, model::usl_throughput(fit.parameters, scales.curve_clients(step)));
  }
  scales.y_step = nice_step(scales.y_max * 1.05, 5);
  scales.y_max =
      std::max(scales.y_step, std::ceil(scales.y_max * 1.05 / scales.y_step) * scales.y_step);
  scales.x_step = nice_step(scales.x_max, 6);
  scales.x_max = std::ceil(scales.x_max / scales.x_step) * scales.x_step;
  return scales;
}

// The chart's grid, ticks, axes and the clients label.
std::string svg_usl_axes(const UslScales& scales) {
  using S = UslScales;
  std::string svg;
  for (double tick = 0; tick <= scales.y_max + scales.y_step / 2; tick += scales.y_step) {
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" class=\"ytick\">{5}</text>\n",
        S::kLeft, S::kLeft + S::kPlotWidth, scales.y_of(tick), S::kLeft - 8, scales.y_of(tick) + 4,
        format_axis(tick));
  }
  for (double tick = 0; tick <= scales.x_max + scales.x_step / 2; tick += scales.x_step) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"xtick\">{}</text>\n",
                       scales.x_of(tick), S::kTop + S::kPlotHeight + 18, format_axis(tick));
  }
  svg += fmt::format(
      "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" class=\"axis\"/>"
      "<line x1=\"{0}\" x2=\"{3}\" y1=\"{2}\" y2=\"{2}\" class=\"axis\"/>\n"
      "<text x=\"{4:.1f}\" y=\"{5}\" class=\"label\">clients</text>\n",
      S::kLeft, S::kTop, S::kTop + S::kPlotHeight, S::kLeft + S::kPlotWidth,
      S::kLeft + S::kPlotWidth / 2, S::kHeight - 6);
  return svg;
}

// One variant's throughput against clients on a linear axis: every run as a dot, the law's
// fitted curve, and N* (when the data constrain it) as a dashed line.
std::string svg_scalability_chart(const MatrixTable& table, const model::VariantScalability& result,
                                  size_t variant_index) {
  using S = UslScales;
  const auto& fit = result.fit;
  const auto scales = usl_scales(table, result);
  const char* colour = kVariantColours[variant_index % kVariantColours.size()];
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" role=\"img\" aria-label=\"tps by clients with the fitted scalability curve\" "
      "class=\"usl\">\n",
      S::kWidth, S::kHeight);
  svg += svg_usl_axes(scales);
  std::string curve;
  for (int step = 0; step <= S::kCurvePoints; ++step) {
    const double clients = scales.curve_clients(step);
    curve += fmt::format("{}{:.1f},{:.1f} ", step == 0 ? "M" : "L", scales.x_of(clients),
                         scales.y_of(model::usl_throughput(fit.parameters, clients)));
  }
  svg += fmt::format("<path d=\"{}\" stroke=\"{}\" class=\"series fit\"/>\n", curve, colour);
  if (fit.peak_clients.constrained) {
    const double x = scales.x_of(fit.peak_clients.value);
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"peak\"/>"
        "<text x=\"{3:.1f}\" y=\"{4}\" class=\"peak-label\">N* {5:.0f}</text>\n",
        x, S::kTop, S::kTop + S::kPlotHeight, x + 4, S::kTop + 12, fit.peak_clients.value);
  }
  for (const auto& cell : table.cells) {
    if (cell.variant != result.variant) continue;
    for (const double tps : cell.tps) {
      svg += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" class=\"run\"><title>{} "
          "clients: {:.0f} tps</title></circle>\n",
          scales.x_of(cell.clients), scales.y_of(tps), colour, cell.clients, tps);
    }
  }
  return svg + "</svg>\n";
}

std::string html_scalability(const MatrixTable& table) {
  if (table.scalability.empty()) return "";
  std::string html = "<h2 id=\"scalability\">Scalability</h2>\n<p>" +
                     html_escape(scalability_title()) + ". " +
                     html_escape(scalability_note(table)) + ".</p>\n<div class=\"variants\">\n";
  for (size_t index = 0; index < table.scalability.size(); ++index) {
    const auto& result = table.scalability[index];
    html += "<div class=\"variant\"><h3>" + html_escape(variant_label(result.variant)) + "</h3>\n";
    if (result.fit.fitted) html += svg_scalability_chart(table, result, index);
    html += "<table class=\"grid text facts\">\n";
    for (const auto& fact : scalability_facts(result)) {
      html += "<tr><th>" + html_escape(fact.label) + "</th><td>" + html_escape(fact.value) +
              "</td></tr>\n";
    }
    html += "</table>\n";
    const auto growth = growth_rows(result);
    if (!growth.empty()) {
      html +=
          "<div class=\"comp-wrap\"><table class=\"grid comp\">\n<caption>waits below → "
          "above the knee</caption>\n<tr><th>wait</th>";
      for (const auto& header : growth_headers()) html += "<th>" + html_escape(header) + "</th>";
      html += "</tr>\n";
      for (const auto& row : growth) {
        if (row.kind == CompositionRow::Kind::kHeading) {
          html += fmt::format("<tr class=\"heading\"><th colspan=\"{}\">{}</th></tr>\n",
                              growth_headers().size() + 1, html_escape(row.label));
          continue;
        }
        html += fmt::format("<tr><th><i style=\"background:{}\"></i>{}</th>",
                            class_colour(row.wait_class), html_escape(row.label));
        for (const auto& text : row.cells) html += "<td>" + html_escape(text) + "</td>";
        html += "</tr>\n";
      }
      html += "</table></div>\n";
    }
    html += "</div>\n";
  }
  return html + "</div>\n";
}

constexpr std::string_view kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 24px; color: #111; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; } h3 { font-size: 15px; margin: 0 0 4px; }
svg text { font-size: 12px; fill: #333; }
svg .ytick { text-anchor: end; } svg .xtick { text-anchor: middle; }
svg .label { text-anchor: middle; font-weight: 600; }
svg .grid { stroke: #e4e4e4; } svg .axis { stroke: #555; }
svg .series { fill: none; stroke-width: 2.5; } svg .whisker { stroke-width: 1.5; fill: none; }
svg .peak { stroke: #555; stroke-dasharray: 4 3; } svg .peak-label { font-weight: 600; }
svg.usl .run { fill-opacity: 0.7; }
table.grid.facts th { text-align: left; font-weight: 500; }
table.grid.facts td { white-space: normal; text-align: left; }
table.grid, table.heat { border-collapse: collapse; margin: 8px 0 16px; }
table.grid th, table.grid td, table.heat th, table.heat td { border: 1px solid #ccc; padding: 4px 10px; }
table.grid td { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.grid td small { color: #666; }
table.text td { text-align: left; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
table.heat td { text-align: center; min-width: 110px; font-size: 12px; }
table.heat .share { font-size: 16px; font-weight: 600; }
table.heat td.empty { color: #999; }
p.legend span { margin-right: 14px; font-size: 13px; }
p.legend i, table.comp i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
.variants { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 20px 28px; }
.variant { min-width: 0; }
.comp-wrap { overflow-x: auto; }
table.comp { font-size: 12px; margin-top: 10px; }
table.grid.comp th, table.grid.comp td { padding: 3px 6px; }
table.comp th { text-align: left; font-weight: 500; white-space: nowrap; }
table.comp tr:first-child th + th { text-align: right; }
table.comp tr.total th, table.comp tr.total td { font-weight: 600; }
table.comp tr.heading th { font-weight: 600; color: #555; background: #f6f6f6; }
.view-toggle { margin: 4px 0 12px; }
.view-toggle button { font: inherit; font-size: 13px; padding: 3px 10px; border: 1px solid #bbb;
  background: #fff; cursor: pointer; }
.view-toggle button + button { border-left: 0; }
.view-toggle button.on { background: #1f2430; color: #fff; border-color: #1f2430; }
)css";

// A plan of builds: each variant's version() and configure options, and the majors it mixes.
std::string html_builds(const MatrixTable& table) {
  if (table.builds.empty()) return "";
  std::string html;
  if (!table.mixed_majors.empty()) {
    html += "<p><strong>Mixed majors: " + html_escape(majors_text(table)) + "</strong></p>\n";
  }
  html += "<p>Builds:</p>\n<ul class=\"builds\">\n";
  for (const auto& build : table.builds) {
    html += "<li><b>" + html_escape(variant_label(build.variant)) + "</b>: " +
            (build.server_version.empty() ? std::string("(no run recorded its version)")
                                          : html_escape(build.server_version));
    if (!build.configure.empty()) {
      html += "<br><small>configure: " + html_escape(build.configure) + "</small>";
    }
    html += "</li>\n";
  }
  return html + "</ul>\n";
}

}  // namespace

std::string render_matrix_html(const MatrixTable& table) {
  const std::string title = table.name.empty() ? "pgwaitprof matrix" : table.name;
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
      html_escape(title) + "</title>\n" + html_assets::head_assets() + "<style>" +
      std::string(kStyle) + "</style>\n</head>\n<body>\n";
  html += "<h1>" + html_escape(title) + "</h1>\n<p>" + html_escape(figure_title(table)) +
          " by clients per variant: median of " + html_escape(repeats_text(table)) +
          "; whiskers span min-max.</p>\n";
  html += html_builds(table);
  html += svg_tps_chart(table);
  html += "<h2>Dominant wait per cell (share of non-idle samples)</h2>\n" + html_heat_map(table);
  // Runs that sampled nothing have no wait profile to chart.
  const bool profiles = any_profile(table);
  if (profiles) html += html_composition(table);
  html += html_scalability(table);
  html += html_tables(table);
  html += html_assets::body_scripts();
  if (profiles) {
    html +=
        "<script>pgwaitprof.draw('compositions', 'composition-data', 'composition-chart-', "
        "'composition-view');</script>\n";
  }
  return html + "</body>\n</html>\n";
}

}  // namespace pgwaitprof::exporters
