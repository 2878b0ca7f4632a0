// The last k values against those before them, Student's t, Bonferroni over k.
#include "model/end_change.h"

#include <algorithm>
#include <cmath>

#include "model/statistics.h"

namespace pgwaitprof::model {

namespace {

// One-sided p of t for a change in `direction` (two-sided for kEither).
double p_of(double t, double degrees_of_freedom, ChangeDirection direction) {
  const double upper = student_t_upper_tail(std::abs(t), degrees_of_freedom);
  switch (direction) {
    case ChangeDirection::kRise:
      return t > 0 ? upper : 1 - upper;
    case ChangeDirection::kFall:
      return t < 0 ? upper : 1 - upper;
    case ChangeDirection::kEither:
      break;
  }
  return std::min(1.0, 2 * upper);
}

// Whether every run of the tail lies on the side of the mean before that the tail's mean moved
// to: a level, not one slow run among normal ones (whose mean alone may look like a step), and
// not the last run of the old level counted in the new one.
bool every_run_moved(std::span<const double> tail, double mean_before, double t) {
  return std::all_of(tail.begin(), tail.end(), [&](double value) {
    return t > 0 ? value > mean_before : value < mean_before;
  });
}

// Whether the tail's runs agree with each other: none farther from the tail's mean than
// kAgreement sds (of the runs before) or a quarter of the step. Runs of one new level differ by
// noise only (with 2 runs, one is 3 sds away with a probability of 2e-5); the last run of the
// old level beside a run of a much lower or higher new one is half the pair's step away.
constexpr double kAgreement = 3;
bool runs_agree(std::span<const double> tail, double mean_before, double mean_after, double sd) {
  const double allowed = std::max(kAgreement * sd, std::abs(mean_after - mean_before) / 4);
  return std::all_of(tail.begin(), tail.end(),
                     [&](double value) { return std::abs(value - mean_after) <= allowed; });
}

}  // namespace

std::optional<EndChange> find_end_change(std::span<const double> values,
                                         const EndChangeOptions& options) {
  std::optional<EndChange> best;
  size_t tested = 0;
  const size_t first = std::max<size_t>(options.min_runs, 1);
  for (size_t runs = first; runs <= options.max_runs && runs < values.size(); ++runs) {
    const size_t split = values.size() - runs;
    const size_t before_count = std::min(split, options.max_before);
    if (before_count < std::max<size_t>(options.min_before, 2)) break;
    const auto before = values.subspan(split - before_count, before_count);
    const auto tail = values.subspan(split);
    const double sd = std::max(sample_sd(before), options.min_sd);
    if (!(sd > 0)) continue;
    ++tested;
    const double mean_before = sample_mean(before);
    const double mean_after = sample_mean(tail);
    const double scale =
        sd * std::sqrt(1.0 / static_cast<double>(runs) + 1.0 / static_cast<double>(before_count));
    const double t = (mean_after - mean_before) / scale;
    // Still counted in `tested`: the rules only ever take a k away.
    if (!every_run_moved(tail, mean_before, t) || !runs_agree(tail, mean_before, mean_after, sd)) {
      continue;
    }
    const double p = p_of(t, static_cast<double>(before_count - 1), options.direction);
    // Equal p (both 0 far in the tail): the larger t.
    if (!best || p < best->p_value || (p == best->p_value && std::abs(t) > std::abs(best->t))) {
      best = EndChange{split, runs, t, p, mean_before, mean_after};
    }
  }
  if (best) best->p_value = std::min(1.0, best->p_value * static_cast<double>(tested));
  return best;
}

}  // namespace pgwaitprof::model
