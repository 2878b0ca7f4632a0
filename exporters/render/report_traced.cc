// The traced source's tables and duration histograms (report_traced.h).
#include "exporters/render/report_traced.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "exporters/render/report_facts.h"
#include "exporters/render/text_format.h"
#include "model/traced_time.h"

namespace pgwaitprof::exporters::report_detail {

using text_format::html_escape;
using text_format::markdown_escape;
using text_format::markdown_row;
using text_format::pad_right;
using text_format::swatch;

namespace {

double time_s(const model::ProfileRow& row) { return static_cast<double>(row.stat.count) * 1e-6; }

const model::TracedTime& traced_of(const model::ProfileRow& row) {
  static const model::TracedTime kNone;
  return row.traced ? *row.traced : kNone;
}

// The cells every format shows after the label: share, AAS, mean, p50, p99, max, run queue.
std::vector<std::string> duration_cells(const model::ProfileRow& row) {
  const auto& traced = traced_of(row);
  return {percent(row.stat.share),
          fmt::format("{:.2f}", row.stat.aas),
          duration_text(traced.mean_s()),
          duration_text(traced.percentile_s(0.5)),
          duration_text(traced.percentile_s(0.99)),
          duration_text(traced.longest_s()),
          fmt::format("{:.3f}", traced.runqueue_s)};
}

// Where x falls on the logarithmic duration axis [low, high], from 0 to 1.
double log_position(double seconds, double low, double high) {
  return (std::log10(seconds) - std::log10(low)) / (std::log10(high) - std::log10(low));
}

// The drawn bounds of bucket `index`: the first from a tenth of its upper bound, the last (open
// above) to a quarter more than its lower bound.
std::pair<double, double> drawn_bucket(int index) {
  const double upper = model::traced_bucket_upper_s(index);
  const double lower = model::traced_bucket_lower_s(index);
  if (index == 0) return {upper / 10, upper};
  if (std::isinf(upper)) return {lower, lower * 1.25};
  return {lower, upper};
}

constexpr double kPanelWidth = 540, kPanelHeight = 150, kLeft = 44, kRight = 528, kTop = 26,
                 kBottom = 118;

std::string duration_axis(double low, double high) {
  static constexpr std::pair<double, const char*> kTicks[] = {
      {1e-6, "1us"},   {1e-5, "10us"}, {1e-4, "100us"}, {1e-3, "1ms"}, {1e-2, "10ms"},
      {1e-1, "100ms"}, {1, "1s"},      {10, "10s"},     {100, "100s"}};
  std::string svg =
      fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#9aa1ad\"/>\n", kLeft,
                  kRight, kBottom, kBottom);
  for (const auto& [at, name] : kTicks) {
    if (at < low || at > high) continue;
    const double x = kLeft + log_position(at, low, high) * (kRight - kLeft);
    svg += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" stroke=\"#eceef2\"/>"
        "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
        x, x, kTop, kBottom, x, kBottom + 14, name);
  }
  return svg;
}

