// Error bars that survive autocorrelation, steady-state detection and A/B tests across repeats:
// pure statistics on vectors, no knowledge of runs or reports.
//
// Per-interval series (per-second AAS of one wait event, per-second tps) are strongly
// autocorrelated: a 3 s lock stall fills 300 consecutive snapshots at 100 Hz, so the binomial
// sqrt(p(1-p)/n) over snapshots is several times too narrow. The estimators here treat the
// interval series as a time series (batch means), and repeats of a run as the unit of an A/B
// comparison (Welch's t-test on the log scale).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "base/time.h"

namespace pgwaitprof::model {

// Not a number and infinity, the statistics' marks of "cannot be estimated" and "unbounded".
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The middle value, or the mean of the two middle values; 0 for an empty sample.
double median(std::vector<double> values);
// The mean of a sample; NaN for an empty one.
double sample_mean(std::span<const double> values);
// The sample variance (n - 1 denominator) about `mean`; 0 for fewer than two values.
double sample_variance(std::span<const double> values, double mean);
// The sample standard deviation (n - 1 denominator); 0 for fewer than two values.
double sample_sd(std::span<const double> values);
// The standard error of the mean, sample_sd / sqrt(n); 0 for fewer than two values.
double standard_error_of_mean(std::span<const double> values);

// --- Distributions -------------------------------------------------------------------------

double normal_cdf(double x);
// Inverse of normal_cdf, for 0 < probability < 1 (-inf and +inf at 0 and 1).
double normal_quantile(double probability);
// I_x(a, b), the regularized incomplete beta function, for a, b > 0 and 0 <= x <= 1.
double regularized_incomplete_beta(double a, double b, double x);
// Student t with `degrees_of_freedom` > 0 (need not be an integer; infinity gives the normal).
double student_t_cdf(double t, double degrees_of_freedom);
double student_t_quantile(double probability, double degrees_of_freedom);
// P(T > t) for t >= 0, accurate far into the tail (where 1 - student_t_cdf loses digits).
double student_t_upper_tail(double t, double degrees_of_freedom);
// Welch-Satterthwaite degrees of freedom of the sum of two variances (of means), each
// estimated on its own degrees of freedom: (va + vb)^2 / (va^2 / df_a + vb^2 / df_b); NaN when
// both variances are 0.
// An unbiased integer in [0, bound) from a 64-bit engine, the same on every platform (unlike
// std::uniform_int_distribution, whose algorithm is up to the library).
uint64_t uniform_index(std::mt19937_64& engine, uint64_t bound);
// n choose k as a double.
double binomial_coefficient(size_t n, size_t k);
double welch_satterthwaite_df(double variance_a, double df_a, double variance_b, double df_b);

// --- Mean of an autocorrelated series (batch means) ----------------------------------------

struct BatchMeansOptions {
  // Fewer batches make the standard error itself too noisy to print.
  size_t min_batches = 10;
  // The batch size grows until the lag-1 autocorrelation of the batch means (bias-corrected)
  // falls below this; what remains is corrected for (see statistics.cc).
  double max_batch_autocorrelation = 0.3;
  // Batches the chosen size must leave for the estimate to count as reliable. A short series
  // can look uncorrelated by chance at its last few batch sizes: with 60 intervals of an AR(1)
  // at phi 0.9, 19 % of the series settled at 10 batches, and their 95 % intervals covered
  // the true mean only 53 % of the time.
  size_t reliable_batches = 20;
  // Length of one interval, for the method text only ("8 batches of 4 s").
  base::Seconds interval{1};
};

struct MeanEstimate {
  double mean = 0;
  // NaN when it cannot be estimated (fewer than 2 intervals, or no denominator).
  double standard_error = std::numeric_limits<double>::quiet_NaN();
  size_t batches = 0;
  size_t batch_size = 0;          // intervals per batch (some batches may hold one more)
  double degrees_of_freedom = 0;  // for the t quantile of an interval: batches - 1
  // Lag-1 autocorrelation of the batch means (bias-corrected, clamped) that the standard error
  // was inflated by, as (1 + r) / (1 - r); 0 when no correction was needed.
  double batch_autocorrelation = 0;
  // False when the autocorrelation of the batch means was still above the threshold at the
  // largest batch size allowed, or fell below it only with fewer than reliable_batches
  // batches (always so for series shorter than that): the error bar is then a rough guide,
  // not a calibrated interval.
  bool reliable = false;
  std::string method;  // for reports: "batch means (18 batches of 33 s)"

