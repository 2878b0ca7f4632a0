// A/B comparison of runs: which throughput differences are beyond run-to-run noise, and which
// wait events moved. Used by `pgwaitprof compare` on two runs or two matrix directories.
#include "exporters/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "exporters/text_format.h"

namespace pgwaitprof::exporters {

using namespace text_format;

namespace {

constexpr double kAlpha = 0.05;
// With one run per side there is no noise estimate at all; run-to-run variation of pgbench on an
// untuned host is commonly a few percent, so smaller differences are not called.
constexpr double kSingleRunThresholdPct = 5.0;
constexpr size_t kTopWaits = 15;
constexpr size_t kMinRepeatsForTest = 3;

// (max - min) / median in percent: the range is what engineers eyeball in the posted tables.
double relative_spread_pct(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
  const double mid = median(values);
  if (mid <= 0) return 0;
  return (*max_it - *min_it) / mid * 100;
}

double change_pct(double from, double to) {
  if (from == 0) return 0;
  return (to - from) / from * 100;
}

// The smallest two-sided p-value the exact test can produce is 2 / C(n_a + n_b, n_a): with
// 3 repeats per side it is 0.1 and with 3 and 4 it is 0.057, so the test can never say
// "significant" there, whatever the data. Those cells fall back to the noise-band rule.
bool rank_test_can_reach(size_t n_a, size_t n_b, double alpha) {
  double arrangements = 1;
  for (size_t k = 1; k <= n_a; ++k) {
    arrangements = arrangements * static_cast<double>(n_b + k) / static_cast<double>(k);
  }
  return 2 / arrangements < alpha;
}

// Two-sided p from the exact null distribution of the rank sum of `a` (no ties): the number of
// size-n_a subsets of ranks 1..N with each sum, by dynamic programming.
double exact_p(size_t n_a, size_t n_b, double u_a) {
  const size_t total = n_a + n_b;
  const size_t max_sum = total * (total + 1) / 2;
  // ways[k][s]: subsets of size k of the ranks seen so far summing to s.
  std::vector<std::vector<double>> ways(n_a + 1, std::vector<double>(max_sum + 1, 0));
  ways[0][0] = 1;
  for (size_t rank = 1; rank <= total; ++rank) {
    for (size_t k = std::min(rank, n_a); k >= 1; --k) {
      for (size_t sum = max_sum; sum >= rank; --sum) ways[k][sum] += ways[k - 1][sum - rank];
    }
  }
  const auto offset = static_cast<double>(n_a * (n_a + 1)) / 2;
  double all = 0, at_most = 0, at_least = 0;
  for (size_t sum = 0; sum <= max_sum; ++sum) {
    const double count = ways[n_a][sum];
    if (count == 0) continue;
    const double u = static_cast<double>(sum) - offset;
    all += count;
    if (u <= u_a + 1e-9) at_most += count;
    if (u >= u_a - 1e-9) at_least += count;
  }
  return std::min(1.0, 2 * std::min(at_most, at_least) / all);
}

std::string variant_text(const std::string& variant) {
  return variant.empty() ? "(none)" : variant;
}

bool counts(const model::Run& run) { return run.status == "completed" && run.loadgen.has_value(); }

// Non-idle counts of every completed run of a side, merged per display name: backend types and
// states of one wait event are one line in the hackers' tables.
struct PooledWaits {
  std::map<std::string, uint64_t> counts;
  uint64_t total = 0;
  uint64_t snapshots = 0;
};

PooledWaits pool_waits(const std::vector<model::Run>& runs) {
  model::Profile pooled;
  for (const auto& run : runs) {
    if (run.status == "completed") pooled.merge(run.profile);
  }
  PooledWaits result;
  for (const auto& [key, count] : pooled.counts()) {
    if (!model::is_idle(key)) result.counts[model::display_name(key)] += count;
  }
  result.total = pooled.total(false);
  result.snapshots = pooled.snapshots();
  return result;
}

std::vector<WaitMove> wait_moves(const std::vector<model::Run>& a,
                                 const std::vector<model::Run>& b) {
  const PooledWaits pooled_a = pool_waits(a);
  const PooledWaits pooled_b = pool_waits(b);
  std::set<std::string> names;
  for (const auto& [name, count] : pooled_a.counts) names.insert(name);
  for (const auto& [name, count] : pooled_b.counts) names.insert(name);

  std::vector<WaitMove> moves;
  for (const auto& name : names) {
    auto count_of = [&](const PooledWaits& pooled) {
      const auto found = pooled.counts.find(name);
      return found == pooled.counts.end() ? uint64_t{0} : found->second;
    };
    const auto stat_a =
        model::make_stat({}, count_of(pooled_a), pooled_a.total, pooled_a.snapshots);
    const auto stat_b =
        model::make_stat({}, count_of(pooled_b), pooled_b.total, pooled_b.snapshots);
    WaitMove move;
    move.wait = name;
    move.aas_a = stat_a.aas;
    move.aas_b = stat_b.aas;
    move.stderr_a = stat_a.aas_stderr;
    move.stderr_b = stat_b.aas_stderr;
    move.delta = move.aas_b - move.aas_a;
    if (move.aas_a > 0) {
      move.relative_pct = move.delta / move.aas_a * 100;
    } else if (move.aas_b > 0) {
      move.relative_pct = std::numeric_limits<double>::infinity();  // new on side B
    }
    move.significant = std::abs(move.delta) >
                       2 * std::sqrt(move.stderr_a * move.stderr_a + move.stderr_b * move.stderr_b);
    moves.push_back(std::move(move));
  }
  std::stable_sort(moves.begin(), moves.end(), [](const WaitMove& x, const WaitMove& y) {
    return std::abs(x.delta) > std::abs(y.delta);
  });
  if (moves.size() > kTopWaits) moves.resize(kTopWaits);
  return moves;
}

struct SideCell {
  std::vector<double> tps;
  std::vector<double> latency_ms;
  int runs = 0;  // including those that did not count
};

void decide(CompareCell& cell, const std::string& label_a, const std::string& label_b,
            const SideCell& side_a, const SideCell& side_b) {
  if (cell.tps_a.empty() || cell.tps_b.empty()) {
    const bool missing_a = cell.tps_a.empty();
    const SideCell& missing = missing_a ? side_a : side_b;
    const std::string& label = missing_a ? label_a : label_b;
    cell.verdict = missing.runs > 0 ? fmt::format("no completed runs in {}", label)
                                    : fmt::format("only in {}", missing_a ? label_b : label_a);
    return;
  }
  const std::string direction = cell.change_pct > 0   ? "faster"
                                : cell.change_pct < 0 ? "slower"
                                                      : "no significant change";
  const size_t n_a = cell.tps_a.size(), n_b = cell.tps_b.size();
  if (n_a >= kMinRepeatsForTest && n_b >= kMinRepeatsForTest) {
    cell.p_value = mann_whitney_p(cell.tps_a, cell.tps_b);
    // The rank test alone decides: it is robust to the one-off outlier run that would
    // otherwise blow up the min-max noise band.
    if (rank_test_can_reach(n_a, n_b, kAlpha)) {
      cell.verdict = *cell.p_value < kAlpha ? direction : "no significant change";
      return;
    }
  }
  const double threshold = (n_a == 1 && n_b == 1) ? kSingleRunThresholdPct : cell.noise_pct;
  cell.verdict = std::abs(cell.change_pct) > threshold ? direction : "no significant change";
}

std::string format_tps_cell(const std::vector<double>& tps, double mid) {
  if (tps.empty()) return "-";
  if (tps.size() == 1) return format_tps(mid);
  const auto [min_it, max_it] = std::minmax_element(tps.begin(), tps.end());
  return fmt::format("{} [{}-{}] x{}", format_tps(mid), format_tps(*min_it), format_tps(*max_it),
                     tps.size());
}

std::string format_pct(double pct) { return fmt::format("{:+.1f}%", pct); }

std::string format_p(const std::optional<double>& p) {
  if (!p) return "-";
  if (*p < 0.001) return "<0.001";
  return fmt::format("{:.3f}", *p);
}

bool single_runs(const CompareCell& cell) {
  return cell.tps_a.size() == 1 && cell.tps_b.size() == 1;
}

std::string verdict_text(const CompareCell& cell) {
  if (single_runs(cell)) return cell.verdict + " (single runs: no noise estimate)";
  if (cell.p_value && !rank_test_can_reach(cell.tps_a.size(), cell.tps_b.size(), kAlpha)) {
    return fmt::format("{} (by noise band: {}+{} repeats cannot reach p < {})", cell.verdict,
                       cell.tps_a.size(), cell.tps_b.size(), kAlpha);
  }
  return cell.verdict;
}

std::string format_relative(const WaitMove& move) {
  if (std::isinf(move.relative_pct)) return "new";
  return format_pct(move.relative_pct);
}

// When every cell has the same variant (one variant per side, or none) it goes in the heading.
bool one_variant(const Comparison& comparison) {
  return std::all_of(comparison.cells.begin(), comparison.cells.end(), [&](const CompareCell& c) {
    return c.variant == comparison.cells.front().variant;
  });
}

struct Tables {
  std::string heading;
  std::vector<std::vector<std::string>> throughput, latency, waits;
  std::vector<bool> throughput_right, latency_right, waits_right;
  bool any_single = false;
};

Tables build_tables(const Comparison& comparison) {
  Tables tables;
  const bool variant_column = !comparison.cells.empty() && !one_variant(comparison);
  tables.heading = fmt::format("A = {}, B = {}", comparison.label_a, comparison.label_b);
  if (!comparison.cells.empty() && !variant_column && !comparison.cells.front().variant.empty()) {
    tables.heading += fmt::format(" (variant {})", comparison.cells.front().variant);
  }

  std::vector<std::string> header{
      "clients", "A: " + comparison.label_a, "B: " + comparison.label_b, "change", "noise", "p",
      "verdict"};
  tables.throughput_right = {true, true, true, true, true, true, false};
  std::vector<std::string> latency_header{"clients", "A ms", "B ms", "change"};
  tables.latency_right = {true, true, true, true};
  if (variant_column) {
    header.insert(header.begin(), "variant");
    latency_header.insert(latency_header.begin(), "variant");
    tables.throughput_right.insert(tables.throughput_right.begin(), false);
    tables.latency_right.insert(tables.latency_right.begin(), false);
  }
  tables.throughput.push_back(header);
  tables.latency.push_back(latency_header);
  for (const auto& cell : comparison.cells) {
    const bool both = !cell.tps_a.empty() && !cell.tps_b.empty();
    std::vector<std::string> row{
        std::to_string(cell.clients),
        format_tps_cell(cell.tps_a, cell.median_a),
        format_tps_cell(cell.tps_b, cell.median_b),
        both ? format_pct(cell.change_pct) : "-",
        both && !single_runs(cell) ? fmt::format("{:.1f}%", cell.noise_pct) : "-",
        format_p(cell.p_value),
        verdict_text(cell)};
    std::vector<std::string> latency_row{
        std::to_string(cell.clients),
        cell.tps_a.empty() ? "-" : fmt::format("{:.3f}", cell.latency_a_ms),
        cell.tps_b.empty() ? "-" : fmt::format("{:.3f}", cell.latency_b_ms),
        both ? format_pct(cell.latency_change_pct) : "-"};
    if (variant_column) {
      row.insert(row.begin(), cell.variant);
      latency_row.insert(latency_row.begin(), cell.variant);
    }
    tables.any_single |= single_runs(cell);
    tables.throughput.push_back(std::move(row));
    tables.latency.push_back(std::move(latency_row));
  }

  tables.waits.push_back({"wait", "AAS A", "AAS B", "delta", "relative", "significant"});
  tables.waits_right = {false, true, true, true, true, false};
  for (const auto& move : comparison.waits) {
    tables.waits.push_back({move.wait, fmt::format("{:.3f} ± {:.3f}", move.aas_a, move.stderr_a),
                            fmt::format("{:.3f} ± {:.3f}", move.aas_b, move.stderr_b),
                            fmt::format("{:+.3f}", move.delta), format_relative(move),
                            move.significant ? "yes" : "no"});
  }
  return tables;
}

}  // namespace

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 1;
  const size_t n_a = a.size(), n_b = b.size(), total = n_a + n_b;

