// The A/A calibration's pure parts: 3 + 3 splits, interval coverage, targets (calibrate_errors.h).
#include "tests/perf/calibrate_errors.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/statistics.h"

namespace pgwaitprof::calibration {

std::vector<Subset> subsets(size_t n, size_t k) {
  std::vector<Subset> result;
  if (k > n) return result;
  Subset chosen(k);
  std::iota(chosen.begin(), chosen.end(), 0);
  while (true) {
    result.push_back(chosen);
    // The rightmost index that can still move right, then everything after it packed behind.
    size_t position = k;
    while (position > 0 && chosen[position - 1] == n - k + position - 1) --position;
    if (position == 0) break;
    ++chosen[position - 1];
    for (size_t next = position; next < k; ++next) chosen[next] = chosen[next - 1] + 1;
  }
  return result;
}

std::vector<std::pair<Subset, Subset>> disjoint_pairs(size_t n, size_t k) {
  std::vector<std::pair<Subset, Subset>> result;
  if (k == 0) return result;
  const auto all = subsets(n, k);
  for (size_t first = 0; first < all.size(); ++first) {
    for (size_t second = first + 1; second < all.size(); ++second) {
      const auto& s = all[first];
      const auto& t = all[second];
      const bool disjoint = std::none_of(s.begin(), s.end(), [&](size_t index) {
        return std::find(t.begin(), t.end(), index) != t.end();
      });
      // Lexicographic order puts the subset with the smallest index first, so each unordered
      // pair appears once.
      if (disjoint) result.emplace_back(s, t);
    }
  }
  return result;
}

std::optional<double> Coverage::rate() const {
  const size_t runs = estimable_runs + unestimable_runs;
  if (estimable_runs < 3 || 2 * estimable_runs < runs || checks == 0) return std::nullopt;
  return static_cast<double>(inside) / static_cast<double>(checks);
}

Coverage prediction_coverage(std::span<const Estimate> estimates, double confidence) {
  Coverage coverage;
  for (size_t from = 0; from < estimates.size(); ++from) {
    const auto& source = estimates[from];
    if (!std::isfinite(source.error) || !(source.degrees_of_freedom > 0)) {
      ++coverage.unestimable_runs;
      continue;
    }
    ++coverage.estimable_runs;
    const double quantile =
        model::student_t_quantile(0.5 + confidence / 2, source.degrees_of_freedom);
    const double half_width = quantile * std::sqrt(2.0) * source.error;
    for (size_t to = 0; to < estimates.size(); ++to) {
      if (to == from) continue;
      ++coverage.checks;
      if (std::abs(estimates[to].value - source.value) <= half_width) ++coverage.inside;
    }
  }
  return coverage;
}

Coverage pairwise_coverage(std::span<const double> values,
                           const std::function<double(size_t from, size_t to)>& half_width) {
  Coverage coverage;
  for (size_t from = 0; from < values.size(); ++from) {
    size_t checks = 0;
    for (size_t to = 0; to < values.size(); ++to) {
      if (to == from) continue;
      const double width = half_width(from, to);
      if (!std::isfinite(width)) continue;
      ++checks;
      if (std::abs(values[to] - values[from]) <= width) ++coverage.inside;
    }
    coverage.checks += checks;
    ++(checks > 0 ? coverage.estimable_runs : coverage.unestimable_runs);
  }
  return coverage;
}

std::optional<double> dispersion_ratio(std::span<const Estimate> estimates) {
  if (estimates.size() < 2) return std::nullopt;
  double mean = 0;
  for (const auto& estimate : estimates) mean += estimate.value;
  mean /= static_cast<double>(estimates.size());
  double squares = 0;
  double error_squares = 0;
  size_t errors = 0;
  for (const auto& estimate : estimates) {
    squares += (estimate.value - mean) * (estimate.value - mean);
    if (std::isfinite(estimate.error)) {
      error_squares += estimate.error * estimate.error;
      ++errors;
    }
  }
  if (errors == 0 || error_squares <= 0) return std::nullopt;
  const double between = std::sqrt(squares / static_cast<double>(estimates.size() - 1));
  return between / std::sqrt(error_squares / static_cast<double>(errors));
}

std::string_view outcome_text(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kMissed:
      return "MISSED";
    case Outcome::kNotMeasured:
      return "NOT MEASURED";
  }
  return "?";
}

Outcome judge(const Target& target) {
  if (!target.value || !std::isfinite(*target.value)) return Outcome::kNotMeasured;
  const bool pass =
      target.at_least ? *target.value >= target.threshold : *target.value <= target.threshold;
  return pass ? Outcome::kPass : Outcome::kMissed;
}

int exit_status(std::span<const Outcome> outcomes) {
  return std::find(outcomes.begin(), outcomes.end(), Outcome::kNotMeasured) == outcomes.end() ? 0
                                                                                              : 1;
}

}  // namespace pgwaitprof::calibration
