// render_html: one self-contained page per run (inline CSS, inline SVG drawn here, a few lines
// of inline JS for tooltips): nothing is fetched, so the file can be mailed or attached as is.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>

#include "exporters/report_common.h"
#include "exporters/report_render.h"
#include "exporters/text_format.h"

namespace pgwaitprof::exporters {

using namespace report_detail;
using namespace text_format;

namespace {

// The wait classes in stacking order (bottom up); their colours are wait_class_colour()'s,
// shared with the matrix page. Anything else stacks as "other".
constexpr std::array<std::string_view, 11> kClassOrder = {
    "CPU", "LWLock", "Lock", "IO", "IPC", "Client", "Timeout", "BufferPin", "Extension", "Activity", "other"};

size_t class_index(std::string_view wait_class) {
  for (size_t index = 0; index + 1 < kClassOrder.size(); ++index) {
    if (kClassOrder[index] == wait_class) return index;
  }
  return kClassOrder.size() - 1;
}

std::string_view class_colour(std::string_view wait_class) { return wait_class_colour(wait_class); }

std::string swatch(std::string_view wait_class) {
  if (wait_class.empty()) return "";
  return fmt::format(R"(<span class="sw" style="background:{}"></span>)", class_colour(wait_class));
}

// Round axis steps (1, 2, 5 x 10^n) and the axis top they give for `max`.
struct Axis {
  double step = 1;
  double top = 1;
  std::vector<double> ticks;
};

Axis nice_axis(double max, int target_ticks) {
  if (!(max > 0) || !std::isfinite(max)) max = 1;
  const double raw = max / target_ticks;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  const double nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
  Axis axis;
  axis.step = nice * magnitude;
  axis.top = std::ceil(max / axis.step - 1e-9) * axis.step;
  for (int index = 0; index * axis.step <= axis.top + axis.step / 2; ++index) {
    axis.ticks.push_back(index * axis.step);
  }
  return axis;
}

// Seconds go in steps people count in: 1, 2, 5, 10, 15, 30 s, then minutes.
Axis time_axis(double span) {
  static constexpr std::array<double, 18> steps = {
      0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400};
  Axis axis;
  axis.step = steps.back();
  for (double step : steps) {
    if (span / step <= 10) {
      axis.step = step;
      break;
    }
  }
  axis.top = span;
  for (int index = 0; index * axis.step <= span + 1e-9; ++index) {
    // 0.1 * 3 is 0.30000000000000004: round so that labels read 0.3 s.
    axis.ticks.push_back(std::round(index * axis.step * 1000) / 1000);
  }
  return axis;
}

std::string time_label(double seconds, double step) {
  if (step >= 60 && std::fmod(step, 60) == 0) return fmt::format("{:g} min", seconds / 60);
  return fmt::format("{:g} s", seconds);
}

std::string tps_label(double tps) {
  if (tps >= 1000) return fmt::format("{:g}k", tps / 1000);
  return fmt::format("{:g}", tps);
}

std::string tooltip_attribute(const std::string& text) {
  return " data-tip=\"" + html_escape(text) + "\"";
}

// The main chart: AAS stacked by wait class over time, tps on a second axis, stalls shaded,
// background activity (av, ch, vac) as marks above the plot.
std::string svg_timeline(const model::Run& run, const std::vector<TimelineRow>& rows) {
  constexpr double kWidth = 1100;
  constexpr double kLeft = 62;
  constexpr double kRight = kWidth - 70;
  constexpr double kPlotHeight = 300;
  const double plot_width = kRight - kLeft;

  struct Lane {
    std::string name;
    std::string colour;
    bool (*on)(const model::Background&);
  };
  std::vector<Lane> lanes;
  const std::vector<Lane> all_lanes = {
      {"av", "#6b4c9a", [](const model::Background& b) { return b.autovacuum; }},
      {"ch", "#d9730d", [](const model::Background& b) { return b.checkpoint; }},
      {"vac", "#2b8a3e", [](const model::Background& b) { return b.manual_vacuum; }},
  };
  for (const auto& lane : all_lanes) {
    if (std::any_of(run.timeline.begin(), run.timeline.end(),
                    [&](const model::TimelineSlice& slice) { return lane.on(slice.background); })) {
      lanes.push_back(lane);
    }
  }
  const double plot_top = 14 + static_cast<double>(lanes.size()) * 15 + 6;
  const double plot_bottom = plot_top + kPlotHeight;
  const double height = plot_bottom + 48;

  const double t0 = rows.front().start_s;
  double t1 = t0;
  for (const auto& row : rows) t1 = std::max(t1, row.start_s + row.duration_s);
  if (t1 <= t0) t1 = t0 + 1;
  auto x_of = [&](double t) { return kLeft + (t - t0) / (t1 - t0) * plot_width; };

  // Which chart classes occur at all, and each interval's AAS per chart class.
  std::vector<std::array<double, kClassOrder.size()>> stacks(rows.size());
  std::array<bool, kClassOrder.size()> present{};
  double max_aas = 0;
  double max_tps = 0;
  bool any_tps = false;
  for (size_t index = 0; index < rows.size(); ++index) {
    for (const auto& [wait_class, aas] : rows[index].aas_by_type) {
      stacks[index][class_index(wait_class)] += aas;
      if (aas > 0) present[class_index(wait_class)] = true;
    }
    max_aas = std::max(max_aas, rows[index].aas_total);
    if (rows[index].loadgen && std::isfinite(rows[index].loadgen->tps)) {
      max_tps = std::max(max_tps, rows[index].loadgen->tps);
      any_tps = true;
    }
  }
  const Axis aas_axis = nice_axis(max_aas, 5);
  const Axis tps_axis = nice_axis(max_tps, 5);
  const Axis x_axis = time_axis(t1 - t0);
  auto y_aas = [&](double aas) { return plot_bottom - aas / aas_axis.top * kPlotHeight; };
  auto y_tps = [&](double tps) { return plot_bottom - tps / tps_axis.top * kPlotHeight; };

  std::string svg = fmt::format(
      "<svg viewBox=\"0 0 {:.0f} {:.0f}\" role=\"img\" aria-label=\"average active sessions by "
      "wait class and tps over time\">\n",
      kWidth, height);
  svg += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#fff\" "
      "stroke=\"#d5d9e0\"/>\n",
      kLeft, plot_top, plot_width, kPlotHeight);
  for (double tick : aas_axis.ticks) {
    const double y = y_aas(tick);
    if (tick > 0) {
      svg += fmt::format(
          "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eceef2\"/>\n",
          kLeft, kRight, y, y);
    }
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{:g}"
        "</text>\n",
        kLeft - 6, y, tick);
  }

