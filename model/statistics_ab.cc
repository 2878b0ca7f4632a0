// The A/B tests of statistics.h: Welch's t-test and the permutation test on log(metric) across
// repeats, the within-run test of two single runs from their batch-means errors, and the
// geometric mean of repeats with its interval. Split from statistics.cc (batch means, MSER-5).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "model/statistics.h"

namespace pgwaitprof::model {

namespace {

std::vector<double> logs_of(std::span<const double> values, const char* side) {
  if (values.empty()) throw std::invalid_argument(fmt::format("side {} has no values", side));
  std::vector<double> logs;
  logs.reserve(values.size());
  for (const double value : values) {
    if (!(value > 0) || !std::isfinite(value)) {
      throw std::invalid_argument(fmt::format(
          "a log-scale comparison needs positive values, got {} on side {}", value, side));
    }
    logs.push_back(std::log(value));
  }
  return logs;
}

double percent_of_log(double log_ratio) { return 100 * std::expm1(log_ratio); }

// Smallest true difference of mean logs that a two-sided test at `alpha` detects with `power`,
// with `repeats_a` + `repeats_b` repeats and noise `log_sd` estimated with `noise_df` degrees
// of freedom: (t_{1-alpha/2} + t_{power}) * sd * sqrt(1/n_a + 1/n_b). This is the usual t
// approximation of the noncentral t power (central t quantiles at the noise's degrees of
// freedom; the normal one when the noise is taken as known). It is optimistic for Welch's test
// with very few repeats, whose degrees of freedom fall below n_a + n_b - 2 when the two sample
// variances differ: measured power at this change was 0.68 with 3 + 3 repeats, 0.80 with
// 10 + 10.
double detectable_log_change(double log_sd, double repeats_a, double repeats_b, double noise_df,
                             const AbTestOptions& options) {
  const double alpha = 1 - options.confidence;
  const double quantiles =
      student_t_quantile(1 - alpha / 2, noise_df) + student_t_quantile(options.power, noise_df);
  return quantiles * log_sd * std::sqrt(1 / repeats_a + 1 / repeats_b);
}

// Repeats per side for a future A/B with the same noise to detect `change_percent`.
std::optional<size_t> repeats_needed(double change_percent, double log_sd,
                                     const AbTestOptions& options) {
  const double log_change = std::abs(std::log1p(change_percent / 100));
  if (!(log_change > 0) || !std::isfinite(log_change)) return std::nullopt;
  if (log_sd <= 0) return 2;
  auto detects = [&](size_t repeats) {
    const auto n = static_cast<double>(repeats);
    return detectable_log_change(log_sd, n, n, 2 * n - 2, options) <= log_change;
  };
  // The normal approximation needs fewer repeats than the t one: start there and step up.
  const double alpha = 1 - options.confidence;
  const double normal_quantiles = normal_quantile(1 - alpha / 2) + normal_quantile(options.power);
  const double normal_repeats = 2 * std::pow(normal_quantiles * log_sd / log_change, 2);
  constexpr double kMostRepeats = 1e6;
  if (!(normal_repeats <= kMostRepeats)) return std::nullopt;
  auto repeats = std::max<size_t>(2, static_cast<size_t>(std::ceil(normal_repeats)));
  while (!detects(repeats)) ++repeats;
  return repeats;
}

// The t-test of `difference`, a difference of mean logs, with its standard error on `df`
// degrees of freedom: degrees of freedom, p-value, interval and verdict, and with `detectable`
// the smallest change it detects with options.power. With no error at all every value was
// alike and any difference is exact; degrees_of_freedom is then `exact_df`.
void test_log_difference(AbTest& test, double difference, double standard_error, double df,
                         double exact_df, bool detectable, const AbTestOptions& options) {
  const double alpha = 1 - options.confidence;
  if (standard_error > 0) {
    const double quantile = student_t_quantile(1 - alpha / 2, df);
    test.degrees_of_freedom = df;
    test.p_value =
        std::min(1.0, 2 * student_t_upper_tail(std::abs(difference) / standard_error, df));
    test.ci_low_percent = percent_of_log(difference - quantile * standard_error);
    test.ci_high_percent = percent_of_log(difference + quantile * standard_error);
    if (detectable) {
      test.min_detectable_percent =
          percent_of_log((quantile + student_t_quantile(options.power, df)) * standard_error);
    }
  } else {
    test.degrees_of_freedom = exact_df;
    test.p_value = difference == 0 ? 1.0 : 0.0;
    test.ci_low_percent = test.ci_high_percent = test.change_percent;
    if (detectable) test.min_detectable_percent = 0;
  }
  test.significant = *test.p_value < alpha;
}

// Fields shared by both tests: sizes, geometric means, noise and planning figures.
AbTest describe(const std::vector<double>& logs_a, const std::vector<double>& logs_b,
                const AbTestOptions& options) {
  if (!(options.confidence > 0 && options.confidence < 1) ||
      !(options.power > 0 && options.power < 1)) {
    throw std::invalid_argument(
        fmt::format("confidence and power must be between 0 and 1, got {} and {}",
                    options.confidence, options.power));
  }
  AbTest test;
  test.repeats_a = logs_a.size();
  test.repeats_b = logs_b.size();
  const double mean_a = sample_mean(logs_a);
  const double mean_b = sample_mean(logs_b);
  test.geometric_mean_a = std::exp(mean_a);
  test.geometric_mean_b = std::exp(mean_b);
  test.change_percent = percent_of_log(mean_b - mean_a);

  // Pooled over the sides that have a variance at all: a 1 + 3 design still knows its noise.
  const double df_a = static_cast<double>(logs_a.size()) - 1;
  const double df_b = static_cast<double>(logs_b.size()) - 1;
  const double noise_df = df_a + df_b;
  double noise_df_used = kInfinity;
  if (noise_df > 0) {
    test.log_sd = std::sqrt(
        (df_a * sample_variance(logs_a, mean_a) + df_b * sample_variance(logs_b, mean_b)) /
        noise_df);
    noise_df_used = noise_df;
  } else if (options.assumed_log_sd) {
    test.log_sd = *options.assumed_log_sd;
  }
  if (test.log_sd) {
    test.min_detectable_percent = percent_of_log(
        detectable_log_change(*test.log_sd, static_cast<double>(test.repeats_a),
                              static_cast<double>(test.repeats_b), noise_df_used, options));
    test.repeats_needed_for_observed = repeats_needed(test.change_percent, *test.log_sd, options);
    test.repeats_needed_for_target =
        repeats_needed(options.target_change_percent, *test.log_sd, options);
  }
  return test;
}

// Both sides' logs, and the test described (means, ratio) and named by its method.
struct LogTest {
  std::vector<double> logs_a, logs_b;
  AbTest test;
};
LogTest begin_log_test(std::span<const double> a, std::span<const double> b,
                       const AbTestOptions& options, std::string_view method) {
  LogTest begun{logs_of(a, "A"), logs_of(b, "B"), {}};
  begun.test = describe(begun.logs_a, begun.logs_b, options);
  begun.test.method = fmt::format("{} on log ({} + {} repeats)", method, a.size(), b.size());
  return begun;
}

}  // namespace

// Unbiased integer in [0, bound) from a 64-bit engine, the same on every platform (unlike
// std::uniform_int_distribution, whose algorithm is up to the library).
uint64_t uniform_index(std::mt19937_64& engine, uint64_t bound) {
  const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % bound;
  uint64_t draw = engine();
  while (draw >= limit) draw = engine();
  return draw % bound;
}

double binomial_coefficient(size_t n, size_t k) {
  double result = 1;
  for (size_t index = 1; index <= k; ++index) {
    result = result * static_cast<double>(n - k + index) / static_cast<double>(index);
  }
  return result;
}

double welch_satterthwaite_df(double variance_a, double df_a, double variance_b, double df_b) {
  return (variance_a + variance_b) * (variance_a + variance_b) /
         (variance_a * variance_a / df_a + variance_b * variance_b / df_b);
}

AbTest welch_log_test(std::span<const double> a, std::span<const double> b,
                      const AbTestOptions& options) {
  auto [logs_a, logs_b, test] = begin_log_test(a, b, options, "Welch t-test");
  if (a.size() < 2 || b.size() < 2) return test;

  const double mean_a = sample_mean(logs_a);
  const double mean_b = sample_mean(logs_b);
  const double per_a = sample_variance(logs_a, mean_a) / static_cast<double>(a.size());
  const double per_b = sample_variance(logs_b, mean_b) / static_cast<double>(b.size());
  // With every repeat of each side alike, the difference is exact.
  test_log_difference(test, mean_b - mean_a, std::sqrt(per_a + per_b),
                      welch_satterthwaite_df(per_a, static_cast<double>(a.size() - 1), per_b,
                                             static_cast<double>(b.size() - 1)),
                      static_cast<double>(a.size() + b.size() - 2), false, options);
  return test;
}

AbTest within_run_log_test(const MeanEstimate& a, const MeanEstimate& b,
                           const AbTestOptions& options) {
  for (const auto* side : {&a, &b}) {
    if (!(side->mean > 0) || !std::isfinite(side->mean) || !std::isfinite(side->standard_error) ||
        !(side->degrees_of_freedom > 0)) {
      throw std::invalid_argument(fmt::format(
          "a within-run comparison needs a positive mean with a finite error, got {} ± {} on "
          "side {}",
          side->mean, side->standard_error, side == &a ? "A" : "B"));
    }
  }
  const std::vector<double> log_a{std::log(a.mean)}, log_b{std::log(b.mean)};
  // Noise between repeats (options.assumed_log_sd) is another quantity: leave it out.
  AbTestOptions within = options;
  within.assumed_log_sd.reset();
  AbTest test = describe(log_a, log_b, within);
  test.within_run = true;
  test.method = "within-run batch means (1 + 1 runs)";
  // Delta method: the relative error of a mean is the error of its log.
  const double per_a = std::pow(a.standard_error / a.mean, 2);
  const double per_b = std::pow(b.standard_error / b.mean, 2);
  // With both runs' intervals all alike, the difference is exact.
  test_log_difference(
      test, log_b.front() - log_a.front(), std::sqrt(per_a + per_b),
      welch_satterthwaite_df(per_a, a.degrees_of_freedom, per_b, b.degrees_of_freedom),
      a.degrees_of_freedom + b.degrees_of_freedom, true, options);
  return test;
}

AbTest run_to_run_log_test(double a, double b, double log_sd, double degrees_of_freedom,
                           const AbTestOptions& options) {
  if (!(a > 0) || !std::isfinite(a) || !(b > 0) || !std::isfinite(b) || !(log_sd >= 0) ||
      !std::isfinite(log_sd) || !(degrees_of_freedom > 0)) {
    throw std::invalid_argument(fmt::format(
        "a run-to-run comparison needs positive values and a known spread, got {} and {} with "
        "log sd {} on {} degrees of freedom",
        a, b, log_sd, degrees_of_freedom));
  }
  const std::vector<double> log_a{std::log(a)}, log_b{std::log(b)};
  AbTestOptions spread = options;
  spread.assumed_log_sd = log_sd;
  AbTest test = describe(log_a, log_b, spread);
  test.run_to_run = true;
  test.method = fmt::format("run-to-run noise of {:.0f} earlier comparable runs (1 + 1 runs)",
                            degrees_of_freedom + 1);
  // With earlier runs all alike, any change is real.
  test_log_difference(test, log_b.front() - log_a.front(), std::sqrt(2.0) * log_sd,
                      degrees_of_freedom, degrees_of_freedom, true, options);
  return test;
}

GeometricMean geometric_mean_interval(std::span<const double> values, double confidence) {
  if (values.empty()) throw std::invalid_argument("a geometric mean needs at least one value");
  std::vector<double> logs;
  for (const double value : values) {
    if (!(value > 0) || !std::isfinite(value)) {
      throw std::invalid_argument(
          fmt::format("a geometric mean needs positive values, got {}", value));
    }
    logs.push_back(std::log(value));
  }
  const double mean = sample_mean(logs);
  GeometricMean result;
  result.value = std::exp(mean);
  if (logs.size() < 2) return result;
  const auto size = static_cast<double>(logs.size());
  const double half_width = student_t_quantile(0.5 + confidence / 2, size - 1) *
                            std::sqrt(sample_variance(logs, mean) / size);
  result.low = std::exp(mean - half_width);
  result.high = std::exp(mean + half_width);
  return result;
}

namespace {

constexpr size_t kMostSplits = 20000;
constexpr size_t kBootstrapRounds = 4000;

// The share of the splits of the pooled logs into sides of A's and B's sizes whose difference
// of means is at least the observed one: every split where they are at most kMostSplits, else
// that many random ones plus the observed one (so that it is never 0).
double permutation_p_value(const std::vector<double>& logs_a, const std::vector<double>& logs_b,
                           std::mt19937_64& engine) {
  const size_t size_a = logs_a.size(), size_b = logs_b.size(), total = size_a + size_b;
  std::vector<double> pooled(logs_a);
  pooled.insert(pooled.end(), logs_b.begin(), logs_b.end());
  const double pooled_sum = std::accumulate(pooled.begin(), pooled.end(), 0.0);
  auto difference_for = [&](double sum_a) {
    return (pooled_sum - sum_a) / static_cast<double>(size_b) - sum_a / static_cast<double>(size_a);
  };
  const double observed = std::abs(sample_mean(logs_b) - sample_mean(logs_a));
  // Differences equal to the observed one up to rounding count as at least as extreme.
  const double threshold = observed - 1e-12 * std::max(1.0, observed);

  size_t extreme = 0, splits = 0;
  if (binomial_coefficient(total, size_a) <= static_cast<double>(kMostSplits)) {
    // Every choice of which pooled values form side A, in lexicographic order.
    std::vector<size_t> chosen(size_a);
    std::iota(chosen.begin(), chosen.end(), 0);
    while (true) {
      double sum_a = 0;
      for (const size_t index : chosen) sum_a += pooled[index];
      if (std::abs(difference_for(sum_a)) >= threshold) ++extreme;
      ++splits;
      size_t position = size_a;
      while (position > 0 && chosen[position - 1] == total - size_a + position - 1) --position;
      if (position == 0) break;
      ++chosen[position - 1];
      for (size_t next = position; next < size_a; ++next) chosen[next] = chosen[next - 1] + 1;
    }
  } else {
    std::vector<double> shuffled(pooled);
    extreme = splits = 1;
    for (size_t round = 0; round < kMostSplits; ++round) {
      for (size_t index = 0; index < size_a; ++index) {
        std::swap(shuffled[index], shuffled[index + uniform_index(engine, total - index)]);
      }
      const double sum_a =
          std::accumulate(shuffled.begin(), shuffled.begin() + static_cast<long>(size_a), 0.0);
      if (std::abs(difference_for(sum_a)) >= threshold) ++extreme;
      ++splits;
    }
  }
  return static_cast<double>(extreme) / static_cast<double>(splits);
}

// The percentile bootstrap's interval (alpha / 2 to 1 - alpha / 2) of the difference of mean
// logs, B's less A's, resampling within each side.
std::pair<double, double> bootstrap_log_interval(const std::vector<double>& logs_a,
                                                 const std::vector<double>& logs_b, double alpha,
                                                 std::mt19937_64& engine) {
  const size_t size_a = logs_a.size(), size_b = logs_b.size();
  std::vector<double> differences(kBootstrapRounds);
  for (auto& difference : differences) {
    double sum_a = 0, sum_b = 0;
    for (size_t index = 0; index < size_a; ++index) sum_a += logs_a[uniform_index(engine, size_a)];
    for (size_t index = 0; index < size_b; ++index) sum_b += logs_b[uniform_index(engine, size_b)];
    difference = sum_b / static_cast<double>(size_b) - sum_a / static_cast<double>(size_a);
  }
  std::sort(differences.begin(), differences.end());
  auto percentile = [&](double probability) {
    const double position = probability * static_cast<double>(kBootstrapRounds - 1);
    const auto below = static_cast<size_t>(position);
    const size_t above = std::min(below + 1, kBootstrapRounds - 1);
    const double fraction = position - static_cast<double>(below);
    return differences[below] + fraction * (differences[above] - differences[below]);
  };
  return {percentile(alpha / 2), percentile(1 - alpha / 2)};
}

}  // namespace

AbTest permutation_log_test(std::span<const double> a, std::span<const double> b,
                            const AbTestOptions& options) {
  auto [logs_a, logs_b, test] = begin_log_test(a, b, options, "permutation test");
  if (a.size() < 2 || b.size() < 2) return test;
  // One seeded engine for both, in this order: the same data give the same figures.
  std::mt19937_64 engine(0x5eed'0f'ab'7e57ULL);
  const double alpha = 1 - options.confidence;
  test.p_value = permutation_p_value(logs_a, logs_b, engine);
  test.significant = *test.p_value < alpha;
  const auto [low, high] = bootstrap_log_interval(logs_a, logs_b, alpha, engine);
  test.ci_low_percent = percent_of_log(low);
  test.ci_high_percent = percent_of_log(high);
  return test;
}

}  // namespace pgwaitprof::model
