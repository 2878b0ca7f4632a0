// Text, Markdown and JSON of an A/B comparison of runs or sets of runs (matrix directories),
// whose decisions model/compare.h makes: per cell the change in throughput and p99 latency with
// its interval, p-value and verdict, the wait profile by class, and the wait events that moved.
#pragma once

#include <string>

#include "model/compare.h"

namespace pgwaitprof::exporters {

// The comparison (model/compare.h), by its names here.
using model::ClassShift;
using model::compare_runs;
using model::CompareCell;
using model::Comparison;
using model::MetricTest;
using model::SideFigure;
using model::split_by_attribute;
using model::SplitSides;
using model::WaitMove;

std::string render_comparison_text(const Comparison& comparison);
std::string render_comparison_markdown(const Comparison& comparison);
std::string render_comparison_json(const Comparison& comparison);

}  // namespace pgwaitprof::exporters
