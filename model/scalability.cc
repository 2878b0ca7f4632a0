// The Universal Scalability Law fit of a sweep (see scalability.h; its knee and the waits that
// grow across it are in scalability_knee.cc). The solver is Eigen's Levenberg-Marquardt (MINPACK's
// lmder, Debian's libeigen3-dev, header-only): a three-parameter least-squares problem needs no
// more, and a packaged, long-tested solver beats a hand-written one (GSL would add a GPL library to
// link, Ceres a large one for a problem this small).
#include "model/scalability.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <unsupported/Eigen/NonLinearOptimization>

#include "model/statistics.h"

namespace pgwaitprof::model {

namespace {

// Which of sigma and kappa the solver may move; a fixed one stays at 0.
struct FreeParameters {
  bool sigma = true;
  bool kappa = true;
  int count() const { return 1 + (sigma ? 1 : 0) + (kappa ? 1 : 0); }
};

UslParameters unpack(const Eigen::VectorXd& x, const FreeParameters& free) {
  UslParameters parameters;
  Eigen::Index at = 0;
  parameters.lambda = x[at++];
  if (free.sigma) parameters.sigma = x[at++];
  if (free.kappa) parameters.kappa = x[at++];
  return parameters;
}

// Residuals (fit - y) / y: weights 1 / y^2, so that a 2 % miss weighs the same at 1 client as at
// 64, as the run-to-run noise of tps is roughly a fixed fraction of it.
struct UslFunctor {
  std::span<const ThroughputPoint> points;
  FreeParameters free;

  int inputs() const { return free.count(); }
  int values() const { return static_cast<int>(points.size()); }

  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& residuals) const {
    const auto parameters = unpack(x, free);
    for (size_t index = 0; index < points.size(); ++index) {
      const auto& point = points[index];
      residuals[static_cast<Eigen::Index>(index)] =
          (usl_throughput(parameters, point.clients) - point.tps) / point.tps;
    }
    return 0;
  }