  // Mid-ranks over the pooled sample; tied groups feed the variance correction.
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  pooled.reserve(total);
  for (const double value : a) pooled.emplace_back(value, true);
  for (const double value : b) pooled.emplace_back(value, false);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (size_t first = 0; first < total;) {
    size_t last = first;
    while (last + 1 < total && pooled[last + 1].first == pooled[first].first) ++last;
    const auto group = static_cast<double>(last - first + 1);
    const double mid_rank = (static_cast<double>(first + last) / 2) + 1;
    for (size_t index = first; index <= last; ++index) {
      if (pooled[index].second) rank_sum_a += mid_rank;
    }
    if (group > 1) {
      ties = true;
      tie_term += group * group * group - group;
    }
    first = last + 1;
  }
  const double u_a = rank_sum_a - static_cast<double>(n_a * (n_a + 1)) / 2;

  if (n_a <= 10 && n_b <= 10 && !ties) return exact_p(n_a, n_b, u_a);

  const auto n1 = static_cast<double>(n_a);
  const auto n2 = static_cast<double>(n_b);
  const double n = n1 + n2;
  const double mean = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return 1;  // every value tied: nothing to tell the sides apart
  const double z = std::max(0.0, std::abs(u_a - mean) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

Comparison compare_runs(const std::vector<model::Run>& a, const std::vector<model::Run>& b,
                        std::string label_a, std::string label_b) {
  Comparison comparison;
  comparison.label_a = std::move(label_a);
  comparison.label_b = std::move(label_b);

  // Comparing the "master" matrix with the "patched" one: the variant names differ by
  // construction, so cells are matched by client count alone.
  std::set<std::string> variants_a, variants_b;
  for (const auto& run : a) variants_a.insert(run.variant);
  for (const auto& run : b) variants_b.insert(run.variant);
  const bool cross_variant = variants_a.size() == 1 && variants_b.size() == 1 &&
                             *variants_a.begin() != *variants_b.begin();
  const std::string cross_text = cross_variant
                                     ? fmt::format("{} vs {}", variant_text(*variants_a.begin()),
                                                   variant_text(*variants_b.begin()))
                                     : "";

  using CellKey = std::pair<std::string, int>;
  std::vector<std::string> variant_order;
  std::map<CellKey, std::pair<SideCell, SideCell>> sides;
  auto add = [&](const model::Run& run, bool side_a) {
    const std::string variant = cross_variant ? cross_text : run.variant;
    if (std::find(variant_order.begin(), variant_order.end(), variant) == variant_order.end()) {
      variant_order.push_back(variant);
    }
    auto& pair = sides[{variant, run.clients}];
    SideCell& side = side_a ? pair.first : pair.second;
    ++side.runs;
    if (!counts(run)) return;
    side.tps.push_back(run.loadgen->tps);
    if (std::isfinite(run.loadgen->latency_avg_ms))
      side.latency_ms.push_back(run.loadgen->latency_avg_ms);
  };
  for (const auto& run : a) add(run, true);
  for (const auto& run : b) add(run, false);

  for (const auto& variant : variant_order) {
    for (const auto& [key, pair] : sides) {  // map order: clients ascending within a variant
      if (key.first != variant) continue;
      const auto& [side_a, side_b] = pair;
      CompareCell cell;
      cell.variant = variant;
      cell.clients = key.second;
      cell.tps_a = side_a.tps;
      cell.tps_b = side_b.tps;
      cell.median_a = median(side_a.tps);
      cell.median_b = median(side_b.tps);
      cell.latency_a_ms = median(side_a.latency_ms);
      cell.latency_b_ms = median(side_b.latency_ms);
      if (!side_a.tps.empty() && !side_b.tps.empty()) {
        cell.change_pct = change_pct(cell.median_a, cell.median_b);
        cell.latency_change_pct = change_pct(cell.latency_a_ms, cell.latency_b_ms);
        cell.noise_pct = std::max(relative_spread_pct(side_a.tps), relative_spread_pct(side_b.tps));
      }
      decide(cell, comparison.label_a, comparison.label_b, side_a, side_b);
      comparison.cells.push_back(std::move(cell));
    }
  }
  comparison.waits = wait_moves(a, b);
  return comparison;
}

std::string render_comparison_text(const Comparison& comparison) {
  const Tables tables = build_tables(comparison);
  std::string out = tables.heading + "\n\n";
  out += "throughput, tps: median [min-max] xN repeats\n";
  out += text_table(tables.throughput, tables.throughput_right);
  out += "\nlatency, ms (median of the runs' averages)\n";
  out += text_table(tables.latency, tables.latency_right);
  out += "\nwait events that moved (average active sessions ± standard error, pooled runs)\n";
  if (comparison.waits.empty()) {
    out += "(no wait samples)\n";
  } else {
    out += text_table(tables.waits, tables.waits_right);
  }
  return out;
}

std::string render_comparison_markdown(const Comparison& comparison) {
  const Tables tables = build_tables(comparison);
  std::string out = "## Comparison: " + markdown_escape(tables.heading) + "\n\n";
  out += "### Throughput (tps: median [min-max] xN repeats)\n\n";
  out += markdown_table(tables.throughput, tables.throughput_right);
  out += "\n### Latency (ms, median of the runs' averages)\n\n";
  out += markdown_table(tables.latency, tables.latency_right);
  out += "\n### Wait events that moved (AAS ± standard error, pooled runs)\n\n";
  if (comparison.waits.empty()) {
    out += "No wait samples.\n";
  } else {
    out += markdown_table(tables.waits, tables.waits_right);
  }
  return out;
}

std::string render_comparison_json(const Comparison& comparison) {
  using nlohmann::json;
  // JSON has no infinity: a wait new on side B has a null relative change.
  auto finite_or_null = [](double value) { return std::isfinite(value) ? json(value) : json(); };
  json cells = json::array();
  for (const auto& cell : comparison.cells) {
    cells.push_back({{"variant", cell.variant},
                     {"clients", cell.clients},
                     {"tps_a", cell.tps_a},
                     {"tps_b", cell.tps_b},
                     {"median_a", cell.median_a},
                     {"median_b", cell.median_b},
                     {"change_pct", cell.change_pct},
                     {"noise_pct", cell.noise_pct},
                     {"p_value", cell.p_value ? json(*cell.p_value) : json()},
                     {"verdict", cell.verdict},
                     {"single_runs", single_runs(cell)},
                     {"latency_a_ms", cell.latency_a_ms},
                     {"latency_b_ms", cell.latency_b_ms},
                     {"latency_change_pct", cell.latency_change_pct}});
  }
  json waits = json::array();
  for (const auto& move : comparison.waits) {
    waits.push_back({{"wait", move.wait},
                     {"aas_a", move.aas_a},
                     {"aas_b", move.aas_b},
                     {"stderr_a", move.stderr_a},
                     {"stderr_b", move.stderr_b},
                     {"delta", move.delta},
                     {"relative_pct", finite_or_null(move.relative_pct)},
                     {"significant", move.significant}});
  }
  json document = {{"label_a", comparison.label_a},
                   {"label_b", comparison.label_b},
                   {"cells", std::move(cells)},
                   {"waits", std::move(waits)}};
  return document.dump(2) + "\n";
}

}  // namespace pgwaitprof::exporters
