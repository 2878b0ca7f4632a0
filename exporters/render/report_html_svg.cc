// The static SVG charts of the run report's HTML page: the timeline as drawn without JavaScript
// (the interactive one replaces it) and the top-waits bar chart with its error bars.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "exporters/render/report_html_charts.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters::report_detail {

namespace {

using text_format::html_escape;
using text_format::swatch;
using text_format::wait_class_colour;

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

// Where everything of the static timeline goes.
struct TimelineFrame {
  static constexpr double kWidth = 1100;
  static constexpr double kLeft = 62;
  static constexpr double kRight = kWidth - 70;
  static constexpr double kPlotHeight = 300;
  double plot_top = 0;
  double plot_bottom = 0;
  double height = 0;
  double t0 = 0;
  double t1 = 1;
  Axis aas_axis;

  double x_of(double t) const { return kLeft + (t - t0) / (t1 - t0) * (kRight - kLeft); }
  double y_of(double value, const Axis& axis) const {
    return plot_bottom - value / axis.top * kPlotHeight;
  }
};

TimelineFrame timeline_frame(const std::vector<TimelineRow>& rows, size_t lanes) {
  TimelineFrame frame;
  frame.plot_top = 14 + static_cast<double>(lanes) * 15 + 6;
  frame.plot_bottom = frame.plot_top + TimelineFrame::kPlotHeight;
  frame.height = frame.plot_bottom + 48;
  frame.t0 = rows.front().start.count();
  frame.t1 = frame.t0;
  double max_aas = 0;
  for (const auto& row : rows) {
    frame.t1 = std::max(frame.t1, row.start.count() + row.duration.count());
    max_aas = std::max(max_aas, row.aas_total);
  }
  if (frame.t1 <= frame.t0) frame.t1 = frame.t0 + 1;
  frame.aas_axis = nice_axis(max_aas, 5);
  return frame;
}

std::string svg_plot_and_aas_axis(const TimelineFrame& frame) {
  using F = TimelineFrame;
  std::string svg = fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#fff\" "
      "stroke=\"#d5d9e0\"/>\n",
      F::kLeft, frame.plot_top, F::kRight - F::kLeft, F::kPlotHeight);
  for (double tick : frame.aas_axis.ticks) {
    const double y = frame.y_of(tick, frame.aas_axis);
    if (tick > 0) {
      svg += fmt::format(
          "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eceef2\"/>\n",
          F::kLeft, F::kRight, y, y);
    }
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{:g}"
        "</text>\n",
        F::kLeft - 6, y, tick);
  }
  svg += fmt::format(
      "<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\" text-anchor=\"middle\" "
      "class=\"axis-title\">average active sessions</text>\n",
      16.0, frame.plot_top + F::kPlotHeight / 2);
  return svg;
}

std::string svg_stalls(const model::Run& run, const TimelineFrame& frame) {
  std::string svg;
  for (const auto& stall : run.stalls) {
    const double x = frame.x_of(stall.start.count());
    const double width = std::max(2.0, frame.x_of((stall.start + stall.duration).count()) - x);
    svg += fmt::format(
        "<rect class=\"stall\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>\n", x,
        frame.plot_top, width, TimelineFrame::kPlotHeight);
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"stall-label\">stall"
        "</text>\n",
        x + width / 2, frame.plot_top + 13);
  }
  return svg;
}

// One polygon per stacked series: points at interval midpoints, plus the run's two edges so
// that the areas span the whole axis.
std::string svg_stacked_areas(const std::vector<TimelineRow>& rows,
                              const std::vector<ChartSeries>& series, const TimelineFrame& frame) {
  std::vector<double> xs{frame.x_of(rows.front().start.count())};
  std::vector<size_t> source{0};
  for (size_t index = 0; index < rows.size(); ++index) {
    xs.push_back(frame.x_of(rows[index].start.count() + rows[index].duration.count() / 2));
    source.push_back(index);
  }
  xs.push_back(frame.x_of(rows.back().start.count() + rows.back().duration.count()));
  source.push_back(rows.size() - 1);

  std::string svg;
  std::vector<double> lower(xs.size(), 0);
  for (const auto& entry : series) {
    if (!entry.stacked) continue;
    std::string points;
    std::vector<double> upper(xs.size());
    for (size_t point = 0; point < xs.size(); ++point) {
      upper[point] = lower[point] + entry.values[source[point]].value_or(0);
      points += fmt::format("{:.1f},{:.1f} ", xs[point], frame.y_of(upper[point], frame.aas_axis));
    }
    for (size_t point = xs.size(); point-- > 0;) {
      points += fmt::format("{:.1f},{:.1f} ", xs[point], frame.y_of(lower[point], frame.aas_axis));
    }
    points.pop_back();
    svg += fmt::format("<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.85\"/>\n", points,
                       entry.colour);
    lower = std::move(upper);
  }
  return svg;
}

