// `clients: auto`: the client counts of a sweep that finds where throughput stops scaling.
// Doubling from 1 (1, 2, 4, ... and the maximum) until a count's tps rises by less than a
// stated fraction over the previous one, or the maximum is reached; then the counts between
// (the geometric midpoints of the last two steps), so that the scalability fit and the knee
// (model/scalability.h) have points where the curve bends. Pure: the matrix engine asks it for
// the next counts after each round of runs, so a resumed sweep takes the same decisions.
#pragma once

#include <map>
#include <vector>

namespace pgwaitprof::model {

struct AdaptiveSweepOptions {
  int max_clients = 64;
  // Throughput "stops rising" when a doubling adds less than this fraction.
  double min_rise = 0.05;
};

// The client counts to run next, ascending, none of them in `measured` (client count -> median
// tps of one variant's runs, 0 when none completed); empty
// when the sweep is complete.
std::vector<int> next_client_counts(const std::map<int, double>& measured,
                                    const AdaptiveSweepOptions& options);

// The union over variants: every variant's sweep needs its counts, and a matrix runs every
// count for every variant.
std::vector<int> next_client_counts_of_variants(
    const std::vector<std::map<int, double>>& measured_by_variant,
    const AdaptiveSweepOptions& options);

}  // namespace pgwaitprof::model
