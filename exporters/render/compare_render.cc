// Text, Markdown and JSON of a comparison. Every format shows the same tables: throughput (and
// p99 latency where the runs have it) with the change, its 95 % interval, the p-value and the
// verdict; average latency; the wait profile by class per cell; the wait events that moved (and
// for traced runs their counts, time and p99 durations, compare_traced.cc); and for matrices,
// each variant's scalability model (sigma, kappa, N*) side by side.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "base/json_text.h"
#include "exporters/render/compare.h"
#include "exporters/render/compare_detail.h"
#include "exporters/render/matrix_detail.h"
#include "exporters/render/matrix_table.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters {

using namespace text_format;

namespace {

using Table = std::vector<std::vector<std::string>>;

std::string format_pct(double pct) { return fmt::format("{:+.1f}%", pct); }

std::string format_p(const std::optional<double>& p) {
  if (!p) return "-";
  if (*p < 0.001) return "<0.001";
  return fmt::format("{:.3f}", *p);
}

// "10000 [9938, 10062] x5": the side's geometric mean, its 95 % interval and the repeats.
std::string format_side(const std::vector<double>& values, const SideFigure& side,
                        std::string (*format)(double)) {
  if (values.empty() || !std::isfinite(side.value)) return "-";
  std::string text = format(side.value);
  if (side.low && side.high) {
    text += fmt::format(" [{}, {}]", format(*side.low), format(*side.high));
  }
  return text + fmt::format(" x{}{}", values.size(),
                            side.run_to_run   ? " run-to-run"
                            : side.within_run ? " within-run"
                                              : "");
}

std::string detectable_text(const MetricTest& metric) {
  if (!metric.test || !metric.test->min_detectable_percent ||
      !std::isfinite(*metric.test->min_detectable_percent)) {
    return "-";
  }
  return fmt::format("±{:.1f}%", *metric.test->min_detectable_percent);
}

std::string format_ms(double ms) { return fmt::format("{:.3f}", ms); }
std::string format_elapsed(double seconds) { return fmt::format("{:.2f}", seconds); }

std::string verdict_text(const MetricTest& metric) {
  return metric.detail.empty() ? metric.verdict : metric.verdict + " (" + metric.detail + ")";
}

std::string interval_text(const MetricTest& metric) {
  if (!metric.test || !metric.test->ci_low_percent) return "-";
  return fmt::format("[{}, {}]", format_pct(*metric.test->ci_low_percent),
                     format_pct(*metric.test->ci_high_percent));
}

// When every cell has the same variant (one variant per side, or none) it goes in the heading.
bool one_variant(const Comparison& comparison) {
  return std::all_of(comparison.cells.begin(), comparison.cells.end(), [&](const CompareCell& c) {
    return c.variant == comparison.cells.front().variant;
  });
}

struct Tables {
  std::string heading;
  Table throughput, p99, latency, classes, waits, functions;
  compare_detail::CompareTable traced;  // the traced waits that moved
  std::vector<bool> throughput_right, p99_right, latency_right, classes_right, waits_right,
      functions_right;
};

void metric_table(const Comparison& comparison, bool variant_column, bool tps, Table& table,
                  std::vector<bool>& right) {
  table.push_back({"clients", "A: " + comparison.label_a, "B: " + comparison.label_b, "change",
                   "95% interval", "p", "detectable", "verdict"});
  right = {true, true, true, true, true, true, true, false};
  if (variant_column) {
    table.front().insert(table.front().begin(), "variant");
    right.insert(right.begin(), false);
  }
  for (const auto& cell : comparison.cells) {
    const MetricTest& metric = tps ? cell.tps : cell.p99_ms;
    if (!tps && metric.a.empty() && metric.b.empty()) continue;
    auto format = !tps                                            ? &format_ms
                  : comparison.metric == model::Metric::kDuration ? &format_elapsed
                                                                  : &format_tps;
    std::vector<std::string> row{std::to_string(cell.clients),
                                 format_side(metric.a, metric.side_a, format),
                                 format_side(metric.b, metric.side_b, format),
                                 metric.test ? format_pct(metric.test->change_percent) : "-",
                                 interval_text(metric),
                                 format_p(metric.test ? metric.test->p_value : std::nullopt),
                                 detectable_text(metric),
                                 verdict_text(metric)};
    if (variant_column) row.insert(row.begin(), cell.variant);
    table.push_back(std::move(row));
  }
}

void class_table(const Comparison& comparison, bool variant_column, Tables& tables) {
  std::set<std::string> names;
  for (const auto& cell : comparison.cells) {
    for (const auto& shift : cell.classes) names.insert(shift.wait_class);
  }
  if (names.empty()) return;
  std::vector<std::string> order;
  for (const auto& wait_class : kWaitClassOrder) {
    if (names.erase(std::string(wait_class))) order.emplace_back(wait_class);
  }
  order.insert(order.end(), names.begin(), names.end());
  std::vector<std::string> header{"clients"};
  header.insert(header.end(), order.begin(), order.end());
  tables.classes_right.assign(header.size(), true);
  if (variant_column) {
    header.insert(header.begin(), "variant");
    tables.classes_right.insert(tables.classes_right.begin(), false);
  }
  tables.classes.push_back(header);
  for (const auto& cell : comparison.cells) {
    std::vector<std::string> row{std::to_string(cell.clients)};
    for (const auto& name : order) {
      const auto found =
          std::find_if(cell.classes.begin(), cell.classes.end(),
                       [&](const ClassShift& shift) { return shift.wait_class == name; });
      row.push_back(found == cell.classes.end()
                        ? "-"
                        : fmt::format("{:.2f} -> {:.2f}", found->aas_a, found->aas_b));
    }
    if (variant_column) row.insert(row.begin(), cell.variant);
    tables.classes.push_back(std::move(row));
  }
}

std::string error_text(double value) {
  return std::isfinite(value) ? fmt::format("{:.3f}", value) : "-";
}

// The functions whose share of the client backends' on-CPU samples moved (--cpu-profile):
// "LWLockAcquire 3.1% -> 11.4%, beyond the spread".
void function_table(const Comparison& comparison, bool variant_column, Tables& tables) {
  if (comparison.functions.empty()) return;
  tables.functions.push_back(
      {"clients", "function (self)", "share A", "share B", "delta", "beyond the spread"});
  tables.functions_right = {true, false, true, true, true, false};
  if (variant_column) {
    tables.functions.front().insert(tables.functions.front().begin(), "variant");
    tables.functions_right.insert(tables.functions_right.begin(), false);
  }
  auto share = [](double value, double error) {
    return std::isfinite(error) ? fmt::format("{:.1f}% ± {:.1f}", 100 * value, 100 * error)
                                : fmt::format("{:.1f}% ± -", 100 * value);
  };
  for (const auto& move : comparison.functions) {
    tables.functions.push_back(
        {std::to_string(move.clients), move.function, share(move.share_a, move.stderr_a),
         share(move.share_b, move.stderr_b), fmt::format("{:+.1f} points", 100 * move.delta),
         !move.significant ? "not tested" : (*move.significant ? "yes" : "no")});
    if (variant_column) {
      tables.functions.back().insert(tables.functions.back().begin(), move.variant);
    }
  }
}

Tables build_tables(const Comparison& comparison) {
  Tables tables;
  const bool variant_column = !comparison.cells.empty() && !one_variant(comparison);
  tables.heading = fmt::format("A = {}, B = {}", comparison.label_a, comparison.label_b);
  if (!comparison.cells.empty() && !variant_column && !comparison.cells.front().variant.empty()) {
    tables.heading += fmt::format(" (variant {})", comparison.cells.front().variant);
  }
  metric_table(comparison, variant_column, true, tables.throughput, tables.throughput_right);
  metric_table(comparison, variant_column, false, tables.p99, tables.p99_right);
  tables.latency.push_back({"clients", "A ms", "B ms", "change"});
  tables.latency_right = {true, true, true, true};
  if (variant_column) {
    tables.latency.front().insert(tables.latency.front().begin(), "variant");
    tables.latency_right.insert(tables.latency_right.begin(), false);
  }
  for (const auto& cell : comparison.cells) {
    const bool both = !cell.tps.a.empty() && !cell.tps.b.empty();
    std::vector<std::string> row{
        std::to_string(cell.clients), cell.tps.a.empty() ? "-" : format_ms(cell.latency_a.count()),
        cell.tps.b.empty() ? "-" : format_ms(cell.latency_b.count()),
        both && cell.latency_a.count() > 0
            ? format_pct((cell.latency_b.count() - cell.latency_a.count()) /
                         cell.latency_a.count() * 100)
            : "-"};
    if (variant_column) row.insert(row.begin(), cell.variant);
    tables.latency.push_back(std::move(row));
  }
  class_table(comparison, variant_column, tables);
  tables.waits.push_back({"clients", "wait", "AAS A", "AAS B", "delta", "relative", "significant"});
  tables.waits_right = {true, false, true, true, true, true, false};
  if (variant_column) {
    tables.waits.front().insert(tables.waits.front().begin(), "variant");
    tables.waits_right.insert(tables.waits_right.begin(), false);
  }
  for (const auto& move : comparison.waits) {
    tables.waits.push_back({std::to_string(move.clients), move.wait,
                            fmt::format("{:.3f} ± {}", move.aas_a, error_text(move.stderr_a)),
                            fmt::format("{:.3f} ± {}", move.aas_b, error_text(move.stderr_b)),
                            fmt::format("{:+.3f}", move.delta),
                            std::isinf(move.relative_pct) ? "new" : format_pct(move.relative_pct),
                            !move.significant ? "not tested" : (*move.significant ? "yes" : "no")});
    if (variant_column) tables.waits.back().insert(tables.waits.back().begin(), move.variant);
  }
  function_table(comparison, variant_column, tables);
  tables.traced = compare_detail::traced_waits_table(comparison, variant_column);
  return tables;
}

constexpr const char* kThroughputTitle =
    "throughput, tps: geometric mean [95% interval] xN repeats; change of the geometric means, "
    "its 95% interval and p from Welch's t-test on log tps across repeats; detectable = the "
    "smallest change this design detects with 80% power";
constexpr const char* kElapsedTitle =
    "elapsed time of fixed-work runs, s (lower is better): geometric mean [95% interval] xN "
    "repeats; change of the geometric means, its 95% interval and p from Welch's t-test on log "
    "time across repeats; detectable = the smallest change this design detects with 80% power";

const char* throughput_title(const Comparison& comparison) {
  return comparison.metric == model::Metric::kDuration ? kElapsedTitle : kThroughputTitle;
}

constexpr const char* kP99Title =
    "p99 latency, ms (pgbench's per-transaction log), tested the same way";
constexpr const char* kWithinRunNote =
    "within-run: with one run a side, the figure is the run's steady-state tps with the 95% "
    "interval of its own batch means, and the change is tested against the noise inside each "
    "run. That noise is all it sees: it cannot see how much runs of one configuration differ "
    "from each other, so repeat the runs before trusting such a verdict.";
constexpr const char* kRunToRunNote =
    "run-to-run: with one run a side, the change is tested against the spread between earlier "
    "runs of the same configuration in a run's data directory (its report's run-to-run "
    "section): sd of log tps about sd / tps, the change's error sqrt(2) times that, t with the "
    "runs - 1 degrees of freedom; the run-to-run side's interval is its tps ± t x sd.";
constexpr const char* kP99SingleNote =
    "single runs get no p99 test: a run's p99 is a quantile of all its transactions, and "
    "report.json keeps per-interval percentiles, not the per-batch histograms a within-run "
    "error of p99 would need.";

bool any_cell(const Comparison& comparison, bool (*test)(const CompareCell&)) {
  return std::any_of(comparison.cells.begin(), comparison.cells.end(), test);
}

bool within_run_cell(const CompareCell& cell) {
  return (cell.tps.test && cell.tps.test->within_run) || cell.tps.side_a.within_run ||
         cell.tps.side_b.within_run;
}

bool run_to_run_cell(const CompareCell& cell) { return cell.tps.test && cell.tps.test->run_to_run; }

bool single_run_p99_cell(const CompareCell& cell) {
  return cell.p99_ms.a.size() == 1 && cell.p99_ms.b.size() == 1;
}

constexpr const char* kLatencyTitle = "average latency, ms (median of the runs' averages)";
constexpr const char* kClassTitle =
    "wait profile by class, AAS A -> B (mean of the runs' steady state, idle not counted)";
constexpr const char* kWaitTitle =
    "wait events that moved: AAS ± standard error (between repeats, or batch means over a "
    "single run's timeline; - = not estimable), significant = beyond the 95% band of the "
    "combined error (Welch's t)";
constexpr const char* kFunctionTitle =
    "where the CPU went, what moved (--cpu-profile): each function's share of the client "
    "backends' on-CPU samples (self time) ± standard error (between repeats, or batch means over "
    "a single run's intervals), beyond the spread = beyond the 95% band of the combined error";

// sigma, kappa and N* of each variant fitted on both sides, with their intervals (or why the
// data do not constrain them) and whether they differ.
Table scalability_table(const Comparison& comparison) {
  Table table{
      {"variant", "figure", "A: " + comparison.label_a, "B: " + comparison.label_b, "differ"}};
  auto differ = [](const model::FigureDifference& difference) -> std::string {
    if (!difference.comparable) return "not comparable";
    return difference.differ ? "yes" : "no";
  };
  for (const auto& shift : comparison.scalability) {
    const std::string variant = matrix_detail::variant_label(shift.variant);
    table.push_back({variant, "σ, contention", matrix_detail::figure_text(shift.a.sigma, 3),
                     matrix_detail::figure_text(shift.b.sigma, 3), differ(shift.sigma)});
    table.push_back({variant, "κ, coherency", matrix_detail::figure_text(shift.a.kappa, 3),
                     matrix_detail::figure_text(shift.b.kappa, 3), differ(shift.kappa)});
    table.push_back(
        {variant, "N*, peak clients", matrix_detail::figure_text(shift.a.peak_clients, 3),
         matrix_detail::figure_text(shift.b.peak_clients, 3), differ(shift.peak_clients)});
  }
  return table;
}

constexpr const char* kScalabilityTitle =
    "scalability (Universal Scalability Law per variant, 95% intervals; differ = the difference "
    "is beyond both intervals' combined error)";

}  // namespace

