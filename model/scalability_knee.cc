// A sweep's knee (where efficiency per client falls below the threshold, or the cells leave the
// fitted curve), the waits whose share grows across it, and one variant's analysis from fit to
// headline (see scalability.h; the fit itself is in scalability.cc).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "model/scalability.h"
#include "model/statistics.h"

namespace pgwaitprof::model {

Knee find_knee(std::span<const ScalabilityCell> cells, const UslFit& fit,
               const ScalabilityOptions& options) {
  Knee knee;
  knee.threshold = options.knee_efficiency;
  knee.departure = options.departure;
  for (const auto& cell : cells) {
    if (cell.clients == 1 && cell.tps_median > 0) {
      knee.single_client_tps = cell.tps_median;
      knee.single_client_measured = true;
    }
  }
  if (!knee.single_client_measured && fit.fitted) knee.single_client_tps = fit.parameters.lambda;
  if (!(knee.single_client_tps > 0)) return knee;
  for (const auto& cell : cells) {
    if (!(cell.tps_median > 0)) continue;
    const double efficiency = cell.tps_median / (cell.clients * knee.single_client_tps);
    knee.efficiency.push_back({cell.clients, efficiency});
    if (!knee.clients && efficiency < options.knee_efficiency) knee.clients = cell.clients;
    if (fit.fitted && !knee.departs_from_fit &&
        std::abs(cell.tps_median / usl_throughput(fit.parameters, cell.clients) - 1) >
            options.departure) {
      knee.departs_from_fit = cell.clients;
    }
  }
  return knee;
}

std::vector<WaitGrowth> wait_growth(std::span<const ScalabilityCell> cells, int knee_clients,
                                    bool classes) {
  struct Side {
    size_t cells = 0;
    double share = 0, share_variance = 0, aas_per_client = 0, aas_variance = 0;
  };
  struct Sides {
    std::string wait_class;
    Side below, above;
  };
  std::map<std::string, Sides> by_name;
  size_t cells_below = 0, cells_above = 0;
  for (const auto& cell : cells) {
    if (!cell.has_profile) continue;
    (cell.clients < knee_clients ? cells_below : cells_above)++;
    for (const auto& share : classes ? cell.classes : cell.events) {
      auto& sides = by_name[share.name];
      sides.wait_class = share.wait_class;
      auto& side = cell.clients < knee_clients ? sides.below : sides.above;
      side.share += share.share;
      // An unknown error (a run too short for batch means) leaves the change's error unknown.
      side.share_variance += share.share_error * share.share_error;
      side.aas_per_client += share.aas / cell.clients;
      side.aas_variance += std::pow(share.aas_error / cell.clients, 2);
    }
  }
  std::vector<WaitGrowth> growth;
  if (cells_below == 0 || cells_above == 0) return growth;
  const auto below = static_cast<double>(cells_below);
  const auto above = static_cast<double>(cells_above);
  for (const auto& [name, sides] : by_name) {
    WaitGrowth entry;
    entry.name = name;
    entry.wait_class = sides.wait_class;
    entry.share_below = sides.below.share / below;
    entry.share_above = sides.above.share / above;
    entry.share_change = entry.share_above - entry.share_below;
    entry.share_change_error = std::sqrt(sides.below.share_variance / (below * below) +
                                         sides.above.share_variance / (above * above));
    entry.aas_per_client_below = sides.below.aas_per_client / below;
    entry.aas_per_client_above = sides.above.aas_per_client / above;
    entry.aas_per_client_change = entry.aas_per_client_above - entry.aas_per_client_below;
    entry.aas_per_client_change_error = std::sqrt(sides.below.aas_variance / (below * below) +
                                                  sides.above.aas_variance / (above * above));
    growth.push_back(std::move(entry));
  }
  std::stable_sort(growth.begin(), growth.end(), [](const WaitGrowth& a, const WaitGrowth& b) {
    return a.share_change > b.share_change;
  });
  return growth;
}

VariantScalability analyse_scalability(const std::string& variant,
                                       std::span<const ThroughputPoint> points,
                                       std::span<const ScalabilityCell> cells,
                                       const ScalabilityOptions& options) {
  VariantScalability result;
  result.variant = variant;
  result.fit = fit_usl(points, options);
  if (!result.fit.fitted) {
    result.headline = "no scalability model: " + result.fit.reason;
    return result;
  }
  result.knee = find_knee(cells, result.fit, options);
  if (!result.knee.clients) {
    result.headline = fmt::format("no knee: efficiency stays at or above {:.0f} % up to {} clients",
                                  100 * options.knee_efficiency, result.fit.max_clients);
    return result;
  }
  result.classes = wait_growth(cells, *result.knee.clients, true);
  result.events = wait_growth(cells, *result.knee.clients, false);
  result.headline = fmt::format("knee at {} clients", *result.knee.clients);
  std::string named;
  size_t shown = 0;
  for (const auto& event : result.events) {
    if (shown == 3 || event.share_change <= 0) break;
    named += fmt::format("{}{} {:.0f} % → {:.0f} %", shown == 0 ? "" : ", ", event.name,
                         100 * event.share_below, 100 * event.share_above);
    ++shown;
  }
  if (!named.empty()) {
    result.headline += ": " + named;
  } else if (result.events.empty()) {
    result.headline += ": no samples on both sides of it";
  } else {
    result.headline += ": no wait event's share grows across it";
  }
  return result;
}

FigureDifference compare_figures(const UslFigure& a, const UslFigure& b, double confidence) {
  FigureDifference difference;
  difference.comparable = a.constrained && b.constrained;
  if (!difference.comparable) return difference;
  const double z95 = normal_quantile(0.975);
  const double error_a = (a.high - a.low) / (2 * z95);
  const double error_b = (b.high - b.low) / (2 * z95);
  const double combined = std::sqrt(error_a * error_a + error_b * error_b);
  difference.differ = combined > 0 && std::abs(a.value - b.value) / combined >
                                          normal_quantile(1 - (1 - confidence) / 2);
  return difference;
}

}  // namespace pgwaitprof::model