std::string svg_tps_line(const std::vector<TimelineRow>& rows, const ChartSeries& tps,
                         const TimelineFrame& frame) {
  using F = TimelineFrame;
  double max_tps = 0;
  for (const auto& value : tps.values) max_tps = std::max(max_tps, value.value_or(0));
  const Axis axis = nice_axis(max_tps, 5);
  std::string path;
  std::string dots;
  bool drawing = false;
  for (size_t index = 0; index < rows.size(); ++index) {
    if (!tps.values[index]) {
      drawing = false;
      continue;
    }
    const double x = frame.x_of(rows[index].start.count() + rows[index].duration.count() / 2);
    const double y = frame.y_of(*tps.values[index], axis);
    path += fmt::format("{}{:.1f} {:.1f} ", drawing ? "L" : "M", x, y);
    drawing = true;
    if (rows.size() <= 120)
      dots += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2.5"/>)", x, y);
  }
  std::string svg =
      fmt::format("<path class=\"tps\" d=\"{}\"/>\n<g class=\"tps-dots\">{}</g>\n", path, dots);
  for (double tick : axis.ticks) {
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" dominant-baseline=\"middle\" class=\"tps-tick\">{}"
        "</text>\n",
        F::kRight + 6, frame.y_of(tick, axis), tps_label(tick));
  }
  svg += fmt::format(
      "<text transform=\"translate({:.1f},{:.1f}) rotate(90)\" text-anchor=\"middle\" "
      "class=\"axis-title\">tps</text>\n",
      F::kWidth - 12, frame.plot_top + F::kPlotHeight / 2);
  return svg;
}

std::string svg_time_axis(const TimelineFrame& frame) {
  using F = TimelineFrame;
  const Axis axis = time_axis(frame.t1 - frame.t0);
  std::string svg;
  for (double tick : axis.ticks) {
    const double x = frame.x_of(frame.t0 + tick);
    svg += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#9aa1ad\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
        x, x, frame.plot_bottom, frame.plot_bottom + 5, x, frame.plot_bottom + 18,
        time_label(frame.t0 + tick, axis.step));
  }
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"axis-title\">time since "
      "start (s)</text>\n",
      (F::kLeft + F::kRight) / 2, frame.plot_bottom + 40);
  return svg;
}

std::string svg_lanes(const std::vector<BackgroundLane>& lanes, const TimelineFrame& frame) {
  using F = TimelineFrame;
  std::string svg;
  for (size_t lane = 0; lane < lanes.size(); ++lane) {
    const double y = 14 + static_cast<double>(lane) * 15;
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\" "
        "class=\"lane\">{}</text>\n",
        F::kLeft - 6, y + 5, lanes[lane].name);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"10\" fill=\"#f1f3f6\"/>\n",
        F::kLeft, y, F::kRight - F::kLeft);
    for (const auto& [start, end] : lanes[lane].spans) {
      const double x = frame.x_of(start);
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"10\" fill=\"{}\"/>\n", x, y,
          std::max(1.0, frame.x_of(end) - x), lanes[lane].colour);
    }
  }
  return svg;
}

std::string html_timeline_legend(const model::Run& run, const std::vector<ChartSeries>& series,
                                 const std::vector<BackgroundLane>& lanes) {
  std::string legend = "<div class=\"legend\">";
  for (const auto& entry : series) {
    if (entry.stacked) legend += fmt::format("<span>{}{}</span>", swatch(entry.name), entry.name);
  }
  if (std::any_of(series.begin(), series.end(), [](const auto& s) { return s.name == "tps"; })) {
    legend += "<span><span class=\"line-sw\"></span>tps (right axis)</span>";
  }
  if (!run.stalls.empty()) legend += "<span><span class=\"sw stall-sw\"></span>stall</span>";
  for (const auto& lane : lanes) {
    legend += fmt::format(R"(<span><span class="sw" style="background:{}"></span>{} = {}</span>)",
                          lane.colour, lane.name, lane.meaning);
  }
  return legend + "</div>\n";
}

