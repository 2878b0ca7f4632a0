// E-Divisive with means and its permutation test.
//
// The statistic of every split is found in one pass: moving the value z at the split from the
// after-part Y to the before-part X changes the within-X sum by sum_X |z - x|, the within-Y sum
// by sum_Y |z - y| and the between sum by the difference. sum_X |z - x| comes from a Fenwick
// tree of counts and sums over the values' ranks; sum_Y is the distance of z to all values (its
// rank's prefix sums, the same for every order) less sum_X. A permutation reorders the values,
// so ranks and distances to all are computed once per segment.
#include "model/change_points.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>

#include "model/statistics.h"

namespace pgwaitprof::model {

namespace {

// Counts and sums of the values inserted so far, by rank.
class RankTree {
 public:
  explicit RankTree(size_t size) : count_(size + 1, 0), sum_(size + 1, 0) {}
  void insert(size_t rank, double value) {
    for (size_t node = rank + 1; node < count_.size(); node += node & (~node + 1)) {
      count_[node] += 1;
      sum_[node] += value;
    }
  }
  // Count and sum of the values of rank below `rank`.
  std::pair<double, double> below(size_t rank) const {
    double count = 0;
    double sum = 0;
    for (size_t node = rank; node > 0; node -= node & (~node + 1)) {
      count += count_[node];
      sum += sum_[node];
    }
    return {count, sum};
  }

 private:
  std::vector<double> count_;
  std::vector<double> sum_;
};

// A segment of the series prepared for scanning in any order.
struct Prepared {
  std::vector<double> values;
  std::vector<size_t> rank;    // distinct, by value
  std::vector<double> to_all;  // sum of |value - other| over the segment
  double within_all = 0;       // sum over pairs i < j of |v_i - v_j|
};

Prepared prepare(std::span<const double> values) {
  Prepared prepared;
  prepared.values.assign(values.begin(), values.end());
  const size_t size = values.size();
  std::vector<size_t> by_value(size);
  std::iota(by_value.begin(), by_value.end(), 0);
  std::stable_sort(by_value.begin(), by_value.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  prepared.rank.resize(size);
  prepared.to_all.resize(size);
  std::vector<double> prefix(size + 1, 0);
  for (size_t position = 0; position < size; ++position) {
    prepared.rank[by_value[position]] = position;
    prefix[position + 1] = prefix[position] + values[by_value[position]];
  }
  const auto count = static_cast<double>(size);
  for (size_t position = 0; position < size; ++position) {
    const double value = values[by_value[position]];
    const auto below = static_cast<double>(position);
    prepared.to_all[by_value[position]] = value * below - prefix[position] +
                                          (prefix[size] - prefix[position + 1]) -
                                          value * (count - below - 1);
    prepared.within_all += value * (2 * below - count + 1);
  }
  return prepared;
}

double t_of(double within_x, double within_y, double between, double n, double m) {
  const double between_mean = n > 0 && m > 0 ? between / (n * m) : 0;
  const double x_mean = n > 0 ? 2 * within_x / (n * n) : 0;
  const double y_mean = m > 0 ? 2 * within_y / (m * m) : 0;
  const double e = 2 * between_mean - x_mean - y_mean;
  return n + m > 0 ? n * m / (n + m) * e : 0;
}

// Calls visit(tau, within_x, within_y, between) for every split of the values taken in `order`.
template <typename Visit>
void scan(const Prepared& prepared, const std::vector<size_t>& order, Visit&& visit) {
  RankTree tree(order.size());
  double within_x = 0;
  double within_y = prepared.within_all;
  double between = 0;
  double sum_x = 0;
  double count_x = 0;
  visit(size_t{0}, within_x, within_y, between);
  for (size_t tau = 0; tau < order.size(); ++tau) {
    const size_t element = order[tau];
    const double value = prepared.values[element];
    const auto [count_below, sum_below] = tree.below(prepared.rank[element]);
    const double to_x =
        value * count_below - sum_below + (sum_x - sum_below) - value * (count_x - count_below);
    const double to_y = prepared.to_all[element] - to_x;
    within_x += to_x;
    within_y -= to_y;
    between += to_y - to_x;
    tree.insert(prepared.rank[element], value);
    sum_x += value;
    count_x += 1;
    visit(tau + 1, within_x, within_y, between);
  }
}

struct Split {
  size_t tau = 0;
  double t = -1;
};

Split best_split(const Prepared& prepared, const std::vector<size_t>& order, size_t min_segment) {
  Split best;
  const auto size = static_cast<double>(order.size());
  scan(prepared, order, [&](size_t tau, double within_x, double within_y, double between) {
    if (tau < min_segment || tau + min_segment > order.size()) return;
    const auto n = static_cast<double>(tau);
    const double t = t_of(within_x, within_y, between, n, size - n);
    if (t > best.t) best = {tau, t};
  });
  return best;
}

void shuffle(std::vector<size_t>& order, std::mt19937_64& engine) {
  for (size_t index = order.size(); index > 1; --index) {
    std::swap(order[index - 1], order[uniform_index(engine, index)]);
  }
}

std::vector<size_t> identity(size_t size) {
  std::vector<size_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

double mean_of(std::span<const double> series, size_t begin, size_t end) {
  double sum = 0;
  for (size_t index = begin; index < end; ++index) sum += series[index];
  return sum / static_cast<double>(end - begin);
}

double relative(double before, double after) {
  if (before != 0) return after / before - 1;
  return after == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), after);
}

class Divider {
 public:
  Divider(std::span<const double> series, const ChangePointOptions& options)
      : series_(series),
        options_(options),
        alpha_(divisive_false_positive(options)),
        engine_(options.seed) {}

