// Moves beyond the noise between two sets of runs.
#include "model/moves.h"

#include <cmath>

#include "model/statistics.h"

namespace pgwaitprof::model {

SideEstimate between_repeats(const std::vector<double>& values) {
  const auto runs = static_cast<double>(values.size());
  double mean = 0;
  for (double value : values) mean += value;
  mean /= runs;
  if (values.size() < 2) return {mean};
  double squares = 0;
  for (double value : values) squares += (value - mean) * (value - mean);
  return {mean, std::sqrt(squares / (runs - 1) / runs), runs - 1};
}

std::optional<bool> significant_move(const SideEstimate& a, const SideEstimate& b) {
  if (!std::isfinite(a.standard_error) || !std::isfinite(b.standard_error)) return std::nullopt;
  const double va = a.standard_error * a.standard_error;
  const double vb = b.standard_error * b.standard_error;
  const double delta = std::abs(b.mean - a.mean);
  if (va + vb == 0) return delta > 0;
  const double df = welch_satterthwaite_df(va, a.degrees_of_freedom, vb, b.degrees_of_freedom);
  return delta > student_t_quantile(0.975, df) * std::sqrt(va + vb);
}

}  // namespace pgwaitprof::model
