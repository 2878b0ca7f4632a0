// The pure parts of the A/A calibration (tests/perf/calibrate_errors.sh, issue 11): the 3 + 3
// splits of a set of runs, the coverage of one run's 95 % interval over the other runs'
// estimates, and the targets' outcomes. Unit-tested on synthetic data
// (tests/perf/calibrate_errors_test.cc); calibrate_errors_main.cc applies them to real runs.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pgwaitprof::calibration {

using Subset = std::vector<size_t>;  // indices into a list of runs, ascending

// Every k-element subset of {0, ..., n - 1}, in lexicographic order: C(n, k) of them.
std::vector<Subset> subsets(size_t n, size_t k);

// Every unordered pair {S, T} of disjoint k-element subsets of {0, ..., n - 1}, each pair once
// (S holds the smallest index of the two): C(n, k) C(n - k, k) / 2 of them, 2100 for 3 + 3 of
// 10 runs. Ordered pairs would count each comparison twice, once per side, and a two-sided
// test gives both the same verdict.
std::vector<std::pair<Subset, Subset>> disjoint_pairs(size_t n, size_t k);

// One run's estimate of a figure (a wait event's share, tps) and its standard error.
struct Estimate {
  double value = 0;
  double error = std::numeric_limits<double>::quiet_NaN();  // NaN: not estimable
  // Of the t quantile; infinity for an error taken as exact (the binomial formula).
  double degrees_of_freedom = std::numeric_limits<double>::infinity();
};

// How often another run's estimate falls inside the 95 % interval made from one run. The
// interval is for where a repeat of the same configuration should land:
// x_i ± t(df_i) * sqrt(2) * se_i, since the other run's estimate x_j carries noise of its own
// (about se_i again). With correct errors that covers 95 %; checking x_j against the interval
// for the mean, x_i ± t * se_i, would cover only 83 % even then.
struct Coverage {
  size_t inside = 0;            // checks where x_j fell inside run i's interval
  size_t checks = 0;            // (i, j) with i estimable and j != i
  size_t estimable_runs = 0;    // runs whose interval could be made
  size_t unestimable_runs = 0;  // runs whose error was NaN
  // inside / checks; nullopt when too few runs had an interval to say anything (fewer than
  // half of them, or fewer than 3): the figure would come from a selected minority.
  std::optional<double> rate() const;
};
Coverage prediction_coverage(std::span<const Estimate> estimates, double confidence = 0.95);

// The same count for intervals that depend on the pair: x_j inside x_i ± half_width(i, j), for
// every ordered pair i != j. Run-to-run intervals are made that way, leaving both runs out of
// the history the spread comes from. NaN: no interval; a run with none for any j is not
// estimable.
Coverage pairwise_coverage(std::span<const double> values,
                           const std::function<double(size_t from, size_t to)>& half_width);

// Standard deviation of the values between runs over the root mean square of the errors
// reported, as in issue 11's table: about 1 for honest errors, 3 for errors three times too
// narrow. nullopt with fewer than 2 values or no finite error.
std::optional<double> dispersion_ratio(std::span<const Estimate> estimates);

// A figure against its threshold.
enum class Outcome { kPass, kMissed, kNotMeasured };
std::string_view outcome_text(Outcome outcome);  // "PASS", "MISSED", "NOT MEASURED"

struct Target {
  std::string name;             // "coverage of tps"
  std::optional<double> value;  // nullopt: could not be measured
  double threshold = 0;         // in the same unit as value
  bool at_least = true;         // value >= threshold passes (else value <= threshold)
};
Outcome judge(const Target& target);

// 1 when any figure could not be measured, else 0 (a missed target is a result, not an error).
int exit_status(std::span<const Outcome> outcomes);

}  // namespace pgwaitprof::calibration