  // The next significant split of a segment between the points found so far, with its p-value.
  bool next(std::vector<std::pair<size_t, double>>& found) {
    std::vector<size_t> bounds = {0};
    for (const auto& [index, p_value] : found) bounds.push_back(index);
    bounds.push_back(series_.size());
    std::sort(bounds.begin(), bounds.end());
    Split best;
    std::vector<std::pair<size_t, size_t>> windows;
    for (size_t index = 0; index + 1 < bounds.size(); ++index) {
      const auto window = std::make_pair(bounds[index], bounds[index + 1]);
      if (window.second - window.first < 2 * options_.min_segment) continue;
      windows.push_back(window);
      const auto& split = split_of(window);
      if (split.t > best.t) best = {split.tau + window.first, split.t};
    }
    if (best.t <= 0) return false;
    const double p_value = permutation_p_value(windows, best.t);
    if (p_value > alpha_) return false;
    found.emplace_back(best.tau, p_value);
    return true;
  }

 private:
  const Prepared& prepared_of(std::pair<size_t, size_t> window) {
    auto found = prepared_.find(window);
    if (found == prepared_.end()) {
      found =
          prepared_
              .emplace(window, prepare(series_.subspan(window.first, window.second - window.first)))
              .first;
    }
    return found->second;
  }
  const Split& split_of(std::pair<size_t, size_t> window) {
    auto found = splits_.find(window);
    if (found == splits_.end()) {
      const auto& prepared = prepared_of(window);
      found = splits_
                  .emplace(window, best_split(prepared, identity(prepared.values.size()),
                                              options_.min_segment))
                  .first;
    }
    return found->second;
  }

  // (b + 1) / (permutations + 1), b the permutations whose largest statistic over the windows
  // reaches the observed one; stops as soon as the answer is above false_positive.
  double permutation_p_value(const std::vector<std::pair<size_t, size_t>>& windows,
                             double observed) {
    const auto trials = static_cast<double>(options_.permutations + 1);
    const double tolerance = observed * 1e-12;
    double reached = 0;
    for (size_t permutation = 0; permutation < options_.permutations; ++permutation) {
      double largest = 0;
      for (const auto& window : windows) {
        const auto& prepared = prepared_of(window);
        auto order = identity(prepared.values.size());
        shuffle(order, engine_);
        largest = std::max(largest, best_split(prepared, order, options_.min_segment).t);
      }
      if (largest >= observed - tolerance) reached += 1;
      if ((reached + 1) / trials > alpha_) return (reached + 1) / trials;
    }
    return (reached + 1) / trials;
  }