std::string render_comparison_text(const Comparison& comparison) {
  const Tables tables = build_tables(comparison);
  std::string out = text_escape(tables.heading) + "\n\n" + throughput_title(comparison) + "\n";
  out += text_table(tables.throughput, tables.throughput_right);
  if (any_cell(comparison, run_to_run_cell)) out += std::string("note: ") + kRunToRunNote + "\n";
  if (any_cell(comparison, within_run_cell)) out += std::string("note: ") + kWithinRunNote + "\n";
  if (tables.p99.size() > 1) {
    out += std::string("\n") + kP99Title + "\n" + text_table(tables.p99, tables.p99_right);
    if (any_cell(comparison, single_run_p99_cell)) {
      out += std::string("note: ") + kP99SingleNote + "\n";
    }
  }
  out +=
      std::string("\n") + kLatencyTitle + "\n" + text_table(tables.latency, tables.latency_right);
  if (!tables.classes.empty()) {
    out +=
        std::string("\n") + kClassTitle + "\n" + text_table(tables.classes, tables.classes_right);
  }
  out += std::string("\n") + kWaitTitle + "\n";
  out += comparison.waits.empty() ? "(no wait samples)\n"
                                  : text_table(tables.waits, tables.waits_right);
  if (!tables.functions.empty()) {
    out += std::string("\n") + kFunctionTitle + "\n" +
           text_table(tables.functions, tables.functions_right);
  }
  if (!tables.traced.rows.empty()) {
    out += "\n" + compare_detail::traced_waits_title() + "\n" +
           text_table(tables.traced.rows, tables.traced.right) +
           "note: " + compare_detail::traced_waits_note() + "\n";
  }
  if (!comparison.scalability.empty()) {
    out += std::string("\n") + kScalabilityTitle + "\n" +
           text_table(scalability_table(comparison), {false, false, false, false, false});
  }
  return out;
}