  for (const auto& stall : run.stalls) {
    const double x = x_of(stall.start_s);
    const double width = std::max(2.0, x_of(stall.start_s + stall.duration_s) - x);
    svg += fmt::format(
        "<rect class=\"stall\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>\n", x,
        plot_top, width, kPlotHeight);
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"stall-label\">stall"
        "</text>\n",
        x + width / 2, plot_top + 13);
  }

  // Points at interval midpoints, plus the run's two edges so the areas span the whole axis.
  std::vector<double> xs;
  std::vector<size_t> source;
  xs.push_back(x_of(rows.front().start_s));
  source.push_back(0);
  for (size_t index = 0; index < rows.size(); ++index) {
    xs.push_back(x_of(rows[index].start_s + rows[index].duration_s / 2));
    source.push_back(index);
  }
  xs.push_back(x_of(rows.back().start_s + rows.back().duration_s));
  source.push_back(rows.size() - 1);

  std::vector<double> lower(xs.size(), 0);
  for (size_t wait_class = 0; wait_class < kClassOrder.size(); ++wait_class) {
    if (!present[wait_class]) continue;
    std::string points;
    std::vector<double> upper(xs.size());
    for (size_t point = 0; point < xs.size(); ++point) {
      upper[point] = lower[point] + stacks[source[point]][wait_class];
      points += fmt::format("{:.1f},{:.1f} ", xs[point], y_aas(upper[point]));
    }
    for (size_t point = xs.size(); point-- > 0;) {
      points += fmt::format("{:.1f},{:.1f} ", xs[point], y_aas(lower[point]));
    }
    points.pop_back();
    svg += fmt::format("<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.85\"/>\n", points,
                       class_colour(kClassOrder[wait_class]));
    lower = std::move(upper);
  }

  if (any_tps) {
    std::string path;
    bool drawing = false;
    std::string dots;
    for (const auto& row : rows) {
      const bool has = row.loadgen && std::isfinite(row.loadgen->tps);
      if (!has) {
        drawing = false;
        continue;
      }
      const double x = x_of(row.start_s + row.duration_s / 2);
      const double y = y_tps(row.loadgen->tps);
      path += fmt::format("{}{:.1f} {:.1f} ", drawing ? "L" : "M", x, y);
      drawing = true;
      if (rows.size() <= 120) {
        dots += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2.5"/>)", x, y);
      }
    }
    svg +=
        fmt::format("<path class=\"tps\" d=\"{}\"/>\n<g class=\"tps-dots\">{}</g>\n", path, dots);
    for (double tick : tps_axis.ticks) {
      svg += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.1f}\" dominant-baseline=\"middle\" class=\"tps-tick\">{}"
          "</text>\n",
          kRight + 6, y_tps(tick), tps_label(tick));
    }
    svg += fmt::format(
        "<text transform=\"translate({:.1f},{:.1f}) rotate(90)\" text-anchor=\"middle\" "
        "class=\"axis-title\">tps</text>\n",
        kWidth - 12, plot_top + kPlotHeight / 2);
  }

  for (double tick : x_axis.ticks) {
    const double x = x_of(t0 + tick);
    svg += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#9aa1ad\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
        x, x, plot_bottom, plot_bottom + 5, x, plot_bottom + 18,
        time_label(t0 + tick, x_axis.step));
  }
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"axis-title\">time since "
      "start (s)</text>\n",
      kLeft + plot_width / 2, plot_bottom + 40);
  svg += fmt::format(
      "<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\" text-anchor=\"middle\" "
      "class=\"axis-title\">average active sessions</text>\n",
      16.0, plot_top + kPlotHeight / 2);

  for (size_t lane = 0; lane < lanes.size(); ++lane) {
    const double y = 14 + static_cast<double>(lane) * 15;
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\" "
        "class=\"lane\">{}</text>\n",
        kLeft - 6, y + 5, lanes[lane].name);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"10\" fill=\"#f1f3f6\"/>\n",
        kLeft, y, plot_width);
    // One mark per run of consecutive intervals: abutting rectangles show hairline seams.
    std::optional<double> mark_start;
    double mark_end = 0;
    auto draw_mark = [&] {
      if (!mark_start) return;
      const double x = x_of(*mark_start);
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"10\" fill=\"{}\"/>\n", x, y,
          std::max(1.0, x_of(mark_end) - x), lanes[lane].colour);
      mark_start.reset();
    };
    for (const auto& slice : run.timeline) {
      if (!lanes[lane].on(slice.background)) {
        draw_mark();
        continue;
      }
      if (!mark_start) mark_start = slice.start_s;
      mark_end = slice.start_s + slice.duration_s;
    }
    draw_mark();
  }

  // Hover targets last, so they sit above everything else.
  svg += "<g class=\"hover\">\n";
  for (const auto& row : rows) {
    std::string tip = fmt::format("{}–{} s", format_seconds(row.start_s),
                                  format_seconds(row.start_s + row.duration_s));
    if (row.loadgen) {
      tip += fmt::format("\n{} tps, latency {} ms", format_optional(row.loadgen->tps, 1),
                         std::isfinite(row.loadgen->latency_avg_ms)
                             ? fmt::format("{:.3f}", row.loadgen->latency_avg_ms)
                             : std::string("-nan"));
    }
    tip += fmt::format("\nAAS {:.2f}", row.aas_total);
    auto by_type = row.aas_by_type;
    std::sort(by_type.begin(), by_type.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [wait_class, aas] : by_type) {
      if (aas >= 0.005) tip += fmt::format("\n  {:<9} {:6.2f}", wait_class, aas);
    }
    if (!row.dominant_wait.empty()) tip += "\ndominant: " + row.dominant_wait;
    if (!row.background.empty()) tip += "\nbackground: " + row.background;
    if (row.stalled) tip += "\nSTALL";
    const double x = x_of(row.start_s);
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"{}/>\n",
                       x, plot_top, std::max(1.0, x_of(row.start_s + row.duration_s) - x),
                       kPlotHeight, tooltip_attribute(tip));
  }
  svg += "</g>\n</svg>\n";

  std::string legend = "<div class=\"legend\">";
  for (size_t wait_class = 0; wait_class < kClassOrder.size(); ++wait_class) {
    if (!present[wait_class]) continue;
    legend += fmt::format("<span>{}{}</span>", swatch(kClassOrder[wait_class]),
                          kClassOrder[wait_class]);
  }
  if (any_tps) legend += "<span><span class=\"line-sw\"></span>tps (right axis)</span>";
  if (!run.stalls.empty()) legend += "<span><span class=\"sw stall-sw\"></span>stall</span>";
  for (const auto& lane : lanes) {
    const char* meaning = lane.name == "av"   ? "autovacuum"
                          : lane.name == "ch" ? "checkpoint"
                                              : "manual VACUUM";
    legend += fmt::format(R"(<span><span class="sw" style="background:{}"></span>{} = {}</span>)",
                          lane.colour, lane.name, meaning);
  }
  legend += "</div>\n";
  return svg + legend;
}