// One bar of the top-waits chart with its error bar, label and value, in a tooltip group.
std::string svg_wait_bar(const ProfileRow& row, double mid, double left, const Axis& axis,
                         double right) {
  auto x_of = [&](double pct) { return left + pct / axis.top * (right - left); };
  const double share = 100 * row.stat.share;
  const double error = 100 * 1.96 * drawn_error(row.stat.share_stderr, row.stat.errors_reliable);
  const double low = x_of(std::max(0.0, share - error));
  const double high = x_of(std::min(100.0, share + error));
  const bool estimable = row.stat.errors_reliable && std::isfinite(row.stat.share_stderr);
  const std::string tip =
      estimable
          ? fmt::format("{}\n{} samples, {:.2f}% ± {}\nAAS {:.2f} ± {}", row.label, row.stat.count,
                        share, error_text(100 * row.stat.share_stderr, true, 2), row.stat.aas,
                        error_text(row.stat.aas_stderr, true, 2))
          : fmt::format(
                "{}\n{} samples, {:.2f}%\nAAS {:.2f}\nno error bar: the run is "
                "too short for independent batches",
                row.label, row.stat.count, share, row.stat.aas);
  std::string svg = fmt::format("<g{}>", tooltip_attribute(tip));
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}"
      "</text>",
      left - 8, mid, html_escape(row.label));
  svg += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"15\" fill=\"{}\" "
      "fill-opacity=\"0.85\"/>",
      left, mid - 7.5, std::max(0.5, x_of(share) - left), wait_class_colour(row.wait_class));
  // An error that cannot be estimated gets no bar (a zero-width one would read as a tiny
  // error); the tooltip says why.
  if (estimable) {
    svg += fmt::format(
        "<path class=\"err\" d=\"M{0:.1f} {1:.1f}H{2:.1f}M{0:.1f} {3:.1f}V{4:.1f}M{2:.1f} "
        "{3:.1f}V{4:.1f}\"/>",
        low, mid, high, mid - 4, mid + 4);
  }
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" dominant-baseline=\"middle\" class=\"value\">{:.1f}% · "
      "{:.2f} AAS</text></g>\n",
      high + 8, mid, share, row.stat.aas);
  return svg;
}

}  // namespace

std::string svg_timeline(const model::Run& run, const std::vector<TimelineRow>& rows,
                         const std::vector<ChartSeries>& series,
                         const std::vector<BackgroundLane>& lanes) {
  const TimelineFrame frame = timeline_frame(rows, lanes.size());
  std::string svg = fmt::format(
      "<svg viewBox=\"0 0 {:.0f} {:.0f}\" role=\"img\" aria-label=\"average active sessions by "
      "wait class and tps over time\">\n",
      TimelineFrame::kWidth, frame.height);
  svg += svg_plot_and_aas_axis(frame);
  svg += svg_stalls(run, frame);
  svg += svg_stacked_areas(rows, series, frame);
  const auto tps = std::find_if(series.begin(), series.end(),
                                [](const ChartSeries& entry) { return entry.name == "tps"; });
  if (tps != series.end()) svg += svg_tps_line(rows, *tps, frame);
  svg += svg_time_axis(frame);
  svg += svg_lanes(lanes, frame);
  svg += "</svg>\n";
  return svg + html_timeline_legend(run, series, lanes);
}

std::string svg_top_waits(const ProfileTable& waits, const RenderOptions& options) {
  std::vector<ProfileRow> rows(waits.rows.rbegin(), waits.rows.rend());
  constexpr size_t kBars = 15;
  const size_t hidden = rows.size() > kBars ? rows.size() - kBars : 0;
  if (rows.size() > kBars) rows.resize(kBars);
  if (rows.empty()) return "<p>No samples.</p>\n";

  constexpr double kWidth = 1100;
  constexpr double kRowHeight = 24;
  size_t longest = 0;
  for (const auto& row : rows) longest = std::max(longest, row.label.size());
  const double left = std::clamp(static_cast<double>(longest) * 7.0 + 18, 120.0, 380.0);
  const double right = kWidth - 170;
  const double top = 6;
  const double bottom = top + static_cast<double>(rows.size()) * kRowHeight;
  double max_share = 0;
  for (const auto& row : rows) {
    max_share =
        std::max(max_share, 100 * (row.stat.share + 1.96 * drawn_error(row.stat.share_stderr,
                                                                       row.stat.errors_reliable)));
  }
  // A share is at most 100%, whatever the normal approximation of its interval says.
  const Axis axis = nice_axis(std::min(max_share, 100.0), 5);

  std::string svg = fmt::format(
      "<svg viewBox=\"0 0 {:.0f} {:.0f}\" role=\"img\" aria-label=\"top wait events by share\">\n",
      kWidth, bottom + 40);
  for (double tick : axis.ticks) {
    const double x = left + tick / axis.top * (right - left);
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
    const double mid = top + (static_cast<double>(index) + 0.5) * kRowHeight;
    svg += svg_wait_bar(rows[index], mid, left, axis, right);
  }
  svg += "</svg>\n";
  if (hidden > 0) {
    svg += fmt::format(
        "<p class=\"note\">{} smaller wait events not drawn; all are in the table.</p>\n", hidden);
  }
  return svg;
}

}  // namespace pgwaitprof::exporters::report_detail
