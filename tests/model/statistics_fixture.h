// What the statistics tests share (statistics_test.cc, statistics_welch_test.cc).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "model/statistics.h"

namespace pgwaitprof::model::test_support {

using namespace std::chrono_literals;

// Standard normal draws by Box-Muller on a fixed-seed engine: the same numbers on every
// platform, unlike std::normal_distribution.
class Normal {
 public:
  explicit Normal(uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double operator()() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2 * std::log(1 - uniform()));  // 1 - u is in (0, 1]
    const double angle = 2 * std::numbers::pi * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

// Stationary AR(1) with unit innovations and mean 0.
inline std::vector<double> ar1(Normal& normal, double phi, size_t size) {
  std::vector<double> series(size);
  double value = normal() / std::sqrt(1 - phi * phi);
  for (auto& element : series) {
    element = value;
    value = phi * value + normal();
  }
  return series;
}

inline double mean_of(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

inline double sd_of(const std::vector<double>& values) {
  const double mean = mean_of(values);
  double sum_squares = 0;
  for (const double value : values) sum_squares += (value - mean) * (value - mean);
  return std::sqrt(sum_squares / static_cast<double>(values.size() - 1));
}

// --- Distributions -------------------------------------------------------------------------

}  // namespace pgwaitprof::model::test_support
