// A change at the end of a series: the case the daemon meets after each run, when the new level
// has only a few runs. E-Divisive's permutation test (model/change_points.h) is weak there: with
// k runs after a split among n, only C(n, k) orders exist and the energy statistic of a short
// tail varies much under them, so a 10 % step of tps with a 4 % run-to-run noise is found
// within 3 runs in about half the histories.
//
// The test here: for each k of [min_runs, max_runs], the mean of the last k values against the
// values before them (at most max_before, at least min_before), scaled by the standard deviation
// of those before: t_k = (mean_tail - mean_before) / (sd_before x sqrt(1/k + 1/n_before)). For
// values with normal noise t_k has Student's t distribution with n_before - 1 degrees of freedom
// (the prediction interval of the mean of k new observations: Hahn and Meeker, "Statistical
// Intervals", 1991, section 4.7), so its p-value is exact; the smallest p over the k tested is
// Bonferroni-adjusted (times the number of k tested). A k counts as tested but gives no p when
// its tail is not one new level: a run of it lies on the other side of the mean before than the
// tail's mean, or farther from the tail's mean than 3 sds (of the runs before) or a quarter of
// the step (one slow run
// among normal ones is not a level, nor is the last run of the old level beside one of a much
// lower new one: that change has one run yet, and min_runs are needed). A change kept when that is
// at most a probability alpha is found in a series without change with a probability of at most
// alpha per analysis, and a series analysed after every run gets at most alpha false alarms per run
// (the union bound over the analyses).
//
// The standard deviation rather than a robust scale: under normal noise its t is exact (a
// robust scale's distribution needs simulation), and a slow run among those before inflates it,
// so heavy-tailed noise makes the test conservative instead of raising false alarms.
//
// Pure function on vectors.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace pgwaitprof::model {

// The direction of change a test looks for.
enum class ChangeDirection { kEither, kRise, kFall };

struct EndChangeOptions {
  size_t min_runs = 2;     // runs of the new level, at least (one odd run is not a level)
  size_t max_runs = 3;     // and at most: beyond, E-Divisive's permutation test has them
  size_t min_before = 10;  // runs before the new level, at least (for a usable sd)
  size_t max_before = 40;  // and at most (the nearest): a slow drift over a long history
                           // is not a change of the last runs
  ChangeDirection direction = ChangeDirection::kEither;
  // The sd of the runs before is taken as at least this: runs that are copies of one (sd 0)
  // still give a test, and noise far below the smallest step that matters is not trusted.
  double min_sd = 0;
};

struct EndChange {
  size_t index = 0;                        // the first value of the new level
  size_t runs = 0;                         // k: values from index to the end
  double t = 0;                            // t_k
  double p_value = 1;                      // Bonferroni-adjusted: min p_k x the number of k tested
  double mean_before = 0, mean_after = 0;  // of the values compared
};

// The most significant change at the end of `values` (finite): of the k tested, the one with the
// smallest p, whatever it is (the caller compares its adjusted p with its alpha). nullopt when
// no k can be tested (too few values, or the values before are all equal and min_sd is 0).
std::optional<EndChange> find_end_change(std::span<const double> values,
                                         const EndChangeOptions& options = {});

}  // namespace pgwaitprof::model
