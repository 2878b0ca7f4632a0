// The traced waits of a comparison (compare_detail.h): per cell and wait event, blocking waits a
// second, time (AAS) and p99 duration on both sides with their errors, and which of them moved
// beyond the spread (decided in model/compare_traced.cc).
#include <fmt/format.h>

#include <cmath>

#include "exporters/render/compare_detail.h"
#include "exporters/render/report_traced.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters::compare_detail {

namespace {

using report_detail::duration_text;

// "21034 ± 120", "0.812 ± 0.010", "4.10ms ± 0.21ms": the error only where there is one.
std::string side_text(double value, double error, std::string (*format)(double)) {
  if (!std::isfinite(value)) return "-";
  if (!std::isfinite(error)) return format(value);
  return format(value) + " ± " + format(error);
}

std::string aas_text(double value) { return fmt::format("{:.3f}", value); }
std::string seconds_text(double value) { return value > 0 ? duration_text(value) : "0"; }

// "p99", "waits, time", "no" (every tested figure within the spread), "not tested".
std::string moved_text(const model::TracedWaitMove& move) {
  if (!move.moved.empty()) return fmt::format("{}", fmt::join(move.moved, ", "));
  for (const auto* figure : {&move.waits_per_s, &move.aas, &move.p99_s}) {
    if (figure->significant) return "no";
  }
  return "not tested";
}

nlohmann::json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json();
}

nlohmann::json figure_json(const model::TracedFigure& figure) {
  return {
      {"a", number_or_null(figure.a)},
      {"b", number_or_null(figure.b)},
      {"stderr_a", number_or_null(figure.stderr_a)},
      {"stderr_b", number_or_null(figure.stderr_b)},
      {"relative_pct", number_or_null(figure.relative_pct)},
      {"significant", figure.significant ? nlohmann::json(*figure.significant) : nlohmann::json()}};
}

}  // namespace

std::string traced_waits_title() {
  return "traced waits that moved (--source trace): blocking waits a second, time as AAS and the "
         "p99 duration of the blocking waits, each ± standard error (between repeats; for a "
         "lone run batch means over its timeline for waits and time, none for p99), beyond the "
         "spread = the figures beyond the 95% band of the combined error (Welch's t)";
}

std::string traced_waits_note() {
  return "traced: counts and time are exact, p99 from log-linear buckets (4 per power of two), "
         "with repeats the mean of the runs' p99; a wait is a blocking one, ended by a wake-up; "
         "idle sessions not counted";
}

CompareTable traced_waits_table(const model::Comparison& comparison, bool variant_column) {
  CompareTable table;
  if (comparison.traced_waits.empty()) return table;
  table.rows.push_back({"clients", "wait", "waits/s A", "waits/s B", "AAS A", "AAS B", "p99 A",
                        "p99 B", "beyond the spread"});
  table.right = {true, false, true, true, true, true, true, true, false};
  if (variant_column) {
    table.rows.front().insert(table.rows.front().begin(), "variant");
    table.right.insert(table.right.begin(), false);
  }
  for (const auto& move : comparison.traced_waits) {
    std::vector<std::string> row{
        std::to_string(move.clients),
        move.wait,
        side_text(move.waits_per_s.a, move.waits_per_s.stderr_a, text_format::format_tps),
        side_text(move.waits_per_s.b, move.waits_per_s.stderr_b, text_format::format_tps),
        side_text(move.aas.a, move.aas.stderr_a, aas_text),
        side_text(move.aas.b, move.aas.stderr_b, aas_text),
        side_text(move.p99_s.a, move.p99_s.stderr_a, seconds_text),
        side_text(move.p99_s.b, move.p99_s.stderr_b, seconds_text),
        moved_text(move)};
    if (variant_column) row.insert(row.begin(), move.variant);
    table.rows.push_back(std::move(row));
  }
  return table;
}

nlohmann::json traced_waits_json(const model::Comparison& comparison) {
  nlohmann::json waits = nlohmann::json::array();
  for (const auto& move : comparison.traced_waits) {
    waits.push_back({{"variant", move.variant},
                     {"clients", move.clients},
                     {"wait", move.wait},
                     {"wait_class", move.wait_class},
                     {"waits_a", move.waits_a},
                     {"waits_b", move.waits_b},
                     {"waits_per_s", figure_json(move.waits_per_s)},
                     {"aas", figure_json(move.aas)},
                     {"p99_s", figure_json(move.p99_s)},
                     {"moved", move.moved}});
  }
  return waits;
}

}  // namespace pgwaitprof::exporters::compare_detail