// One wait event's histogram: a bar per bucket that holds waits, p50 and p99 as lines.
std::string duration_panel(const model::ProfileRow& row) {
  const auto& traced = traced_of(row);
  const auto& histogram = traced.histogram;
  int first = model::kTracedBuckets, last = -1;
  uint64_t most = 0;
  for (int index = 0; index < model::kTracedBuckets; ++index) {
    if (histogram[index] == 0) continue;
    first = std::min(first, index);
    last = index;
    most = std::max(most, histogram[index]);
  }
  const double low = std::pow(10, std::floor(std::log10(drawn_bucket(first).first)));
  const double high = std::pow(10, std::ceil(std::log10(drawn_bucket(last).second)));
  std::string svg = fmt::format(
      "<svg viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"wait durations of {}\">\n"
      "<text x=\"{}\" y=\"14\" class=\"axis-title\">{}: {} waits, p50 {}, p99 {}, max "
      "{}</text>\n",
      kPanelWidth, kPanelHeight, html_escape(row.label), kLeft, html_escape(row.label),
      traced.waits, duration_text(traced.percentile_s(0.5)),
      duration_text(traced.percentile_s(0.99)), duration_text(traced.longest_s()));
  svg += duration_axis(low, high);
  const auto colour = text_format::wait_class_colour(row.wait_class);
  for (int index = first; index <= last; ++index) {
    if (histogram[index] == 0) continue;
    const auto [from, to] = drawn_bucket(index);
    const double x0 = kLeft + log_position(from, low, high) * (kRight - kLeft);
    const double x1 = kLeft + log_position(to, low, high) * (kRight - kLeft);
    const double height =
        static_cast<double>(histogram[index]) / static_cast<double>(most) * (kBottom - kTop);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
        "<title>{} to {}: {} waits</title></rect>\n",
        x0, kBottom - height, std::max(0.8, x1 - x0 - 0.4), height, colour,
        duration_text(model::traced_bucket_lower_s(index)),
        std::isinf(model::traced_bucket_upper_s(index))
            ? std::string("longer")
            : duration_text(model::traced_bucket_upper_s(index)),
        histogram[index]);
  }
  for (const auto& [fraction, name] : {std::pair{0.5, "p50"}, std::pair{0.99, "p99"}}) {
    const double at = traced.percentile_s(fraction);
    if (!(at > 0)) continue;
    const double x = kLeft + log_position(std::clamp(at, low, high), low, high) * (kRight - kLeft);
    svg += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\" stroke=\"#1f2430\" "
        "stroke-dasharray=\"3 2\"/><text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
        x, x, kTop - 4, kBottom, x, kTop - 6, name);
  }
  return svg + "</svg>\n";
}

}  // namespace

std::string duration_text(double seconds) {
  if (!(seconds > 0)) return "-";
  if (seconds < 1e-3) return fmt::format("{:.0f}us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.2f}ms", seconds * 1e3);
  return fmt::format("{:.3f}s", seconds);
}

std::string amount_text(const model::Run& run, uint64_t count) {
  if (!run.profile.exact()) return fmt::format("{}", count);
  return fmt::format("{:.3f}", static_cast<double>(count) * 1e-6);
}

std::string amount_header(const model::Run& run) {
  return run.profile.exact() ? "time s" : "count";
}

std::string idle_amount(const model::Run& run, const model::ProfileTable& table) {
  return fmt::format("{} {}, {:.2f} sessions on average", amount_text(run, table.idle_total),
                     run.profile.exact() ? "s" : "samples", table.idle_aas());
}

std::string traced_table_note() {
  return "traced: waits, time, run queue, mean and max are exact; on-CPU time by wait event is "
         "sampled in the kernel; p50 and p99 from log-linear buckets, 4 per power of two; a "
         "wait is a blocking one, ended by a wake-up";
}

std::vector<std::string> traced_text_table(const model::ProfileTable& table,
                                           const std::vector<std::string>& labels, size_t width) {
  std::vector<std::string> lines{"(" + traced_table_note() + ")"};
  lines.push_back(fmt::format(
      "  {:>9}  {:>10}  {}  {:>6}  {:>7}  {:>8}  {:>8}  {:>8}  {:>8}  {:>9}", "waits", "time s",
      pad_right(table.dimension, width), "share", "AAS", "mean", "p50", "p99", "max", "run queue"));
  for (size_t index = 0; index < table.rows.size(); ++index) {
    const auto& row = table.rows[index];
    const auto cells = duration_cells(row);
    lines.push_back(
        fmt::format("  {:>9}  {:>10.3f}  {}  {:>6}  {:>7}  {:>8}  {:>8}  {:>8}  {:>8}  {:>9}",
                    traced_of(row).waits, time_s(row), pad_right(labels[index], width), cells[0],
                    cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]));
  }
  lines.push_back(fmt::format("  {:>9}  {:>10.3f}  {}  {:>6}  {:>7.2f}", "",
                              static_cast<double>(table.total) * 1e-6, pad_right("total", width),
                              table.total > 0 ? "100.0%" : "-", table.total_aas()));
  return lines;
}