std::string render_comparison_markdown(const Comparison& comparison) {
  const Tables tables = build_tables(comparison);
  std::string out = "## Comparison: " + markdown_escape(tables.heading) + "\n\n";
  auto section = [&](const char* title, const Table& table, const std::vector<bool>& right) {
    out +=
        std::string("### ") + markdown_escape(title) + "\n\n" + markdown_table(table, right) + "\n";
  };
  section(throughput_title(comparison), tables.throughput, tables.throughput_right);
  if (any_cell(comparison, run_to_run_cell)) out += markdown_escape(kRunToRunNote) + "\n\n";
  if (any_cell(comparison, within_run_cell)) out += markdown_escape(kWithinRunNote) + "\n\n";
  if (tables.p99.size() > 1) {
    section(kP99Title, tables.p99, tables.p99_right);
    if (any_cell(comparison, single_run_p99_cell)) {
      out += markdown_escape(kP99SingleNote) + "\n\n";
    }
  }
  section(kLatencyTitle, tables.latency, tables.latency_right);
  if (!tables.classes.empty()) section(kClassTitle, tables.classes, tables.classes_right);
  if (comparison.waits.empty()) {
    out += std::string("### ") + markdown_escape(kWaitTitle) + "\n\nNo wait samples.\n";
  } else {
    section(kWaitTitle, tables.waits, tables.waits_right);
  }
  if (!tables.functions.empty()) section(kFunctionTitle, tables.functions, tables.functions_right);
  if (!tables.traced.rows.empty()) {
    const auto title = compare_detail::traced_waits_title();
    section(title.c_str(), tables.traced.rows, tables.traced.right);
    out += markdown_escape(compare_detail::traced_waits_note()) + ".\n\n";
  }
  if (!comparison.scalability.empty()) {
    section(kScalabilityTitle, scalability_table(comparison), {false, false, false, false, false});
  }
  return out;
}

namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? nlohmann::json(*value) : nlohmann::json();
}

// The side's geometric mean (or a lone run's steady-state tps) and its 95 % interval.
nlohmann::json side_json(const SideFigure& side) {
  return {{"value", optional_number(side.value)},
          {"ci_low", optional_number(side.low)},
          {"ci_high", optional_number(side.high)},
          {"within_run", side.within_run},
          {"run_to_run", side.run_to_run}};
}

nlohmann::json metric_json(const MetricTest& metric) {
  nlohmann::json json = {{"a", metric.a},
                         {"b", metric.b},
                         {"median_a", metric.median_a},
                         {"median_b", metric.median_b},
                         {"side_a", side_json(metric.side_a)},
                         {"side_b", side_json(metric.side_b)},
                         {"verdict", metric.verdict},
                         {"detail", metric.detail}};
  if (metric.test) {
    const auto& test = *metric.test;
    json["change_pct"] = optional_number(test.change_percent);
    json["ci_low_pct"] = optional_number(test.ci_low_percent);
    json["ci_high_pct"] = optional_number(test.ci_high_percent);
    json["p_value"] = optional_number(test.p_value);
    json["min_detectable_pct"] = optional_number(test.min_detectable_percent);
    json["repeats_needed"] = test.repeats_needed_for_observed
                                 ? nlohmann::json(*test.repeats_needed_for_observed)
                                 : nlohmann::json();
    json["method"] = test.method;
    json["within_run"] = test.within_run;
    json["run_to_run"] = test.run_to_run;
  }
  return json;
}