  int df(const Eigen::VectorXd& x, Eigen::MatrixXd& jacobian) const {
    const auto parameters = unpack(x, free);
    for (size_t index = 0; index < points.size(); ++index) {
      const double clients = points[index].clients;
      const double weight = 1 / points[index].tps;
      const double denominator =
          1 + parameters.sigma * (clients - 1) + parameters.kappa * clients * (clients - 1);
      const double squared = denominator * denominator;
      const auto row = static_cast<Eigen::Index>(index);
      Eigen::Index column = 0;
      jacobian(row, column++) = weight * clients / denominator;
      if (free.sigma) {
        jacobian(row, column++) = -weight * parameters.lambda * clients * (clients - 1) / squared;
      }
      if (free.kappa) {
        jacobian(row, column++) =
            -weight * parameters.lambda * clients * clients * (clients - 1) / squared;
      }
    }
    return 0;
  }
};

struct Solution {
  UslParameters parameters;
  FreeParameters free;
  bool converged = false;
};

// Starting values: lambda from the smallest client count, then sigma and kappa from the law's
// linear form lambda N / X - 1 = sigma (N - 1) + kappa N (N - 1) by least squares.
Eigen::VectorXd starting_values(std::span<const ThroughputPoint> points,
                                const FreeParameters& free) {
  int smallest = points.front().clients;
  for (const auto& point : points) smallest = std::min(smallest, point.clients);
  double lambda = 0;
  for (const auto& point : points) {
    if (point.clients == smallest) lambda = std::max(lambda, point.tps / smallest);
  }
  Eigen::MatrixXd design(static_cast<Eigen::Index>(points.size()), free.count() - 1);
  Eigen::VectorXd target(static_cast<Eigen::Index>(points.size()));
  for (size_t index = 0; index < points.size(); ++index) {
    const double clients = points[index].clients;
    const auto row = static_cast<Eigen::Index>(index);
    Eigen::Index column = 0;
    if (free.sigma) design(row, column++) = clients - 1;
    if (free.kappa) design(row, column++) = clients * (clients - 1);
    target[row] = lambda * clients / points[index].tps - 1;
  }
  Eigen::VectorXd x(free.count());
  x[0] = lambda;
  if (free.count() > 1) {
    const Eigen::VectorXd linear = design.colPivHouseholderQr().solve(target);
    for (Eigen::Index at = 0; at < linear.size(); ++at) x[at + 1] = std::max(linear[at], 1e-9);
  }
  return x;
}

Solution solve(std::span<const ThroughputPoint> points, const FreeParameters& free) {
  UslFunctor functor{points, free};
  Eigen::VectorXd x = starting_values(points, free);
  Eigen::LevenbergMarquardt<UslFunctor> solver(functor);
  solver.parameters.maxfev = 2000;
  const auto status = solver.minimize(x);
  Solution solution;
  solution.free = free;
  solution.parameters = unpack(x, free);
  solution.converged = status != Eigen::LevenbergMarquardtSpace::ImproperInputParameters &&
                       status != Eigen::LevenbergMarquardtSpace::TooManyFunctionEvaluation &&
                       std::isfinite(solution.parameters.lambda);
  return solution;
}

// The fit with sigma and kappa at or above 0: a negative one (noise on a linear or Amdahl-like
// sweep) is fixed at 0 and the rest refitted.
Solution solve_bounded(std::span<const ThroughputPoint> points) {
  auto solution = solve(points, {});
  if (solution.parameters.kappa < 0) solution = solve(points, {.sigma = true, .kappa = false});
  if (solution.parameters.sigma < 0) {
    solution = solve(points, {.sigma = false, .kappa = true});
    if (solution.parameters.kappa < 0) solution = solve(points, {.sigma = false, .kappa = false});
  }
  return solution;
}

double peak_clients(const UslParameters& parameters) {
  if (parameters.kappa <= 0 || parameters.sigma >= 1)
    return std::numeric_limits<double>::infinity();
  return std::sqrt((1 - parameters.sigma) / parameters.kappa);
}

// The five figures of a fit, in one vector for the intervals.
std::array<double, 5> figures(const UslParameters& parameters) {
  const double peak = peak_clients(parameters);
  return {parameters.lambda, parameters.sigma, parameters.kappa, peak,
          std::isfinite(peak) ? usl_throughput(parameters, peak) : kNaN};
}

double percentile(std::vector<double> values, double probability) {
  std::sort(values.begin(), values.end());
  if (values.empty()) return kNaN;
  const double position = probability * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<size_t>(std::floor(position));
  const auto upper = std::min(lower + 1, values.size() - 1);
  if (std::isinf(values[upper])) return values[upper];  // not inf - inf
  return values[lower] + (position - static_cast<double>(lower)) * (values[upper] - values[lower]);
}

std::map<int, std::vector<double>> by_clients(std::span<const ThroughputPoint> points) {
  std::map<int, std::vector<double>> grouped;
  for (const auto& point : points) grouped[point.clients].push_back(point.tps);
  return grouped;
}

// Percentile intervals of every figure over fits to resamples: per client count, its repeats
// drawn with replacement (the design keeps its client counts).
std::array<std::pair<double, double>, 5> bootstrap_intervals(
    std::span<const ThroughputPoint> points, const ScalabilityOptions& options) {
  const auto grouped = by_clients(points);
  std::mt19937_64 generator(options.seed);
  std::array<std::vector<double>, 5> draws;
  std::vector<ThroughputPoint> resample;
  for (size_t draw = 0; draw < options.bootstrap_resamples; ++draw) {
    resample.clear();
    for (const auto& [clients, values] : grouped) {
      std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
      for (size_t repeat = 0; repeat < values.size(); ++repeat) {
        resample.push_back({clients, values[pick(generator)]});
      }
    }
    const auto solution = solve_bounded(resample);
    if (!solution.converged) continue;
    const auto values = figures(solution.parameters);
    // An infinite N* (kappa 0) is a draw with no peak: it sorts last, so the upper bound
    // becomes infinite when enough draws have none.
    for (size_t at = 0; at < values.size(); ++at) {
      draws[at].push_back(std::isnan(values[at]) ? std::numeric_limits<double>::infinity()
                                                 : values[at]);
    }
  }
  const double tail = (1 - options.confidence) / 2;
  std::array<std::pair<double, double>, 5> intervals;
  for (size_t at = 0; at < draws.size(); ++at) {
    intervals[at] = {percentile(draws[at], tail), percentile(draws[at], 1 - tail)};
  }
  return intervals;
}

// Intervals from the covariance s^2 (J'J)^-1 of all three parameters at the bounded fit (a
// parameter held at 0 gets its spread too), with t on n - 3 degrees of freedom; N* and X(N*)
// by the delta method. Bounds of sigma and kappa are clipped at 0.
std::array<std::pair<double, double>, 5> covariance_intervals(
    std::span<const ThroughputPoint> points, const Solution& solution,
    const ScalabilityOptions& options) {
  std::array<std::pair<double, double>, 5> intervals;
  intervals.fill({kNaN, kNaN});
  const FreeParameters all;
  const auto n = static_cast<Eigen::Index>(points.size());
  if (n <= 3) return intervals;
  UslFunctor functor{points, all};
  Eigen::VectorXd x(3);
  x << solution.parameters.lambda, solution.parameters.sigma, solution.parameters.kappa;
  Eigen::VectorXd residuals(n);
  Eigen::MatrixXd jacobian(n, 3);
  functor(x, residuals);
  functor.df(x, jacobian);
  const double degrees_of_freedom = static_cast<double>(n - 3);
  const double variance = residuals.squaredNorm() / degrees_of_freedom;
  const Eigen::MatrixXd covariance =
      variance *
      (jacobian.transpose() * jacobian).completeOrthogonalDecomposition().pseudoInverse();
  const double t = student_t_quantile(1 - (1 - options.confidence) / 2, degrees_of_freedom);
  const auto centre = figures(solution.parameters);
  for (size_t figure = 0; figure < centre.size(); ++figure) {
    // Gradient of the figure by central differences in each parameter.
    Eigen::Vector3d gradient;
    for (Eigen::Index parameter = 0; parameter < 3; ++parameter) {
      const double step = std::max(std::abs(x[parameter]) * 1e-5, 1e-12);
      Eigen::VectorXd up = x, down = x;
      up[parameter] += step;
      down[parameter] -= step;
      gradient[parameter] =
          (figures(unpack(up, all))[figure] - figures(unpack(down, all))[figure]) / (2 * step);
    }
    const double error = std::sqrt(gradient.dot(covariance * gradient));
    if (!std::isfinite(centre[figure]) || !std::isfinite(error)) continue;
    intervals[figure] = {centre[figure] - t * error, centre[figure] + t * error};
  }
  intervals[1].first = std::max(intervals[1].first, 0.0);
  intervals[2].first = std::max(intervals[2].first, 0.0);
  return intervals;
}

// Goodness of fit: weighted R², the cell medians' relative distance from the curve, and the
// lack-of-fit F test when there are repeats.
void set_goodness(UslFit& fit, std::span<const ThroughputPoint> points,
                  const ScalabilityOptions& options) {
  double weight_sum = 0, weighted_sum = 0;
  for (const auto& point : points) {
    weight_sum += 1 / (point.tps * point.tps);
    weighted_sum += point.tps / (point.tps * point.tps);
  }
  const double weighted_mean = weighted_sum / weight_sum;
  double residual = 0, total = 0;
  for (const auto& point : points) {
    const double fitted = usl_throughput(fit.parameters, point.clients);
    residual += std::pow((point.tps - fitted) / point.tps, 2);
    total += std::pow((point.tps - weighted_mean) / point.tps, 2);
  }
  fit.r_squared = total > 0 ? 1 - residual / total : kNaN;

  // Pure error: scatter of the repeats about their own mean; lack of fit: the rest.
  double pure_error = 0, squared_relative = 0;
  size_t repeats_beyond_first = 0;
  const auto grouped = by_clients(points);
  for (const auto& [clients, values] : grouped) {
    const double mean = sample_mean(values);
    for (const double value : values) pure_error += std::pow((value - mean) / value, 2);
    repeats_beyond_first += values.size() - 1;
    squared_relative += std::pow(median(values) / usl_throughput(fit.parameters, clients) - 1, 2);
  }
  fit.rms_relative_error = std::sqrt(squared_relative / static_cast<double>(grouped.size()));
  fit.largest_count_efficiency =
      median(grouped.rbegin()->second) / (fit.max_clients * fit.parameters.lambda);
  const double lack_of_fit = std::max(residual - pure_error, 0.0);
  const double lack_df = static_cast<double>(grouped.size()) - 3;
  const auto pure_df = static_cast<double>(repeats_beyond_first);
  if (lack_df >= 1 && pure_df >= 1 && pure_error > 0) {
    const double statistic = (lack_of_fit / lack_df) / (pure_error / pure_df);
    // Upper tail of F(lack_df, pure_df) through the incomplete beta function.
    fit.lack_of_fit_p = regularized_incomplete_beta(pure_df / 2, lack_df / 2,
                                                    pure_df / (pure_df + lack_df * statistic));
  }
  // With repeats, the curve is poor when it misses the cell means by more than their own
  // scatter explains (and by more than max_relative_error): a low R² with repeats that scatter
  // as widely as the curve misses them is noise, which the intervals show. Without repeats
  // there is only R².
  fit.poor_fit = fit.lack_of_fit_p ? *fit.lack_of_fit_p < options.lack_of_fit_alpha &&
                                         fit.rms_relative_error > options.max_relative_error
                                   : !(fit.r_squared >= options.min_r_squared);
  fit.noisy = !fit.poor_fit && !(fit.r_squared >= options.min_r_squared);
}

UslFigure figure(double value, std::pair<double, double> interval) {
  return {.value = value,
          .low = interval.first,
          .high = interval.second,
          .constrained = std::isfinite(value) && std::isfinite(interval.first) &&
                         std::isfinite(interval.second),
          .note = ""};
}

void unconstrain(UslFigure& figure, const std::string& note) {
  figure.constrained = false;
  figure.note = note;
}

// The verdict of a fit that is neither poor nor linear: where its peak is.
void set_peak_verdict(UslFit& fit) {
  const bool coherency = fit.kappa.constrained && fit.kappa.low > 0;
  if (fit.peak_clients.constrained) {
    fit.verdict =
        fmt::format("throughput peaks at {:.0f} clients ({})", fit.peak_clients.value,
                    fit.peak_clients.value < fit.max_clients ? "falls beyond it: retrograde"
                                                             : "within reach of the largest count");
  } else if (coherency) {
    fit.verdict = "coherency cost measurable, peak beyond the measured range";
  } else {
    fit.verdict = "contention-bound: throughput levels off towards " +
                  fmt::format("{:.0f}", fit.parameters.lambda / fit.parameters.sigma) + " tps";
  }
}

// Decides which figures the data pin down, and the verdict line.
void set_verdicts(UslFit& fit, const ScalabilityOptions& options) {
  if (fit.poor_fit) {
    const auto note = fmt::format("poor fit (R² {:.2f}, off the curve by {:.0f} %)", fit.r_squared,
                                  100 * fit.rms_relative_error);
    for (auto* each : {&fit.lambda, &fit.sigma, &fit.kappa, &fit.peak_clients, &fit.peak_tps}) {
      unconstrain(*each, note);
    }
    fit.verdict = "the law does not describe this sweep: " + note;
    return;
  }
  const bool contention = fit.sigma.constrained && fit.sigma.low > 0;
  const bool coherency = fit.kappa.constrained && fit.kappa.low > 0;
  if (!contention && !coherency) {
    // Neither cost is distinguishable from 0. That means linear scaling only when the largest
    // count still delivers most of N x lambda; otherwise the repeats are too noisy to tell.
    fit.linear = fit.largest_count_efficiency >= options.linear_efficiency;
    const auto note =
        fit.linear ? fmt::format("not constrained: still linear at {} clients", fit.max_clients)
                   : std::string("not constrained: the repeats are too noisy");
    for (auto* each : {&fit.sigma, &fit.kappa, &fit.peak_clients, &fit.peak_tps}) {
      unconstrain(*each, note);
    }
    fit.verdict = fit.linear
                      ? fmt::format(
                            "throughput still grows linearly at {} clients: no contention or "
                            "coherency cost measurable",
                            fit.max_clients)
                      : fmt::format(
                            "neither contention nor coherency is distinguishable from 0, though "
                            "{} clients deliver {:.0f} % of {} x λ: more repeats needed",
                            fit.max_clients, 100 * fit.largest_count_efficiency, fit.max_clients);
    return;
  }
  const double reach = options.max_peak_extrapolation * fit.max_clients;
  std::string peak_note;
  if (!coherency) {
    peak_note = "not constrained: no coherency cost measurable, no peak in sight";
  } else if (!(fit.peak_clients.high <= reach)) {
    peak_note = fmt::format("not constrained: beyond {:.0f} clients", reach);
  }
  if (!peak_note.empty()) {
    unconstrain(fit.peak_clients, peak_note);
    unconstrain(fit.peak_tps, peak_note);
  }
  for (auto* each : {&fit.lambda, &fit.sigma, &fit.kappa, &fit.peak_clients, &fit.peak_tps}) {
    if (!each->constrained && each->note.empty()) each->note = "not constrained: no interval";
  }
  set_peak_verdict(fit);
}

}  // namespace

