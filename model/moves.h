// Whether a figure moved between two sets of runs beyond their noise: the mean of one value per
// run with its standard error between the runs, and Welch's t on the difference. `compare`
// judges wait events' and functions' moves with it, `trend` the waits across a change point.
#pragma once

#include <limits>
#include <optional>
#include <vector>

namespace pgwaitprof::model {

// A side's mean, its standard error and that error's degrees of freedom: between repeats with
// two runs or more (runs - 1), or from a single run's batch means (batches - 1; the error NaN
// when it is too short).
struct SideEstimate {
  double mean = 0;
  double standard_error = std::numeric_limits<double>::quiet_NaN();
  double degrees_of_freedom = 0;
};

// The mean of one value per run and, with two runs or more, its standard error between them.
SideEstimate between_repeats(const std::vector<double>& values);

// Whether |b - a| is beyond the 95 % band of the combined error: Welch's t with
// Welch-Satterthwaite degrees of freedom (3 + 3 repeats have 2 to 4, where 1.96 would call
// about one A/A move in ten significant); nullopt when an error is unknown.
std::optional<bool> significant_move(const SideEstimate& a, const SideEstimate& b);

}  // namespace pgwaitprof::model