// The largest waits as horizontal bars of their share, with 95% intervals (±1.96 SE).
std::string svg_top_waits(const model::Run& run, const RenderOptions& options) {
  RenderOptions all = options;
  all.by = GroupBy::kWaitEvent;
  all.top = 0;
  const ProfileTable table = profile_table(run, all, false);
  std::vector<ProfileRow> rows(table.rows.rbegin(), table.rows.rend());
  constexpr size_t kBars = 15;
  const size_t hidden = rows.size() > kBars ? rows.size() - kBars : 0;
  if (rows.size() > kBars) rows.resize(kBars);
  if (rows.empty()) return "<p>No samples.</p>\n";

  constexpr double kWidth = 1100;
  constexpr double kRowHeight = 24;
  size_t longest = 0;
  for (const auto& row : rows) longest = std::max(longest, row.label.size());
  const double label_width = std::clamp(static_cast<double>(longest) * 7.0 + 18, 120.0, 380.0);
  const double left = label_width;
  const double right = kWidth - 170;
  const double top = 6;
  const double bottom = top + static_cast<double>(rows.size()) * kRowHeight;
  const double height = bottom + 40;

  double max_share = 0;
  for (const auto& row : rows) {
    max_share = std::max(max_share, 100 * (row.stat.share + 1.96 * row.stat.share_stderr));
  }
  // A share is at most 100%, whatever the normal approximation of its interval says.
  const Axis axis = nice_axis(std::min(max_share, 100.0), 5);
  auto x_of = [&](double pct) { return left + pct / axis.top * (right - left); };

  std::string svg = fmt::format(
      "<svg viewBox=\"0 0 {:.0f} {:.0f}\" role=\"img\" aria-label=\"top wait events by share\">\n",
      kWidth, height);
  for (double tick : axis.ticks) {
    const double x = x_of(tick);
    svg += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}%</text>\n",
        x, x, top, bottom, tick == 0 ? "#9aa1ad" : "#eceef2", x, bottom + 16, tick);
  }
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"axis-title\">share of "
      "{} samples (error bars: 95% interval)</text>\n",
      (left + right) / 2, bottom + 34, options.include_idle ? "all" : "non-idle");
  for (size_t index = 0; index < rows.size(); ++index) {
    const auto& row = rows[index];
    const double y = top + static_cast<double>(index) * kRowHeight;
    const double mid = y + kRowHeight / 2;
    const double share = 100 * row.stat.share;
    const double error = 100 * 1.96 * row.stat.share_stderr;
    const double low = x_of(std::max(0.0, share - error));
    const double high = x_of(std::min(100.0, share + error));
    const std::string tip =
        fmt::format("{}\n{} samples, {:.2f}% ± {:.2f}\nAAS {:.2f} ± {:.2f}", row.label,
                    row.stat.count, share, error / 1.96, row.stat.aas, row.stat.aas_stderr);
    svg += fmt::format("<g{}>", tooltip_attribute(tip));
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}"
        "</text>",
        left - 8, mid, html_escape(row.label));
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"15\" fill=\"{}\" "
        "fill-opacity=\"0.85\"/>",
        left, mid - 7.5, std::max(0.5, x_of(share) - left), class_colour(row.wait_class));
    svg += fmt::format(
        "<path class=\"err\" d=\"M{0:.1f} {1:.1f}H{2:.1f}M{0:.1f} {3:.1f}V{4:.1f}M{2:.1f} "
        "{3:.1f}V{4:.1f}\"/>",
        low, mid, high, mid - 4, mid + 4);
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" dominant-baseline=\"middle\" class=\"value\">{:.1f}% · "
        "{:.2f} AAS</text></g>\n",
        high + 8, mid, share, row.stat.aas);
  }
  svg += "</svg>\n";
  if (hidden > 0) {
    svg += fmt::format(
        "<p class=\"note\">{} smaller wait events not drawn; all are in the table."
        "</p>\n",
        hidden);
  }
  return svg;
}

