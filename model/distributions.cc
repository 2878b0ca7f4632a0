// The distributions the error bars and tests need: normal, Student t and the incomplete beta
// function behind it.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "model/statistics.h"

namespace pgwaitprof::model {
namespace {

// Continued fraction of the incomplete beta function, evaluated with the modified Lentz method
// (Numerical Recipes, betacf). Converges fast for x < (a + 1) / (a + b + 2); the caller uses
// the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) otherwise.
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 100000;
  constexpr double kEpsilon = 1e-15;
  constexpr double kTiny = 1e-300;
  const double sum_ab = a + b;
  const double a_plus = a + 1;
  const double a_minus = a - 1;
  double c = 1;
  double d = 1 - sum_ab * x / a_plus;
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double fraction = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    // Even step.
    double numerator = m * (b - m) * x / ((a_minus + m2) * (a + m2));
    d = 1 + numerator * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + numerator / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    fraction *= d * c;
    // Odd step.
    numerator = -(a + m) * (sum_ab + m) * x / ((a + m2) * (a_plus + m2));
    d = 1 + numerator * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + numerator / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    fraction *= delta;
    if (std::abs(delta - 1) < kEpsilon) break;
  }
  return fraction;
}

// I_x(a, b) with y = 1 - x passed separately, so that tails stay accurate when x is close to 1.
double incomplete_beta(double a, double b, double x, double y) {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log(y);
  const double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, y) / b;
}

double student_t_density(double t, double degrees_of_freedom) {
  const double v = degrees_of_freedom;
  return std::exp(std::lgamma((v + 1) / 2) - std::lgamma(v / 2) -
                  0.5 * std::log(v * std::numbers::pi) - (v + 1) / 2 * std::log1p(t * t / v));
}

void check_degrees_of_freedom(double degrees_of_freedom) {
  if (!(degrees_of_freedom > 0)) {
    throw std::invalid_argument(
        fmt::format("degrees of freedom must be positive, got {}", degrees_of_freedom));
  }
}

}  // namespace

// P(T > t) for t >= 0: 0.5 I_{v/(v+t^2)}(v/2, 1/2), accurate far into the tail.
double student_t_upper_tail(double t, double degrees_of_freedom) {
  if (std::isinf(degrees_of_freedom)) return 0.5 * std::erfc(t / std::numbers::sqrt2);
  const double t_squared = t * t;
  const double denominator = degrees_of_freedom + t_squared;
  return 0.5 * incomplete_beta(degrees_of_freedom / 2, 0.5, degrees_of_freedom / denominator,
                               t_squared / denominator);
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

double normal_quantile(double probability) {
  if (!(probability >= 0 && probability <= 1)) {
    throw std::invalid_argument(fmt::format("probability must be in [0, 1], got {}", probability));
  }
  if (probability == 0) return -kInfinity;
  if (probability == 1) return kInfinity;
  // Acklam's rational approximation (relative error 1.15e-9), then one Halley step on erfc.
  static constexpr std::array<double, 6> a = {-3.969683028665376e+01, 2.209460984245205e+02,
                                              -2.759285104469687e+02, 1.383577518672690e+02,
                                              -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr std::array<double, 5> b = {-5.447609879822406e+01, 1.615858368580409e+02,
                                              -1.556989798598866e+02, 6.680131188771972e+01,
                                              -1.328068155288572e+01};
  static constexpr std::array<double, 6> c = {-7.784894002430293e-03, -3.223964580411365e-01,
                                              -2.400758277161838e+00, -2.549732539343734e+00,
                                              4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr std::array<double, 4> d = {7.784695709041462e-03, 3.224671290700398e-01,
                                              2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLowRegion = 0.02425;
  double x;
  if (probability < kLowRegion || probability > 1 - kLowRegion) {
    const double tail = probability < kLowRegion ? probability : 1 - probability;
    const double q = std::sqrt(-2 * std::log(tail));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    if (probability > kLowRegion) x = -x;
  } else {
    const double q = probability - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  // Refine against the tail that is not close to 1, where erfc keeps its precision.
  const double error =
      probability < 0.5 ? normal_cdf(x) - probability : (1 - probability) - normal_cdf(-x);
  const double scaled = error * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - scaled / (1 + x * scaled / 2);
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (!(a > 0 && b > 0) || !(x >= 0 && x <= 1)) {
    throw std::invalid_argument(
        fmt::format("incomplete beta needs a, b > 0 and x in [0, 1], got {}, {}, {}", a, b, x));
  }
  return incomplete_beta(a, b, x, 1 - x);
}

double student_t_cdf(double t, double degrees_of_freedom) {
  check_degrees_of_freedom(degrees_of_freedom);
  if (std::isnan(t)) return kNaN;
  if (t == 0) return 0.5;
  const double tail = student_t_upper_tail(std::abs(t), degrees_of_freedom);
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double probability, double degrees_of_freedom) {
  check_degrees_of_freedom(degrees_of_freedom);
  if (!(probability >= 0 && probability <= 1)) {
    throw std::invalid_argument(fmt::format("probability must be in [0, 1], got {}", probability));
  }
  if (std::isinf(degrees_of_freedom)) return normal_quantile(probability);
  if (probability == 0) return -kInfinity;
  if (probability == 1) return kInfinity;
  if (probability == 0.5) return 0;
  // Solve P(T > t) = tail for t > 0; the tail is exact in floating point for either half.
  const double tail = probability < 0.5 ? probability : 1 - probability;
  const double sign = probability < 0.5 ? -1 : 1;
  const double v = degrees_of_freedom;

  // Cornish-Fisher expansion around the normal quantile (Abramowitz and Stegun 26.7.5): the
  // answer for large v, where the continued fraction needs ~sqrt(v) terms, and the start of
  // Newton's method otherwise (with a bracket, so a poor start at v < 1 falls back to
  // bisection).
  const double z = -normal_quantile(tail);
  const double z2 = z * z;
  double t = z + z * (z2 + 1) / (4 * v) + z * ((5 * z2 + 16) * z2 + 3) / (96 * v * v) +
             z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * v * v * v) +
             z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / (92160 * v * v * v * v);
  if (v >= 1000) return sign * t;  // relative error below 1e-11 there, up to p = 1 - 1e-9
  double low = 0;
  double high = std::max(1.0, z);
  while (student_t_upper_tail(high, v) > tail) {
    low = high;
    high *= 2;
    if (std::isinf(high)) return sign * kInfinity;
  }
  if (!(t > low && t < high)) t = (low + high) / 2;
  for (int iteration = 0; iteration < 200; ++iteration) {
    const double excess = student_t_upper_tail(t, v) - tail;
    if (excess > 0) {
      low = t;
    } else {
      high = t;
    }
    if (excess == 0) break;
    double next = t + excess / student_t_density(t, v);
    if (!(next > low && next < high)) next = (low + high) / 2;
    const bool converged = std::abs(next - t) <= 1e-14 * std::abs(next);
    t = next;
    if (converged) break;
  }
  return sign * t;
}

}  // namespace pgwaitprof::model
