// The client counts of `clients: auto`.
#include "model/adaptive_sweep.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace pgwaitprof::model {
namespace {

// The doubling steps: 1, 2, 4, ... and the maximum itself as the last.
std::vector<int> doubling_steps(int max_clients) {
  std::vector<int> steps;
  for (long long count = 1; count < max_clients; count *= 2) {
    steps.push_back(static_cast<int>(count));
  }
  steps.push_back(max_clients);
  return steps;
}

// The count between two measured ones where the curve is looked at more closely: their
// geometric midpoint, rounded; none when they are neighbours.
void add_between(int low, int high, std::set<int>& counts) {
  if (high - low < 2) return;
  const int middle = static_cast<int>(std::lround(std::sqrt(static_cast<double>(low) * high)));
  counts.insert(std::clamp(middle, low + 1, high - 1));
}

}  // namespace

std::vector<int> next_client_counts(const std::map<int, double>& measured,
                                    const AdaptiveSweepOptions& options) {
  const auto steps = doubling_steps(std::max(1, options.max_clients));
  // The doubling phase: the first step not yet run, unless throughput stopped rising before it.
  size_t last = 0;  // the step where the doubling ended
  for (size_t index = 0; index < steps.size(); ++index) {
    const auto found = measured.find(steps[index]);
    if (found == measured.end()) return {steps[index]};
    last = index;
    if (index > 0) {
      const double previous = measured.at(steps[index - 1]);
      if (!(found->second > previous * (1 + options.min_rise))) break;
    }
  }
  // Around the knee: between the last two steps and the two before them.
  std::set<int> around;
  if (last >= 1) add_between(steps[last - 1], steps[last], around);
  if (last >= 2) add_between(steps[last - 2], steps[last - 1], around);
  std::vector<int> next;
  for (int count : around) {
    if (!measured.contains(count)) next.push_back(count);
  }
  return next;
}

std::vector<int> next_client_counts_of_variants(
    const std::vector<std::map<int, double>>& measured_by_variant,
    const AdaptiveSweepOptions& options) {
  std::set<int> counts;
  for (const auto& measured : measured_by_variant) {
    for (int count : next_client_counts(measured, options)) counts.insert(count);
  }
  return {counts.begin(), counts.end()};
}

}  // namespace pgwaitprof::model