std::string html_profile_table(const model::Run& run, const RenderOptions& options) {
  const ProfileTable table = profile_table(run, options, false);
  std::string html = "<table class=\"profile\">\n<thead><tr><th class=\"n\">count</th><th>" +
                     html_escape(table.dimension) +
                     "</th><th class=\"n\">share</th><th class=\"n\">AAS</th><th class=\"n\">± "
                     "err</th></tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    html += fmt::format(
        "<tr{}><td class=\"n\">{}</td><td>{}{}</td><td class=\"n\">{:.1f}%</td><td "
        "class=\"n\">{:.2f}</td><td class=\"n\">{:.2f}</td></tr>\n",
        row.other ? " class=\"other\"" : "", row.stat.count, swatch(row.wait_class),
        html_escape(row.label), 100 * row.stat.share, row.stat.aas, row.stat.aas_stderr);
  }
  html += fmt::format(
      "<tr class=\"total\"><td class=\"n\">{}</td><td>total</td><td class=\"n\">{}</td><td "
      "class=\"n\">{:.2f}</td><td></td></tr>\n</tbody></table>\n",
      table.total, table.total > 0 ? "100.0%" : "-",
      table.snapshots > 0 ? static_cast<double>(table.total) / static_cast<double>(table.snapshots)
                          : 0.0);
  std::string intro = fmt::format("{} samples in {} snapshots", table.total, table.snapshots);
  if (options.by != GroupBy::kQueryId) {
    intro += options.include_idle ? ", idle sessions included" : ", idle sessions not counted";
  }
  intro +=
      "; ascending, as posted to pgsql-hackers. AAS = average active sessions, ± one "
      "standard error.";
  if (!table.note.empty()) intro += " Note: " + table.note + ".";
  html = "<p class=\"note\">" + html_escape(intro) + "</p>\n<div class=\"tables\"><div>\n" + html +
         "</div>\n";

  if (!table.idle.empty()) {
    html += fmt::format(
        "<div><h3>Idle (not in shares): {} samples, {:.2f} sessions on average</h3>\n<table "
        "class=\"idle\"><thead><tr><th class=\"n\">count</th><th>idle wait (backend type)</th><th "
        "class=\"n\">AAS</th></tr></thead><tbody>\n",
        table.idle_total,
        table.snapshots > 0
            ? static_cast<double>(table.idle_total) / static_cast<double>(table.snapshots)
            : 0.0);
    for (const auto& row : table.idle) {
      html +=
          fmt::format("<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.2f}</td></tr>\n",
                      row.stat.count, html_escape(row.label), row.stat.aas);
    }
    html += "</tbody></table></div>\n";
  }
  return html + "</div>\n";
}

