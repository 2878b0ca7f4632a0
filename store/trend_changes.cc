// Change points per group of the history, and what explains each.
#include "store/trend_changes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "model/moves.h"
#include "store/trend.h"

namespace pgwaitprof::store {
namespace {

bool older_first(const RunSummary& a, const RunSummary& b) {
  return a.started_at != b.started_at ? a.started_at < b.started_at : a.id < b.id;
}

bool usable(const RunSummary& run) {
  return run.status == "completed" && std::isfinite(run.tps) && run.tps > 0;
}

std::string joined(const std::set<std::string>& values) {
  std::string text;
  for (const auto& value : values) text += (text.empty() ? "" : ", ") + value;
  return text;
}

// Runs of one group must be repeats of one configuration: the same workload and the same load
// generator command (its run paths left out).
std::optional<base::Error> mixed_group(const GroupChanges& group, const std::string& group_by) {
  std::set<std::string> workloads, commands;
  for (const auto& run : group.runs) {
    workloads.insert(run.workload);
    commands.insert(run.command);
  }
  const auto where =
      group.group.empty() ? std::string("the history") : fmt::format("group \"{}\"", group.group);
  if (workloads.size() > 1) {
    return base::Error{fmt::format(
        "{} has runs of different workloads ({}): split them with --workload NAME{}", where,
        joined(workloads), group_by == "workload" ? "" : " or --group-by workload")};
  }
  if (commands.size() > 1) {
    return base::Error{fmt::format(
        "{} has runs of {} different load generator commands (workload \"{}\"): split them with "
        "--label GLOB, --tag KEY=GLOB or --group-by label",
        where, commands.size(), *workloads.begin())};
  }
  return std::nullopt;
}

MetricSeries series_of(const GroupChanges& group, std::string metric,
                       const std::function<double(const RunSummary&)>& value_of,
                       const model::ChangePointOptions& method) {
  MetricSeries series;
  series.metric = std::move(metric);
  for (size_t index = 0; index < group.runs.size(); ++index) {
    const double value = value_of(group.runs[index]);
    if (!std::isfinite(value)) continue;
    series.runs.push_back(index);
    series.values.push_back(value);
  }
  series.found = model::find_change_points(series.values, method);
  return series;
}

std::vector<std::string> waits_reaching(const GroupChanges& group, double share) {
  std::map<std::string, double> largest;
  for (const auto& run : group.runs) {
    for (const auto& [wait, wait_share] : run.wait_shares) {
      largest[wait] = std::max(largest[wait], wait_share);
    }
  }
  std::vector<std::string> waits;
  for (const auto& [wait, wait_share] : largest) {
    if (wait_share >= share) waits.push_back(wait);
  }
  return waits;
}

// A wait's AAS, share of DB time and time a transaction (ms) across a change point: the means of
// the runs [begin, split) and [split, end), the noise judged on the time a transaction.
WaitShift wait_shift(const GroupChanges& group, const std::string& wait, size_t begin, size_t split,
                     size_t end) {
  std::vector<double> aas[2], share[2], ms[2];
  for (size_t index = begin; index < end; ++index) {
    const auto& run = group.runs[index];
    const int side = index < split ? 0 : 1;
    const auto found = run.wait_shares.find(wait);
    aas[side].push_back(wait_aas(run, wait));
    share[side].push_back(found == run.wait_shares.end() ? 0.0 : found->second);
    ms[side].push_back(1000 * wait_aas(run, wait) / run.tps);
  }
  const auto ms_before = model::between_repeats(ms[0]);
  const auto ms_after = model::between_repeats(ms[1]);
  WaitShift shift;
  shift.wait = wait;
  shift.before = model::between_repeats(aas[0]).mean;
  shift.after = model::between_repeats(aas[1]).mean;
  shift.share_before = model::between_repeats(share[0]).mean;
  shift.share_after = model::between_repeats(share[1]).mean;
  shift.ms_before = ms_before.mean;
  shift.ms_after = ms_after.mean;
  shift.significant = model::significant_move(ms_before, ms_after);
  return shift;
}

// The waits whose time a transaction moved most: what each transaction's time in the server
// gained or lost, comparable between runs of another tps (an AAS or a share of DB time is not:
// when commits wait for a flush, CPU's AAS and share fall as the new waits take the clients'
// time, and were named first). Those beyond the noise first.
std::vector<WaitShift> wait_shifts(const GroupChanges& group, size_t begin, size_t split,
                                   size_t end, size_t count) {
  std::set<std::string> waits;
  for (size_t index = begin; index < end; ++index) {
    for (const auto& [wait, share] : group.runs[index].wait_shares) waits.insert(wait);
  }
  std::vector<WaitShift> shifts;
  for (const auto& wait : waits) shifts.push_back(wait_shift(group, wait, begin, split, end));
  std::stable_sort(shifts.begin(), shifts.end(), [](const WaitShift& a, const WaitShift& b) {
    const bool a_beyond = a.significant.value_or(false);
    const bool b_beyond = b.significant.value_or(false);
    if (a_beyond != b_beyond) return a_beyond;
    return std::abs(a.ms_after - a.ms_before) > std::abs(b.ms_after - b.ms_before);
  });
  if (shifts.size() > count) shifts.resize(count);
  return shifts;
}

std::vector<AttributeChange> attribute_changes(const RunSummary& before, const RunSummary& after) {
  std::vector<AttributeChange> changes;
  const auto add = [&](const std::string& name, const std::string& a, const std::string& b) {
    if (a != b) changes.push_back({name, a, b});
  };
  add("server_version", before.server_version, after.server_version);
  add("kernel", before.kernel, after.kernel);
  add("host", before.host, after.host);
  const auto version = [](const std::string& text) { return text.empty() ? "unknown" : text; };
  add("pgwaitprof_version", version(before.pgwaitprof_version), version(after.pgwaitprof_version));
  std::set<std::string> names;
  for (const auto& [name, value] : before.settings) names.insert(name);
  for (const auto& [name, value] : after.settings) names.insert(name);
  for (const auto& name : names) {
    const auto a = before.settings.find(name);
    const auto b = after.settings.find(name);
    add("setting " + name, a == before.settings.end() ? "(default)" : a->second,
        b == after.settings.end() ? "(default)" : b->second);
  }
  return changes;
}

TrendChange explain(const GroupChanges& group, const MetricSeries& series, size_t point_index,
                    const ChangeOptions& options) {
  const auto& point = series.found.points[point_index];
  const auto& before = series.found.segments[point_index];
  const auto& after = series.found.segments[point_index + 1];
  TrendChange change;
  change.metric = series.metric;
  change.point = point;
  change.run = series.runs[point.index];
  change.run_id = group.runs[change.run].id;
  change.runs_before = before.end - before.begin;
  change.runs_after = after.end - after.begin;
  const bool positive = std::all_of(series.values.begin() + static_cast<long>(before.begin),
                                    series.values.begin() + static_cast<long>(after.end),
                                    [](double value) { return value > 0; });
  if (series.metric.rfind("AAS ", 0) != 0 && positive) {
    const std::span<const double> values(series.values);
    change.test = model::welch_log_test(values.subspan(before.begin, change.runs_before),
                                        values.subspan(after.begin, change.runs_after));
  }
  // The group's runs the segments span, including those that lack this metric.
  const size_t begin = series.runs[before.begin];
  const size_t end = series.runs[after.end - 1] + 1;
  change.waits = wait_shifts(group, begin, change.run, end, options.explained_waits);
  const size_t previous = series.runs[point.index - 1];
  change.changed = attribute_changes(group.runs[previous], group.runs[change.run]);
  return change;
}

void analyse(GroupChanges& group, const ChangeOptions& options) {
  group.runs_needed = model::runs_needed_for(options.method);
  group.series.push_back(series_of(
      group, "tps", [](const RunSummary& run) { return run.tps; },
      method_for("tps", options.method)));
  group.series.push_back(series_of(
      group, "p99 ms", [](const RunSummary& run) { return run.p99_ms > 0 ? run.p99_ms : NAN; },
      method_for("p99 ms", options.method)));
  for (const auto& wait : waits_reaching(group, options.wait_share)) {
    group.series.push_back(series_of(
        group, "AAS " + wait, [&](const RunSummary& run) { return wait_aas(run, wait); },
        method_for("AAS " + wait, options.method)));
  }
  for (const auto& series : group.series) {
    for (size_t index = 0; index < series.found.points.size(); ++index) {
      group.changes.push_back(explain(group, series, index, options));
    }
  }
  std::stable_sort(group.changes.begin(), group.changes.end(),
                   [](const TrendChange& a, const TrendChange& b) { return a.run < b.run; });
}

std::string method_text(const model::ChangePointOptions& method) {
  std::string text = fmt::format(
      "E-Divisive with means (tps and p99 on the log scale), permutation test ({} permutations, "
      "seed {}) at a false-positive probability of {:g} per series",
      method.permutations, method.seed, model::divisive_false_positive(method));
  if (method.end_runs > 0) {
    text += fmt::format(
        ", and for tps falling and p99 rising the end test (the last {} to {} runs against the {} "
        "to {} before them: Student's t, Bonferroni over the runs) at {:g}: {:g} in all",
        method.min_segment, method.end_runs, model::EndChangeOptions{}.min_before,
        model::EndChangeOptions{}.max_before, model::end_false_positive(method),
        method.false_positive);
  }
  return text + fmt::format(", steps under {:g}% merged, at least {} runs a side",
                            100 * method.min_relative_change, method.min_segment);
}

}  // namespace

model::ChangePointOptions method_for(const std::string& metric,
                                     const model::ChangePointOptions& method) {
  auto options = method;
  const bool tps = metric == "tps";
  options.log_scale = tps || metric == "p99 ms";
  options.end_direction = tps ? model::ChangeDirection::kFall : model::ChangeDirection::kRise;
  // The end test's t needs noise near normal: tps and latency on the log scale have it; a
  // wait's AAS is often 0 with spikes (it raised 2 to 3 false alarms per 100 runs there).
  if (!options.log_scale) options.end_runs = 0;
  return options;
}

double wait_aas(const RunSummary& run, const std::string& wait) {
  const auto found = run.wait_shares.find(wait);
  return found == run.wait_shares.end() ? 0.0 : found->second * run.aas;
}

base::Expected<TrendChanges> find_trend_changes(std::vector<RunSummary> runs,
                                                const ChangeOptions& options) {
  TrendChanges result;
  result.group_by = options.group_by;
  result.method = method_text(options.method);
  std::stable_sort(runs.begin(), runs.end(), older_first);
  std::map<std::string, GroupChanges> groups;
  for (auto& run : runs) {
    auto& group = groups[group_of(run, options.group_by)];
    if (usable(run)) {
      group.runs.push_back(std::move(run));
    } else {
      group.skipped.push_back(fmt::format("{} ({})", run.id, run.status));
    }
  }
  for (auto& [name, group] : groups) {
    group.group = name;
    if (auto mixed = mixed_group(group, options.group_by)) return *mixed;
    analyse(group, options);
    result.groups.push_back(std::move(group));
  }
  return result;
}

base::Expected<std::vector<TrendChange>> new_change_points(std::vector<RunSummary> runs,
                                                           const ChangeOptions& options) {
  std::stable_sort(runs.begin(), runs.end(), older_first);
  ChangeOptions one_group = options;
  one_group.group_by.clear();
  auto now = find_trend_changes(runs, one_group);
  if (!now) return now.error();
  if (now->groups.empty()) return std::vector<TrendChange>{};
  runs.pop_back();
  auto before = find_trend_changes(runs, one_group);
  if (!before) return before.error();
  std::set<std::pair<std::string, std::string>> known;
  for (const auto& group : before->groups) {
    for (const auto& change : group.changes) {
      known.emplace(change.metric, group.runs[change.run].id);
    }
  }
  std::vector<TrendChange> brought;
  const auto& group = now->groups.front();
  for (const auto& change : group.changes) {
    if (!known.contains({change.metric, group.runs[change.run].id})) brought.push_back(change);
  }
  return brought;
}

}  // namespace pgwaitprof::store