  std::span<const double> series_;
  const ChangePointOptions& options_;
  double alpha_;
  std::mt19937_64 engine_;
  std::map<std::pair<size_t, size_t>, Prepared> prepared_;
  std::map<std::pair<size_t, size_t>, Split> splits_;
};

std::vector<Segment> segments_of(std::span<const double> series,
                                 const std::vector<std::pair<size_t, double>>& points) {
  std::vector<Segment> segments;
  size_t begin = 0;
  for (const auto& [index, p_value] : points) {
    segments.push_back({begin, index, mean_of(series, begin, index)});
    begin = index;
  }
  segments.push_back(
      {begin, series.size(), series.empty() ? 0 : mean_of(series, begin, series.size())});
  return segments;
}

// Drops the smallest step below the minimum until every step reaches it; the merged segments'
// means are those of the runs they now hold.
template <typename Level>
void merge_small_steps(std::span<const double> series, double min_relative_change,
                       std::vector<std::pair<size_t, double>>& points, const Level& level) {
  while (!points.empty()) {
    const auto segments = segments_of(series, points);
    size_t smallest = points.size();
    double smallest_step = std::numeric_limits<double>::infinity();
    for (size_t index = 0; index < points.size(); ++index) {
      const double step =
          std::abs(relative(level(segments[index].mean), level(segments[index + 1].mean)));
      if (step < min_relative_change && step < smallest_step) {
        smallest = index;
        smallest_step = step;
      }
    }
    if (smallest == points.size()) return;
    points.erase(points.begin() + static_cast<std::ptrdiff_t>(smallest));
  }
}

// The end test on the last segment: a change point at its end when the adjusted p is within
// the end test's share of false_positive and the step reaches min_relative_change.
template <typename Level>
std::optional<std::pair<size_t, double>> change_at_end(
    std::span<const double> series, const std::vector<std::pair<size_t, double>>& points,
    const ChangePointOptions& options, const Level& level) {
  if (options.end_runs == 0) return std::nullopt;
  const size_t begin = points.empty() ? 0 : points.back().first;
  EndChangeOptions end_options;
  end_options.min_runs = std::max<size_t>(options.min_segment, 1);
  end_options.max_runs = options.end_runs;
  end_options.direction = options.end_direction;
  // A noise under a quarter of the smallest step that matters is not trusted (on the log scale:
  // the searched values are logs, their sd a relative noise).
  if (options.log_scale) end_options.min_sd = std::log1p(options.min_relative_change) / 4;
  const auto end = find_end_change(series.subspan(begin), end_options);
  if (!end || end->p_value > end_false_positive(options)) return std::nullopt;
  const size_t index = begin + end->index;
  const double step =
      relative(level(mean_of(series, begin, index)), level(mean_of(series, index, series.size())));
  if (!(std::abs(step) >= options.min_relative_change)) return std::nullopt;
  return std::make_pair(index, end->p_value);
}

}  // namespace

EnergyStatistics energy_statistics(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty()) throw std::invalid_argument("distribution cannot be empty");
  std::vector<double> joined(x.begin(), x.end());
  joined.insert(joined.end(), y.begin(), y.end());
  const auto prepared = prepare(joined);
  EnergyStatistics statistics;
  const auto n = static_cast<double>(x.size());
  const auto m = static_cast<double>(y.size());
  scan(prepared, identity(joined.size()),
       [&](size_t tau, double within_x, double within_y, double between) {
         if (tau != x.size()) return;
         const double between_mean = between / (n * m);
         statistics.e = 2 * between_mean - 2 * within_x / (n * n) - 2 * within_y / (m * m);
         statistics.t = n * m / (n + m) * statistics.e;
         statistics.h = between_mean > 0 ? statistics.e / (2 * between_mean) : 0;
       });
  return statistics;
}

std::vector<double> split_statistics(std::span<const double> series) {
  const auto prepared = prepare(series);
  std::vector<double> statistics(series.size(), 0);
  const auto size = static_cast<double>(series.size());
  scan(prepared, identity(series.size()),
       [&](size_t tau, double within_x, double within_y, double between) {
         if (tau >= series.size()) return;
         const auto n = static_cast<double>(tau);
         statistics[tau] = t_of(within_x, within_y, between, n, size - n);
       });
  return statistics;
}

double divisive_false_positive(const ChangePointOptions& options) {
  return options.false_positive - end_false_positive(options);
}

double end_false_positive(const ChangePointOptions& options) {
  return options.end_runs > 0 ? options.false_positive * std::clamp(options.end_share, 0.0, 1.0)
                              : 0;
}

size_t runs_needed_for(const ChangePointOptions& options) {
  size_t runs = std::max<size_t>(2 * options.min_segment, 2);
  const double alpha = divisive_false_positive(options);
  while (2 / binomial_coefficient(runs, runs / 2) > alpha && runs < 10000) ++runs;
  return runs;
}

ChangePoints find_change_points(std::span<const double> series, const ChangePointOptions& options) {
  std::vector<double> searched(series.begin(), series.end());
  for (auto& value : searched) {
    if (!std::isfinite(value)) throw std::invalid_argument("series value is not finite");
    if (options.log_scale) {
      if (value <= 0) throw std::invalid_argument("series value is not positive (log scale)");
      value = std::log(value);
    }
  }
  ChangePoints result;
  result.runs_needed = runs_needed_for(options);
  result.too_short = series.size() < result.runs_needed;
  std::vector<std::pair<size_t, double>> found;
  // Means of the searched values; on the log scale their exp is the geometric mean, and the
  // merge's relative step the ratio of geometric means.
  const auto level = [&](double mean) { return options.log_scale ? std::exp(mean) : mean; };
  if (!result.too_short) {
    Divider divider(searched, options);
    while (divider.next(found)) {
    }
    std::sort(found.begin(), found.end());
    merge_small_steps(searched, options.min_relative_change, found, level);
    if (const auto end = change_at_end(searched, found, options, level)) found.push_back(*end);
  }
  result.segments = segments_of(searched, found);
  for (auto& segment : result.segments) segment.mean = level(segment.mean);
  for (size_t index = 0; index < found.size(); ++index) {
    ChangePoint point;
    point.index = found[index].first;
    point.p_value = found[index].second;
    point.mean_before = result.segments[index].mean;
    point.mean_after = result.segments[index + 1].mean;
    point.relative_change = relative(point.mean_before, point.mean_after);
    result.points.push_back(point);
  }
  return result;
}

}  // namespace pgwaitprof::model