double usl_throughput(const UslParameters& parameters, double clients) {
  return parameters.lambda * clients /
         (1 + parameters.sigma * (clients - 1) + parameters.kappa * clients * (clients - 1));
}

UslFit fit_usl(std::span<const ThroughputPoint> input, const ScalabilityOptions& options) {
  UslFit fit;
  std::vector<ThroughputPoint> points;
  for (const auto& point : input) {
    if (point.clients > 0 && std::isfinite(point.tps) && point.tps > 0) points.push_back(point);
  }
  const auto grouped = by_clients(points);
  fit.points = points.size();
  fit.client_counts = grouped.size();
  fit.max_clients = grouped.empty() ? 0 : grouped.rbegin()->first;
  if (grouped.size() < options.min_client_counts) {
    fit.reason = fmt::format("{} client count{} with throughput, {} needed", grouped.size(),
                             grouped.size() == 1 ? "" : "s", options.min_client_counts);
    return fit;
  }
  const auto solution = solve_bounded(points);
  if (!solution.converged || solution.parameters.lambda <= 0) {
    fit.reason = "the fit did not converge";
    return fit;
  }
  fit.fitted = true;
  fit.parameters = solution.parameters;

  size_t fewest_repeats = points.size();
  for (const auto& [clients, values] : grouped)
    fewest_repeats = std::min(fewest_repeats, values.size());
  const bool bootstrap = fewest_repeats >= options.min_repeats_for_bootstrap;
  const auto intervals = bootstrap ? bootstrap_intervals(points, options)
                                   : covariance_intervals(points, solution, options);
  fit.interval_method =
      bootstrap ? fmt::format("bootstrap over repeats ({} resamples)", options.bootstrap_resamples)
                : fmt::format("fit covariance (t on {} degrees of freedom)", points.size() - 3);
  const auto values = figures(fit.parameters);
  fit.lambda = figure(values[0], intervals[0]);
  fit.sigma = figure(values[1], intervals[1]);
  fit.kappa = figure(values[2], intervals[2]);
  fit.peak_clients = figure(values[3], intervals[3]);
  fit.peak_tps = figure(values[4], intervals[4]);
  set_goodness(fit, points, options);
  set_verdicts(fit, options);
  if (fit.noisy) {
    fit.verdict += fmt::format(
        "; noisy repeats (R² {:.2f}, though the curve misses the cell means by no more than "
        "their repeats scatter)",
        fit.r_squared);
  }
  return fit;
}

}  // namespace pgwaitprof::model