  // Half-width of the two-sided interval at `confidence` (t quantile x standard error).
  double half_width(double confidence = 0.95) const;
};

// Mean of a series of per-interval values, every interval weighing the same.
MeanEstimate estimate_mean(std::span<const double> values, const BatchMeansOptions& options = {});
// sum(weights_i * values_i) / sum(weights_i): per-interval tps weighted by interval length
// (the last interval of a run is usually shorter) is total transactions / total time.
MeanEstimate estimate_weighted_mean(std::span<const double> values, std::span<const double> weights,
                                    const BatchMeansOptions& options = {});
// sum(numerators_i) / sum(denominators_i), e.g. AAS = sum(count_i) / sum(snapshots_i). The
// error comes from batch sums of both (delta method for a ratio of totals).
MeanEstimate estimate_ratio(std::span<const double> numerators,
                            std::span<const double> denominators,
                            const BatchMeansOptions& options = {});

// One interval of a timeline, for one wait key.
struct IntervalCounts {
  uint64_t count = 0;      // samples of the wait key
  uint64_t snapshots = 0;  // snapshots taken
  uint64_t samples = 0;    // all samples counted (non-idle, or all with idle shown)
};

struct WaitKeyEstimate {
  MeanEstimate share;  // sum(count) / sum(samples), 0..1
  MeanEstimate aas;    // sum(count) / sum(snapshots): average active sessions
};

WaitKeyEstimate estimate_wait_key(std::span<const IntervalCounts> intervals,
                                  const BatchMeansOptions& options = {});

// --- Steady state --------------------------------------------------------------------------

struct SteadyState {
  size_t drop_intervals = 0;  // leading intervals to leave out, a multiple of 5
  // The best truncation point was the last one searched (half the series): the warm-up may
  // be longer than half the run, and the run too short to measure its steady state.
  bool at_search_limit = false;
};

// MSER-5 (White 1997; White, Cobb and Spratt 2000) on a per-interval series such as tps.
SteadyState mser5_steady_state(std::span<const double> series);

// --- A/B comparison across repeats ---------------------------------------------------------

struct AbTestOptions {
  double confidence = 0.95;  // two-sided; alpha = 1 - confidence
  double power = 0.8;        // for the minimum detectable change and the repeats needed
  // The change that repeats_needed_for_target is computed for.
  double target_change_percent = 2;
  // Noise (sd of log(metric) between repeats) to plan with when neither side has two repeats,
  // e.g. from other cells of the same matrix.
  std::optional<double> assumed_log_sd;
};

struct AbTest {
  size_t repeats_a = 0;
  size_t repeats_b = 0;
  double geometric_mean_a = std::numeric_limits<double>::quiet_NaN();
  double geometric_mean_b = std::numeric_limits<double>::quiet_NaN();
  double change_percent = std::numeric_limits<double>::quiet_NaN();  // 100 (B / A - 1)

  // The test itself: present when both sides have at least two repeats.
  std::optional<double> ci_low_percent;  // interval of change_percent at options.confidence
  std::optional<double> ci_high_percent;
  std::optional<double> p_value;  // two-sided
  std::optional<double> degrees_of_freedom;
  bool significant = false;  // p_value < alpha