std::string html_timeline_table(const std::vector<TimelineRow>& rows) {
  std::string html =
      "<table class=\"timeline\"><thead><tr><th class=\"n\">t s</th><th class=\"n\">tps</th><th "
      "class=\"n\">lat ms</th><th class=\"n\">stddev</th><th class=\"n\">fail</th>";
  for (const auto& wait_class : kTimelineClasses) {
    html += fmt::format("<th class=\"n\">{}{}</th>", swatch(wait_class), wait_class);
  }
  html +=
      "<th>dominant wait</th><th class=\"n\">usr%</th><th class=\"n\">sys%</th><th "
      "class=\"n\">iow%</th><th class=\"n\">idle%</th><th class=\"n\">lg cores</th><th>bg</th>"
      "</tr></thead>\n<tbody>\n";
  auto cell = [](const std::string& text) {
    return "<td class=\"n\">" + (text.empty() ? std::string("-") : text) + "</td>";
  };
  for (const auto& row : rows) {
    html += row.stalled ? "<tr class=\"stall\">" : "<tr>";
    html += cell(format_seconds(row.start_s));
    if (row.loadgen) {
      html += cell(format_optional(row.loadgen->tps, 1));
      html += cell(format_optional(row.loadgen->latency_avg_ms, 3));
      html += cell(format_optional(row.loadgen->latency_stddev_ms, 3));
      html += cell(fmt::format("{}", row.loadgen->failed));
    } else {
      html += cell("") + cell("") + cell("") + cell("");
    }
    for (double aas : row.aas) html += cell(fmt::format("{:.2f}", aas));
    html += "<td>" + html_escape(row.dominant_wait) + "</td>";
    if (row.cpu) {
      html += cell(fmt::format("{:.1f}", row.cpu->user_pct)) +
              cell(fmt::format("{:.1f}", row.cpu->system_pct)) +
              cell(fmt::format("{:.1f}", row.cpu->iowait_pct)) +
              cell(fmt::format("{:.1f}", row.cpu->idle_pct)) +
              cell(fmt::format("{:.2f}", row.cpu->loadgen_cores));
    } else {
      html += cell("") + cell("") + cell("") + cell("") + cell("");
    }
    html += "<td>" + html_escape(row.background) + (row.stalled ? " <b>stall</b>" : "") +
            "</td></tr>\n";
  }
  return html + "</tbody></table>\n";
}

