// Change points in a series of runs: E-Divisive with means (Matteson and James 2014, as MongoDB
// uses it: Daly et al., "Change Point Detection in Software Performance Testing", ICPE 2020,
// and its signal-processing-algorithms package). The series is split where the energy
// statistic between the part before and the part after is largest; the split is kept when a
// permutation test says a series without change would reach that statistic with a probability
// of at most `false_positive`; then each segment is searched again. Splits whose step between
// the neighbouring segments' means is below `min_relative_change` are merged away (as Apache
// Otava does with its minimum magnitude): statistically real but too small to matter.
//
// A change at the end of the series, where the new level has only a few runs (what the daemon
// meets after each run), is also tested with the end test of model/end_change.h, which is
// more powerful there than the permutation test; the accepted false-positive probability is
// split between the two, so that together they keep it.
//
// Pure functions on vectors. The permutations come from a seeded engine with a platform-
// independent draw, so the same series gives the same answer everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model/end_change.h"

namespace pgwaitprof::model {

// The energy statistics of two samples, as signal-processing-algorithms names them: e the
// E-statistic (2 E|X-Y| - E|X-X'| - E|Y-Y'|, with the within-sample means over n^2 pairs),
// t = n m / (n + m) x e the test statistic, h = e / (2 E|X-Y|) the coefficient of
// inhomogeneity. Throws std::invalid_argument on an empty sample.
struct EnergyStatistics {
  double e = 0;
  double t = 0;
  double h = 0;
};
EnergyStatistics energy_statistics(std::span<const double> x, std::span<const double> y);

// t of every split of `series`: element tau is t(series[0, tau), series[tau, n)); 0 for tau 0.
// O(n log n) without a distance matrix (a 10,000-run history needs no 800 MB).
std::vector<double> split_statistics(std::span<const double> series);

struct ChangePointOptions {
  // The accepted probability that a series without change gets a change point (per series).
  double false_positive = 0.01;
  // The smallest step that matters, relative to the mean before it (0.02 = 2 %).
  double min_relative_change = 0.02;
  // Runs on each side of a change point, at least: one odd run is not a level.
  size_t min_segment = 2;
  size_t permutations = 499;
  uint64_t seed = 49;
  // Search the logs of the values (all must be positive) and give segments their geometric
  // means: for throughput and latency, whose noise is a ratio (a busy host costs a fraction of
  // tps), so that a run at 1,300 among runs at 3,000 is not nearer to a level of 30.
  bool log_scale = false;
  // The end test (model/end_change.h) on the last segment: its last min_segment to end_runs
  // runs against the runs before them; 0 for E-Divisive alone. It gets end_share of
  // false_positive, the permutation test the rest; it looks for a change in end_direction only
  // (a regression: tps falling, latency and waits rising), the permutation test for either.
  size_t end_runs = 3;
  double end_share = 0.5;
  ChangeDirection end_direction = ChangeDirection::kEither;
};

struct ChangePoint {
  size_t index = 0;  // the first run of the new level
  double p_value = 1;
  double mean_before = 0;  // of the whole segments on each side (not a window); geometric
                           // with log_scale
  double mean_after = 0;
  double relative_change = 0;  // mean_after / mean_before - 1
};

struct Segment {
  size_t begin = 0;  // [begin, end)
  size_t end = 0;
  double mean = 0;
};

struct ChangePoints {
  std::vector<ChangePoint> points;  // by index
  std::vector<Segment> segments;    // one more than points, covering the series
  // The fewest runs with which any change could pass the permutation test at
  // `false_positive` (a clean step in the middle); the series had fewer when too_short.
  size_t runs_needed = 0;
  bool too_short = false;
};

// Values must be finite; any number of them (too_short says when they cannot show a change).
ChangePoints find_change_points(std::span<const double> series,
                                const ChangePointOptions& options = {});

// The fewest values with which a permutation test over splits can reach p <= its share of
// false_positive: the smallest n with 2 / C(n, floor(n / 2)) <= that, and at least two
// segments.
size_t runs_needed_for(const ChangePointOptions& options);

// The shares of false_positive: the permutation test's and the end test's (0 without it).
double divisive_false_positive(const ChangePointOptions& options);
double end_false_positive(const ChangePointOptions& options);

}  // namespace pgwaitprof::model
