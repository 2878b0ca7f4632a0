// A/B comparison of runs: the runs grouped into cells, each cell's parts compared
// (compare_metrics.cc: throughput and latency; compare_waits.cc: wait events and CPU functions;
// compare_traced.cc: the traced source's waits), the largest moves kept, and the matrices'
// scalability side by side (the decisions; exporters/render/compare_render.cc renders them).
// Used by `pgwaitprof compare` on two runs, two sets of runs or two matrix directories.
#include "model/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "model/compare_detail.h"
#include "model/matrix_aggregate.h"

namespace pgwaitprof::model {

using namespace compare_detail;

namespace {

constexpr size_t kTopWaits = 15;

bool counts(const Run& run) {
  return run.status == RunStatus::kCompleted && run.loadgen.has_value() && run.loadgen->tps > 0;
}

// Duration when every run that counts did a fixed amount of work.
Metric metric_of(const std::vector<Run>& a, const std::vector<Run>& b) {
  bool any = false;
  for (const auto* side : {&a, &b}) {
    for (const auto& run : *side) {
      if (!counts(run)) continue;
      if (!run_figure(run, Metric::kDuration)) return Metric::kTps;
      any = true;
    }
  }
  return any ? Metric::kDuration : Metric::kTps;
}

// Each side as a matrix (its scalability fitted per variant), the variants paired by name, or
// the only variant of each side with the other's when `cross_variant` names the pair.
std::vector<ScalabilityShift> scalability_shifts(const std::vector<Run>& a,
                                                 const std::vector<Run>& b,
                                                 const std::string& cross_variant) {
  const auto table_a = build_matrix_table(a);
  const auto table_b = build_matrix_table(b);
  std::vector<ScalabilityShift> shifts;
  for (const auto& side_a : table_a.scalability) {
    for (const auto& side_b : table_b.scalability) {
      if (cross_variant.empty() && side_a.variant != side_b.variant) continue;
      if (!side_a.fit.fitted || !side_b.fit.fitted) continue;
      shifts.push_back(
          {.variant = cross_variant.empty() ? side_a.variant : cross_variant,
           .a = side_a.fit,
           .b = side_b.fit,
           .sigma = compare_figures(side_a.fit.sigma, side_b.fit.sigma),
           .kappa = compare_figures(side_a.fit.kappa, side_b.fit.kappa),
           .peak_clients = compare_figures(side_a.fit.peak_clients, side_b.fit.peak_clients)});
    }
  }
  return shifts;
}

}  // namespace

namespace {

// The runs of both sides by cell (variant, clients), and the variants in order of appearance.
// Comparing the "master" matrix with the "patched" one: the variant names differ by
// construction, so cells are matched by client count alone under "master vs patched".
struct Cells {
  std::vector<std::string> variant_order;
  std::map<std::pair<std::string, int>, CellRuns> runs;
  std::string cross_variant;  // "master vs patched", or "" when variants are matched by name
};

Cells group_cells(const std::vector<Run>& a, const std::vector<Run>& b) {
  Cells cells;
  std::set<std::string> variants_a, variants_b;
  for (const auto& run : a) variants_a.insert(run.variant);
  for (const auto& run : b) variants_b.insert(run.variant);
  if (variants_a.size() == 1 && variants_b.size() == 1 &&
      *variants_a.begin() != *variants_b.begin()) {
    auto variant_text = [](const std::string& variant) {
      return variant.empty() ? "(none)" : variant;
    };
    cells.cross_variant = fmt::format("{} vs {}", variant_text(*variants_a.begin()),
                                      variant_text(*variants_b.begin()));
  }
  auto add = [&](const Run& run, bool side_a) {
    const std::string variant = cells.cross_variant.empty() ? run.variant : cells.cross_variant;
    if (std::find(cells.variant_order.begin(), cells.variant_order.end(), variant) ==
        cells.variant_order.end()) {
      cells.variant_order.push_back(variant);
    }
    auto& runs = cells.runs[{variant, run.clients}];
    ++(side_a ? runs.attempted_a : runs.attempted_b);
    if (counts(run)) (side_a ? runs.a : runs.b).push_back(&run);
  };
  for (const auto& run : a) add(run, true);
  for (const auto& run : b) add(run, false);
  return cells;
}

template <typename Move, typename Before>
void keep_top(std::vector<Move>& moves, Before before) {
  std::stable_sort(moves.begin(), moves.end(), before);
  if (moves.size() > kTopWaits) moves.resize(kTopWaits);
}

template <typename Move>
void append(std::vector<Move>& to, std::vector<Move> from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

Comparison compare_runs(const std::vector<Run>& a, const std::vector<Run>& b, std::string label_a,
                        std::string label_b) {
  Comparison comparison;
  comparison.label_a = std::move(label_a);
  comparison.label_b = std::move(label_b);
  comparison.metric = metric_of(a, b);
  const Cells cells = group_cells(a, b);
  const auto assumed = pooled_log_sd(cells.runs, comparison.metric);
  for (const auto& variant : cells.variant_order) {
    for (const auto& [key, runs] : cells.runs) {  // map order: clients ascending in a variant
      if (key.first != variant) continue;
      comparison.cells.push_back(make_cell(variant, key.second, runs, assumed, comparison));
      append(comparison.waits, cell_wait_moves(variant, key.second, runs));
      append(comparison.functions, cell_function_moves(variant, key.second, runs));
      append(comparison.traced_waits, cell_traced_moves(variant, key.second, runs));
    }
  }
  keep_top(comparison.functions, [](const FunctionMove& x, const FunctionMove& y) {
    return std::abs(x.delta) > std::abs(y.delta);
  });
  keep_top(comparison.waits, [](const WaitMove& x, const WaitMove& y) {
    return std::abs(x.delta) > std::abs(y.delta);
  });
  // What moved beyond the spread first, then the most time.
  keep_top(comparison.traced_waits, [](const TracedWaitMove& x, const TracedWaitMove& y) {
    if (x.moved.empty() != y.moved.empty()) return !x.moved.empty();
    return std::max(x.aas.a, x.aas.b) > std::max(y.aas.a, y.aas.b);
  });
  if (comparison.metric == Metric::kTps) {
    comparison.scalability = scalability_shifts(a, b, cells.cross_variant);
  }
  return comparison;
}

SplitSides split_by_attribute(std::vector<Run> runs, const std::string& attribute) {
  std::vector<std::string> values;
  for (const auto& run : runs) {
    const auto value = run_attribute(run, attribute);
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  if (values.size() != 2) {
    throw std::invalid_argument(
        fmt::format("--split-by {} needs runs with exactly two values of {}, found {}{}", attribute,
                    attribute, values.size(),
                    values.empty() ? "" : fmt::format(" (\"{}\")", fmt::join(values, "\", \""))));
  }
  SplitSides sides;
  sides.label_a = fmt::format("{} {}", attribute, values[0].empty() ? "?" : values[0]);
  sides.label_b = fmt::format("{} {}", attribute, values[1].empty() ? "?" : values[1]);
  for (auto& run : runs) {
    (run_attribute(run, attribute) == values[0] ? sides.a : sides.b).push_back(std::move(run));
  }
  return sides;
}

}  // namespace pgwaitprof::model