nlohmann::json usl_figure_json(const model::UslFigure& figure) {
  auto number = [](double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json();
  };
  return {{"value", number(figure.value)},
          {"low", number(figure.low)},
          {"high", number(figure.high)},
          {"constrained", figure.constrained},
          {"note", figure.note}};
}

nlohmann::json difference_json(const model::FigureDifference& difference) {
  return difference.comparable ? nlohmann::json(difference.differ) : nlohmann::json();
}

}  // namespace

namespace {

nlohmann::json functions_json(const Comparison& comparison) {
  using nlohmann::json;
  json functions = json::array();
  for (const auto& move : comparison.functions) {
    functions.push_back({{"variant", move.variant},
                         {"clients", move.clients},
                         {"function", move.function},
                         {"share_a", move.share_a},
                         {"share_b", move.share_b},
                         {"stderr_a", optional_number(move.stderr_a)},
                         {"stderr_b", optional_number(move.stderr_b)},
                         {"delta", move.delta},
                         {"significant", move.significant ? json(*move.significant) : json()}});
  }
  return functions;
}

// One cell of the comparison: its tps, latencies and wait classes on both sides.
nlohmann::json cell_json(const model::CompareCell& cell) {
  using nlohmann::json;
  json classes = json::array();
  for (const auto& shift : cell.classes) {
    classes.push_back(
        {{"wait_class", shift.wait_class}, {"aas_a", shift.aas_a}, {"aas_b", shift.aas_b}});
  }
  json entry = {{"variant", cell.variant},
                {"clients", cell.clients},
                {"tps", metric_json(cell.tps)},
                {"latency_a_ms", cell.latency_a.count()},
                {"latency_b_ms", cell.latency_b.count()},
                {"classes", std::move(classes)}};
  if (!cell.p99_ms.a.empty() || !cell.p99_ms.b.empty()) entry["p99_ms"] = metric_json(cell.p99_ms);
  return entry;
}

// One wait's move between the sides.
nlohmann::json wait_move_json(const model::WaitMove& move) {
  using nlohmann::json;
  return {{"variant", move.variant},
          {"clients", move.clients},
          {"wait", move.wait},
          {"aas_a", move.aas_a},
          {"aas_b", move.aas_b},
          {"stderr_a", optional_number(move.stderr_a)},
          {"stderr_b", optional_number(move.stderr_b)},
          {"delta", move.delta},
          {"relative_pct", optional_number(move.relative_pct)},
          {"significant", move.significant ? json(*move.significant) : json()}};
}

// One variant's fit on both sides and whether its figures differ.
nlohmann::json scalability_shift_json(const model::ScalabilityShift& shift) {
  return {{"variant", shift.variant},
          {"sigma_a", usl_figure_json(shift.a.sigma)},
          {"sigma_b", usl_figure_json(shift.b.sigma)},
          {"sigma_differ", difference_json(shift.sigma)},
          {"kappa_a", usl_figure_json(shift.a.kappa)},
          {"kappa_b", usl_figure_json(shift.b.kappa)},
          {"kappa_differ", difference_json(shift.kappa)},
          {"peak_clients_a", usl_figure_json(shift.a.peak_clients)},
          {"peak_clients_b", usl_figure_json(shift.b.peak_clients)},
          {"peak_clients_differ", difference_json(shift.peak_clients)}};
}

}  // namespace

std::string render_comparison_json(const Comparison& comparison) {
  using nlohmann::json;
  json cells = json::array();
  for (const auto& cell : comparison.cells) cells.push_back(cell_json(cell));
  json waits = json::array();
  for (const auto& move : comparison.waits) waits.push_back(wait_move_json(move));
  json functions = functions_json(comparison);
  json document = {{"metric", to_string(comparison.metric)},
                   {"label_a", comparison.label_a},
                   {"label_b", comparison.label_b},
                   {"cells", std::move(cells)},
                   {"waits", std::move(waits)}};
  // Only comparisons of runs with CPU profiles carry the key.
  if (!functions.empty()) document["functions"] = std::move(functions);
  // Only comparisons of traced runs on both sides carry the key.
  if (!comparison.traced_waits.empty()) {
    document["traced_waits"] = compare_detail::traced_waits_json(comparison);
  }
  // Only comparisons of matrices that both have a fit carry the key.
  if (!comparison.scalability.empty()) {
    json scalability = json::array();
    for (const auto& shift : comparison.scalability)
      scalability.push_back(scalability_shift_json(shift));
    document["scalability"] = std::move(scalability);
  }
  return base::json_text(document, 2) + "\n";
}

}  // namespace pgwaitprof::exporters
