// Why a sweep stops scaling: Neil Gunther's Universal Scalability Law fitted to a matrix
// variant's throughput against client count, X(N) = lambda N / (1 + sigma (N - 1) + kappa N
// (N - 1)), with intervals, the peak N* = sqrt((1 - sigma) / kappa) and X(N*), how well the
// curve fits, and an honest "not constrained" where the data cannot say; the knee (the smallest
// client count whose efficiency X(N) / (N X(1)) falls below a threshold); and which wait events
// and classes grow across that knee. sigma is contention (a queue every client joins once: a
// heavyweight Lock, one hot LWLock), kappa coherency (every pair of clients paying for each
// other). Numbers only: the matrix aggregation (model/matrix_aggregate.h) calls it once per
// variant, the renderers in exporters/render/ format the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/wait_share.h"

namespace pgwaitprof::model {

struct UslParameters {
  double lambda = 0;  // throughput of one client, as if nothing were shared
  double sigma = 0;   // contention: the serial fraction, 0..1
  double kappa = 0;   // coherency: the cost each pair of clients adds
};

// X(N) of the law for `clients` (any positive real).
double usl_throughput(const UslParameters& parameters, double clients);

// One measured run: its client count and throughput (each repeat is a point of its own).
struct ThroughputPoint {
  int clients = 0;
  double tps = 0;
};

// One figure of the fit with its interval. When `constrained` is false the data do not pin it
// down (or the fit is poor) and `note` says why: renderers print the note, not the number.
struct UslFigure {
  double value = std::numeric_limits<double>::quiet_NaN();
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
  bool constrained = false;
  std::string note;  // "not constrained: still linear at 64 clients", "poor fit (R² 0.71)"
};

struct ScalabilityOptions {
  size_t min_client_counts = 4;  // fewer distinct client counts: no fit
  double confidence = 0.95;
  // Every client count needs this many repeats for the interval to come from a bootstrap over
  // repeats; with fewer, a resample of two repeats has three outcomes and its percentiles are
  // too narrow, so the fit's covariance (t on n - p degrees of freedom) is used instead.
  size_t min_repeats_for_bootstrap = 3;
  size_t bootstrap_resamples = 400;
  uint64_t seed = 27;  // fixed: the same runs give the same intervals
  // A peak whose interval reaches past this multiple of the largest client count measured is
  // an extrapolation, not a finding.
  double max_peak_extrapolation = 2;
  // R² (weighted, see UslFit::r_squared) below this is a poor fit when there are no repeats to
  // test the lack of fit against, and a noisy sweep when there are.
  double min_r_squared = 0.9;
  // With repeats, a lack-of-fit test rejecting the curve (p below this) with cell means off the
  // curve by more than max_relative_error (root mean square) is a poor fit: the law does not
  // describe this sweep, whatever its R².
  double lack_of_fit_alpha = 0.01;
  double max_relative_error = 0.05;
  // Both costs indistinguishable from 0 read as "still linear" only when the largest count
  // delivers at least this fraction of N x lambda; below it the repeats are too noisy to tell.
  double linear_efficiency = 0.8;
  // The knee: the first client count whose efficiency X(N) / (N X(1)) is below this.
  double knee_efficiency = 0.5;
  // Where measured tps departs from the fit: the first count whose median is off the curve by
  // more than this fraction.
  double departure = 0.1;
};

struct UslFit {
  bool fitted = false;
  std::string reason;  // why there is no fit, when !fitted
  UslParameters parameters;
  UslFigure lambda, sigma, kappa;
  UslFigure peak_clients;       // N*
  UslFigure peak_tps;           // X(N*)
  std::string interval_method;  // "bootstrap over repeats (400 resamples)"
  size_t points = 0;            // runs fitted
  size_t client_counts = 0;
  int max_clients = 0;
  // Goodness of fit on the weighted scale the fit minimises (relative residuals):
  // 1 - sum w (y - fit)^2 / sum w (y - weighted mean)^2, w = 1 / y^2.
  double r_squared = std::numeric_limits<double>::quiet_NaN();
  // Root mean square of (cell median / fit - 1) over the client counts.
  double rms_relative_error = std::numeric_limits<double>::quiet_NaN();
  // Lack-of-fit F test (between-count residual against the repeats' own scatter); empty with
  // no repeats.
  std::optional<double> lack_of_fit_p;
  bool poor_fit = false;
  // R² below the threshold while the lack-of-fit test does not reject the curve: the repeats
  // scatter as widely as the curve misses them (a busy host); the intervals carry it.
  bool noisy = false;
  // Neither sigma nor kappa is distinguishable from 0 and the largest count still delivers
  // ScalabilityOptions::linear_efficiency of N x lambda: throughput still grows linearly.
  bool linear = false;
  // Median tps at the largest count over (that count x lambda).
  double largest_count_efficiency = std::numeric_limits<double>::quiet_NaN();
  std::string verdict;  // one line: what the fit says
};

// Weighted nonlinear least squares (Levenberg-Marquardt) of the law to every point, weights
// 1 / tps^2 (run-to-run noise of tps is roughly proportional to tps), sigma and kappa kept at
// or above 0 (a negative one is refitted at 0). Intervals as ScalabilityOptions says.
UslFit fit_usl(std::span<const ThroughputPoint> points, const ScalabilityOptions& options = {});

// One cell of a variant as the knee and the wait growth need it.
struct ScalabilityCell {
  int clients = 0;
  double tps_median = 0;
  bool has_profile = false;  // completed runs with snapshots
  std::vector<WaitShare> classes;
  std::vector<WaitShare> events;
};

struct KneePoint {
  int clients = 0;
  double efficiency = 0;  // X(N) / (N X(1)), from the cell's median
};

struct Knee {
  double threshold = 0;          // the efficiency it is defined by
  double single_client_tps = 0;  // X(1): the 1-client median, else the fit's lambda
  bool single_client_measured = false;
  std::vector<KneePoint> efficiency;
  std::optional<int> clients;           // the knee; empty when efficiency stays above
  std::optional<int> departs_from_fit;  // first count whose median is off the fit
  double departure = 0;                 // by more than this fraction
};

Knee find_knee(std::span<const ScalabilityCell> cells, const UslFit& fit,
               const ScalabilityOptions& options = {});

// A wait class or event below and above the knee: means over the cells on each side (a cell
// without it counts 0), errors from the cells' own (repeats or batch means) combined.
struct WaitGrowth {
  std::string name;
  std::string wait_class;
  double share_below = 0, share_above = 0;  // 0..1
  double share_change = 0;                  // above - below
  double share_change_error = std::numeric_limits<double>::quiet_NaN();
  double aas_per_client_below = 0, aas_per_client_above = 0;
  double aas_per_client_change = 0;
  double aas_per_client_change_error = std::numeric_limits<double>::quiet_NaN();
};

// Largest growth of share first; empty without cells on both sides of `knee_clients`.
std::vector<WaitGrowth> wait_growth(std::span<const ScalabilityCell> cells, int knee_clients,
                                    bool classes);

struct VariantScalability {
  std::string variant;
  UslFit fit;
  Knee knee;
  std::vector<WaitGrowth> classes;
  std::vector<WaitGrowth> events;
  // "knee at 32 clients: Lock | transactionid 8 % → 41 %, LWLock | WALWrite 12 % → 19 %": the
  // three events whose share grew most, or why there is nothing to say. Holds server strings
  // (wait event names): renderers escape it.
  std::string headline;
};

// Everything above for one variant: `points` every run's throughput, `cells` its cells.
VariantScalability analyse_scalability(const std::string& variant,
                                       std::span<const ThroughputPoint> points,
                                       std::span<const ScalabilityCell> cells,
                                       const ScalabilityOptions& options = {});

// Two fits of one figure (sigma, kappa or N*) compared: their difference is beyond noise when
// the difference over the combined half-widths (each interval's half-width as 1.96 standard
// errors, a normal approximation) exceeds the normal quantile of the confidence.
struct FigureDifference {
  bool comparable = false;  // both constrained
  bool differ = false;
};
FigureDifference compare_figures(const UslFigure& a, const UslFigure& b, double confidence = 0.95);

}  // namespace pgwaitprof::model