std::string fact_rows(const std::vector<std::pair<std::string, std::string>>& facts,
                      bool code_values = false) {
  std::string html;
  for (const auto& [key, value] : facts) {
    html += "<tr><th>" + html_escape(key) + "</th><td>" +
            (code_values ? "<code>" + html_escape(value) + "</code>" : html_escape(value)) +
            "</td></tr>\n";
  }
  return html;
}

std::string card(const std::string& key, const std::string& value, const std::string& detail) {
  return R"(<div class="card"><div class="k">)" + html_escape(key) + R"(</div><div class="v">)" +
         html_escape(value) + "</div><div class=\"d\">" + html_escape(detail) + "</div></div>\n";
}

constexpr std::string_view kStyle = R"css(
:root{--fg:#1d2330;--muted:#5b6475;--line:#e3e6ec}
*{box-sizing:border-box}
body{margin:0;background:#f5f6f8;color:var(--fg);
 font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1200px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:22px;margin:0 0 2px}
h1 .id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:15px;
 color:var(--muted);font-weight:500;margin-left:8px}
h2{font-size:16px;margin:26px 0 8px}
h3{font-size:14px;margin:0 0 6px}
.tables{display:flex;flex-wrap:wrap;gap:16px 32px;align-items:flex-start}
.tables table.idle{font-size:12.5px}
.banner+h3{margin-top:10px}
.sub{color:var(--muted)}
.status{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;
 background:#def7ec;color:#03543f;margin-left:6px}
.banner{padding:10px 14px;border-radius:6px;font-weight:600;margin:12px 0;white-space:pre-wrap}
.banner.failed{background:#fde8e8;border:1px solid #e02424;color:#9b1c1c}
.banner.interrupted{background:#fef3c7;border:1px solid #d97706;color:#92400e}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:12px;margin:16px 0}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 14px}
.card .k{color:var(--muted);font-size:11.5px;text-transform:uppercase;letter-spacing:.05em}
.card .v{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums;white-space:nowrap}
.card .d{color:var(--muted);font-size:12px}
.panel{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 16px;
 overflow-x:auto}
svg{display:block;width:100%;height:auto;font-family:inherit}
svg text{font-size:12px;fill:#3b4252}
svg .axis-title{fill:var(--muted)}
svg .lane{font-weight:600}
svg .stall{fill:#e02424;fill-opacity:.12}
svg .stall-label{fill:#b42318;font-weight:600}
svg .tps{fill:none;stroke:#111827;stroke-width:2;stroke-linejoin:round}
svg .tps-dots circle{fill:#111827}
svg .tps-tick{fill:#111827}
svg .err{stroke:#111827;stroke-width:1.3;fill:none}
svg .value{fill:#3b4252}
svg .hover rect{fill:transparent}
svg .hover rect:hover{fill:#1118270f;stroke:#11182740}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:8px 0 2px 62px;font-size:12.5px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px}
.stall-sw{background:#e024241f;border:1px solid #e0242466}
.line-sw{display:inline-block;width:16px;height:0;border-top:2px solid #111827;margin-right:5px;
 vertical-align:middle}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}
thead th{font-weight:600;color:var(--muted);font-size:12.5px;border-bottom:1px solid #c9ced8}
.n{text-align:right}
tr.total td{font-weight:600;border-top:1px solid #c9ced8}
tr.other td{color:var(--muted);font-style:italic}
tr.stall td{background:#fdecec}
table.facts th{color:var(--muted);font-weight:500;width:1%}
table.facts td{white-space:normal}
.note{color:var(--muted);font-size:12.5px;margin:4px 0 8px}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:#1f2430;color:#e8e8e8;padding:10px 12px;border-radius:6px;overflow:auto}
ul.warnings li{color:#92400e}
details summary{cursor:pointer;font-weight:600;margin:6px 0}
#tip{position:absolute;display:none;pointer-events:none;background:#141821eb;color:#fff;
 padding:6px 9px;border-radius:5px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;
 white-space:pre;z-index:10}
)css";

constexpr std::string_view kScript = R"js(
(function () {
  var tip = document.getElementById('tip');
  document.querySelectorAll('[data-tip]').forEach(function (el) {
    el.addEventListener('mousemove', function (e) {
      tip.textContent = el.getAttribute('data-tip');
      tip.style.display = 'block';
      var x = e.pageX + 14;
      if (x + tip.offsetWidth > document.documentElement.scrollWidth) x = e.pageX - tip.offsetWidth - 14;
      tip.style.left = x + 'px';
      tip.style.top = (e.pageY + 14) + 'px';
    });
    el.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  });
})();
)js";

}  // namespace

std::string render_html(const model::Run& run, const RenderOptions& options) {
  const auto rows = timeline_rows(run);
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" +
          html_escape(fmt::format("pgwaitprof: {}{}", run.label.empty() ? run.id : run.label,
                                  run.status == "completed" ? "" : " (" + run.status + ")")) +
          "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n<main>\n";

  html += "<h1>" + html_escape(run.label.empty() ? run.workload : run.label) +
          "<span class=\"id\">" + html_escape(run.id) + "</span>";
  if (run.status == "completed") html += "<span class=\"status\">completed</span>";
  html += "</h1>\n";
  std::string subtitle = run.workload;
  if (run.clients > 0) subtitle += fmt::format(", {} clients", run.clients);
  subtitle += fmt::format(", {:.1f} s, started {}", run.duration_s, run.started_at);
  html += "<div class=\"sub\">" + html_escape(subtitle) + "</div>\n";
  if (const auto banner = status_banner(run); !banner.empty()) {
    html += fmt::format("<div class=\"banner {}\">{}</div>\n",
                        run.status == "failed" ? "failed" : "interrupted", html_escape(banner));
    // Why it failed is the first thing to read: the load generator's own words go up here.
    if (!run.loadgen_stderr.empty()) {
      html +=
          "<h3>load generator stderr</h3>\n<pre>" + html_escape(run.loadgen_stderr) + "</pre>\n";
    }
  }

  html += "<div class=\"cards\">\n";
  if (run.loadgen) {
    html += card(
        "throughput", fmt::format("{:.1f} tps", run.loadgen->tps),
        fmt::format("{} transactions, {} failed", run.loadgen->transactions, run.loadgen->failed));
    html += card("latency", fmt::format("{:.3f} ms", run.loadgen->latency_avg_ms),
                 run.loadgen->latency_stddev_ms
                     ? fmt::format("average; stddev {:.3f} ms", *run.loadgen->latency_stddev_ms)
                     : std::string("average"));
  } else if (const auto mean = timeline_mean_tps(run)) {
    html += card("throughput", fmt::format("{:.1f} tps", *mean), "mean of intervals; no summary");
  } else {
    html += card("throughput", "–", "no load generator summary");
  }
  const uint64_t non_idle = run.profile.total(false);
  html += card("active sessions",
               run.profile.snapshots() > 0
                   ? fmt::format("{:.2f}", static_cast<double>(non_idle) /
                                               static_cast<double>(run.profile.snapshots()))
                   : std::string("–"),
               run.clients > 0 ? fmt::format("AAS, non-idle; {} clients", run.clients)
                               : std::string("AAS, non-idle"));
  html += card("sampling", fmt::format("{:.1f} Hz", run.sampler.achieved_hz),
               fmt::format("of {:g} Hz; {} snapshots, {} missed", run.sampler.hz,
                           run.sampler.snapshots, run.sampler.missed_ticks));
  html += card("stalls", fmt::format("{}", run.stalls.size()),
               run.stalls.empty() ? std::string("no interval below 20% of median tps")
                                  : run.stalls.front().summary());
  html += "</div>\n";

  if (!rows.empty()) {
    html +=
        "<h2>Average active sessions by wait class, and throughput</h2>\n<div class=\"panel\">\n" +
        svg_timeline(run, rows) + "</div>\n";
  }
  html += "<h2>Top wait events</h2>\n<div class=\"panel\">\n" + svg_top_waits(run, options) +
          "</div>\n";
  html += "<h2>Wait event profile</h2>\n<div class=\"panel\">\n" +
          html_profile_table(run, options) + "</div>\n";

  if (!run.stalls.empty()) {
    html += "<h2>Stalls</h2>\n<ul>\n";
    for (const auto& stall : run.stalls) html += "<li>" + html_escape(stall.summary()) + "</li>\n";
    html += "</ul>\n";
  }
  if (!run.warnings.empty()) {
    html += "<h2>Warnings</h2>\n<ul class=\"warnings\">\n";
    for (const auto& warning : run.warnings) html += "<li>" + html_escape(warning) + "</li>\n";
    html += "</ul>\n";
  }

  html += "<h2>Load generator</h2>\n";
  if (run.loadgen) {
    std::string summary;
    for (const auto& line : loadgen_summary_lines(*run.loadgen)) summary += line + "\n";
    html += "<pre>" + html_escape(summary) + "</pre>\n";
  } else {
    html += fmt::format("<p>No summary (exit code {}).</p>\n", run.loadgen_exit_code);
  }
  if (!run.loadgen_stderr.empty() && run.status == "completed") {
    html += "<h3>stderr</h3>\n<pre>" + html_escape(run.loadgen_stderr) + "</pre>\n";
  }

  if (!rows.empty()) {
    html += fmt::format(
        "<details>\n<summary>Timeline: {} interval{} of {} s</summary>\n<div class=\"panel\">\n",
        rows.size(), rows.size() == 1 ? "" : "s", format_seconds(run.interval_s));
    html += html_timeline_table(rows) + "</div>\n</details>\n";
  }

  html += "<h2>Run</h2>\n<div class=\"panel\"><table class=\"facts\">\n";
  std::vector<std::pair<std::string, std::string>> facts = {
      {"id", run.id},
      {"status", run.status},
      {"target", run.target},
      {"workload", run.workload},
  };
  if (!run.variant.empty()) facts.emplace_back("variant", run.variant);
  if (run.repeat > 0) facts.emplace_back("repeat", fmt::format("{}", run.repeat));
  html += fact_rows(facts);
  html += fact_rows({{"command", shell_join(run.loadgen_argv)}}, true);
  html += fact_rows({{"exit code", fmt::format("{}", run.loadgen_exit_code)},
                     {"started", run.started_at},
                     {"ended", run.ended_at},
                     {"duration", fmt::format("{:.3f} s", run.duration_s)},
                     {"sampler", sampler_line(run.sampler)}});
  html += "</table></div>\n";

  const auto& env = run.environment;
  html += "<h2>Environment</h2>\n<div class=\"panel\"><table class=\"facts\">\n";
  std::vector<std::pair<std::string, std::string>> env_facts;
  if (!env.server_version.empty()) env_facts.emplace_back("server", env.server_version);
  if (env.data_checksums) env_facts.emplace_back("checksums", *env.data_checksums ? "on" : "off");
  if (!env.hostname.empty()) env_facts.emplace_back("host", env.hostname);
  if (!env.kernel.empty()) env_facts.emplace_back("kernel", env.kernel);
  if (env.cpu_count > 0)
    env_facts.emplace_back("cpu", fmt::format("{} x {}", env.cpu_count, env.cpu_model));
  if (env.memory_bytes > 0) env_facts.emplace_back("memory", format_bytes(env.memory_bytes));
  html += fact_rows(env_facts) + "</table>\n";
  if (!env.settings.empty()) {
    html +=
        "<h3>Non-default settings</h3>\n<table><thead><tr><th>name</th><th class=\"n\">value</th>"
        "<th>unit</th><th class=\"n\">as SHOW prints it</th><th>source</th></tr></thead><tbody>\n";
    for (const auto& setting : env.settings) {
      html += "<tr><td><code>" + html_escape(setting.name) + "</code></td><td class=\"n\">" +
              html_escape(setting.value) + "</td><td>" + html_escape(setting.unit) +
              "</td><td class=\"n\">" + html_escape(setting_show_value(setting)) + "</td><td>" +
              html_escape(setting.source) + "</td></tr>\n";
    }
    html += "</tbody></table>\n";
  }
  html += "</div>\n";

  html += "</main>\n<div id=\"tip\"></div>\n<script>" + std::string(kScript) +
          "</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace pgwaitprof::exporters