std::string traced_markdown_table(const model::ProfileTable& table) {
  std::string out = markdown_escape(traced_table_note()) + ".\n\n";
  out += markdown_row({"waits", "time s", markdown_escape(table.dimension), "share", "AAS", "mean",
                       "p50", "p99", "max", "run queue s"});
  out += "|---:|---:|:---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& row : table.rows) {
    std::vector<std::string> cells{fmt::format("{}", traced_of(row).waits),
                                   fmt::format("{:.3f}", time_s(row)), markdown_escape(row.label)};
    for (auto& cell : duration_cells(row)) cells.push_back(std::move(cell));
    out += markdown_row(cells);
  }
  out += markdown_row({"", fmt::format("**{:.3f}**", static_cast<double>(table.total) * 1e-6),
                       "**total**", table.total > 0 ? "100.0%" : "-",
                       fmt::format("{:.2f}", table.total_aas()), "", "", "", "", ""});
  return out;
}

std::string traced_html_table(const model::ProfileTable& table) {
  std::string html = "<p class=\"note\">" + html_escape(traced_table_note()) +
                     ".</p>\n<table class=\"profile\">\n<thead><tr><th class=\"n\">waits</th>"
                     "<th class=\"n\">time s</th><th>" +
                     html_escape(table.dimension) +
                     "</th><th class=\"n\">share</th><th class=\"n\">AAS</th><th "
                     "class=\"n\">mean</th><th class=\"n\">p50</th><th class=\"n\">p99</th><th "
                     "class=\"n\">max</th><th class=\"n\">run queue s</th></tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    html += fmt::format("<tr{}><td class=\"n\">{}</td><td class=\"n\">{:.3f}</td><td>{}{}</td>",
                        row.other ? " class=\"other\"" : "", traced_of(row).waits, time_s(row),
                        swatch(row.wait_class), html_escape(row.label));
    for (const auto& cell : duration_cells(row)) {
      html += "<td class=\"n\">" + html_escape(cell) + "</td>";
    }
    html += "</tr>\n";
  }
  html += fmt::format(
      "<tr class=\"total\"><td></td><td class=\"n\">{:.3f}</td><td>total</td><td "
      "class=\"n\">{}</td><td class=\"n\">{:.2f}</td><td></td><td></td><td></td><td></td><td>"
      "</td></tr>\n</tbody></table>\n",
      static_cast<double>(table.total) * 1e-6, table.total > 0 ? "100.0%" : "-", table.total_aas());
  return html;
}

std::vector<std::string> traced_csv_columns() {
  return {"waits",  "time_s", "blocked_s", "runqueue_s", "on_cpu_s_sampled",
          "mean_s", "p50_s",  "p99_s",     "max_s"};
}

std::vector<std::string> traced_csv_fields(const model::ProfileRow& row) {
  if (!row.traced) return std::vector<std::string>(traced_csv_columns().size());
  const auto& traced = *row.traced;
  return {fmt::format("{}", traced.waits),
          fmt::format("{:.6f}", time_s(row)),
          fmt::format("{:.6f}", traced.blocked_s),
          fmt::format("{:.6f}", traced.runqueue_s),
          fmt::format("{:.6f}", traced.on_cpu_s),
          fmt::format("{:.9f}", traced.mean_s()),
          fmt::format("{:.9f}", traced.percentile_s(0.5)),
          fmt::format("{:.9f}", traced.percentile_s(0.99)),
          fmt::format("{:.9f}", traced.longest_s())};
}

std::string svg_wait_durations(const model::ProfileTable& table, size_t top) {
  std::vector<const model::ProfileRow*> rows;
  for (const auto& row : table.rows) {
    if (row.traced && row.traced->waits > 0 && !row.other) rows.push_back(&row);
  }
  if (rows.empty()) return "";
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->traced->blocked_s > b->traced->blocked_s;
  });
  if (rows.size() > top) rows.resize(top);
  std::string html = "<div class=\"durations\">\n";
  for (const auto* row : rows) html += duration_panel(*row);
  return html + "</div>\n";
}

}  // namespace pgwaitprof::exporters::report_detail
