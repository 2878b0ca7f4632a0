// What a run's data says beyond its counts: stalls (intervals whose throughput collapsed, with
// what the client backends waited on) and the warnings a reader of the wait profile needs (a
// saturated client, a host without idle CPU, missed ticks, hidden backends, sampler outages).
// Pure functions of a model::Run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/run.h"

namespace pgwaitprof::model {

// Intervals whose tps is below `fraction` of the run's steady tps (steady_tps()), or with no
// transaction at all while client backends were busy, with what the client backends waited on;
// consecutive stalled intervals are merged.
std::vector<Stall> detect_stalls(const std::vector<TimelineSlice>& timeline, double fraction = 0.2);

// The level a run's throughput held when nothing stalled it, from its intervals' tps: their
// upper quartile, which a stall over most of the run does not pull down as it does the median.
double steady_tps(std::vector<double> tps);

// The sampler missed more than one tick in 20 outside its outages: why, in the words of the
// source in use; nullopt otherwise.
std::optional<std::string> missed_ticks_warning(const Run& run);

// Warnings about what inflates or hides parts of the wait profile. `loadgen_threads` is the
// load generator's thread count (pgbench -j).
std::vector<std::string> bottleneck_warnings(const Run& run, int loadgen_threads);

}  // namespace pgwaitprof::model