  // Noise between repeats: pooled sd of log(metric) over the sides with two repeats or more
  // (or options.assumed_log_sd); roughly the coefficient of variation.
  std::optional<double> log_sd;
  // Smallest change (in %, either direction) that this design detects with options.power.
  std::optional<double> min_detectable_percent;
  // Repeats per side that would detect the observed change, and options.target_change_percent,
  // with options.power at the noise above. Empty when the noise is unknown or the change is 0
  // (or needs more than a million repeats).
  std::optional<size_t> repeats_needed_for_observed;
  std::optional<size_t> repeats_needed_for_target;

  // The test compared two single runs from their own batch-means errors
  // (within_run_log_test): it saw the noise inside each run, not the noise between runs.
  bool within_run = false;
  // The test compared two single runs against the spread between earlier runs of the same
  // configuration (run_to_run_log_test).
  bool run_to_run = false;

  std::string method;  // for reports: "Welch t-test on log (3 + 3 repeats)"
};

// Welch's t-test on log(values) (tps, p99 latency: any positive metric, one value per repeat).
// Throws std::invalid_argument on a value that is not positive and finite, or an empty side.
AbTest welch_log_test(std::span<const double> a, std::span<const double> b,
                      const AbTestOptions& options = {});

// Alternative without the normality assumption: exact permutation test on the difference of
// mean logs (all splits when there are at most 20000, else 20000 random ones with a fixed
// seed) and a percentile bootstrap interval (fixed seed). With 3 + 3 repeats the smallest
// possible p-value is 0.1, so it can never be significant there: use it from 5 + 5 on.
// Same fields as welch_log_test; degrees_of_freedom stays empty.
AbTest permutation_log_test(std::span<const double> a, std::span<const double> b,
                            const AbTestOptions& options = {});

// Two single runs, one a side, compared on the log of their means (tps) with each run's own
// batch-means standard error: log(mean_b / mean_a) with the delta-method error
// sqrt((se_a / mean_a)^2 + (se_b / mean_b)^2) and Welch-Satterthwaite degrees of freedom from
// the batches; the interval, p-value, verdict and smallest detectable change as in
// welch_log_test (repeats_needed_* stay empty: within-run noise says nothing about repeats).
// This is within-run noise only: two runs of one configuration also differ by what changes
// between runs (cache state, autovacuum, the host), which it cannot see, so its verdicts need
// repeats before they are trusted. Throws std::invalid_argument unless both means are positive
// and finite and both errors finite with degrees of freedom above 0.
AbTest within_run_log_test(const MeanEstimate& a, const MeanEstimate& b,
                           const AbTestOptions& options = {});

// Two single runs, one a side, compared against the noise between runs of their configuration
// known from earlier comparable runs (a report's run-to-run spread): log(b / a) with the error
// sqrt(2) x log_sd, log_sd the sd of log(metric) between those runs (about sd / mean), and t
// with `degrees_of_freedom` (their count - 1). Interval, p-value, verdict, smallest detectable
// change and repeats needed as in welch_log_test. Throws std::invalid_argument unless both
// values are positive and finite, log_sd finite and not negative and degrees_of_freedom > 0.
AbTest run_to_run_log_test(double a, double b, double log_sd, double degrees_of_freedom,
                           const AbTestOptions& options = {});

// Why a batch-means estimate is not reliable, in a few words for a report ("12 batches of 2 s,
// 20 needed"); "" when it is.
std::string unreliable_reason(const MeanEstimate& estimate, const BatchMeansOptions& options = {});

// Geometric mean of repeats (any positive metric) with the interval of the t distribution on
// the log scale at `confidence`; low and high stay empty with a single value. Throws
// std::invalid_argument on an empty span or a value that is not positive and finite.
struct GeometricMean {
  double value = std::numeric_limits<double>::quiet_NaN();
  std::optional<double> low, high;
};
GeometricMean geometric_mean_interval(std::span<const double> values, double confidence = 0.95);

}  // namespace pgwaitprof::model
