// A matrix sweep's runs grouped into cells, with each cell's medians over repeats, dominant wait
// and wait profile: share and AAS per wait class and per wait event as the mean over the cell's
// completed runs, with the standard error of that mean when there are repeats, or the single
// run's sampling error.
#include "model/matrix_aggregate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "model/statistics.h"

namespace pgwaitprof::model {

namespace {

// The completed runs of one cell and their figures, before the medians are taken.
struct CellRuns {
  std::vector<double> tps;
  std::vector<double> checkpoint_s;
  std::vector<double> latency_ms;
  std::vector<double> p99_ms;
  Profile profile;               // of the completed runs only, like the tps
  std::vector<const Run*> runs;  // the same runs, for their wait profiles
  int failed = 0;
};

struct RunTotals {
  uint64_t total = 0;  // non-idle samples
  uint64_t snapshots = 0;
};

// A run's steady-state profile: the part its summary figures and errors are about.
struct SampledRun {
  const Run* run;
  Profile profile;
};

struct Part {
  std::string wait_class;
  std::vector<uint64_t> counts;  // one per run
};

double mean(const std::vector<double>& values) { return values.empty() ? 0 : sample_mean(values); }

double ratio(uint64_t count, uint64_t of) {
  return of > 0 ? static_cast<double>(count) / static_cast<double>(of) : 0;
}

WaitShare part_share(const std::string& name, const Part& part, const std::vector<SampledRun>& runs,
                     const std::vector<RunTotals>& totals,
                     const std::function<std::string(const WaitKey&)>& name_of) {
  WaitShare share{name, part.wait_class};
  if (totals.size() == 1) {
    share.share = ratio(part.counts[0], totals[0].total);
    share.aas = ratio(part.counts[0], totals[0].snapshots);
    const auto estimate = single_run_error(
        *runs[0].run, [&](const WaitKey& key) { return !is_idle(key) && name_of(key) == name; });
    share.share_error = estimate.share.standard_error;
    share.aas_error = estimate.aas.standard_error;
    return share;
  }
  std::vector<double> shares;
  std::vector<double> aas;
  for (size_t run = 0; run < totals.size(); ++run) {
    shares.push_back(ratio(part.counts[run], totals[run].total));
    aas.push_back(ratio(part.counts[run], totals[run].snapshots));
  }
  share.share = mean(shares);
  share.share_error = standard_error_of_mean(shares);
  share.aas = mean(aas);
  share.aas_error = standard_error_of_mean(aas);
  return share;
}

// Every non-idle sample of the runs, grouped by `name_of` its wait key.
std::vector<WaitShare> composition(const std::vector<SampledRun>& runs,
                                   const std::vector<RunTotals>& totals,
                                   const std::function<std::string(const WaitKey&)>& name_of) {
  std::map<std::string, Part> parts;
  for (size_t run = 0; run < runs.size(); ++run) {
    for (const auto& [key, count] : runs[run].profile.counts()) {
      if (is_idle(key)) continue;
      Part& part = parts[name_of(key)];
      part.wait_class = key.wait_event_type;
      part.counts.resize(runs.size());
      part.counts[run] += count;
    }
  }
  std::vector<WaitShare> shares;
  for (const auto& [name, part] : parts) {
    shares.push_back(part_share(name, part, runs, totals, name_of));
  }
  return shares;
}

// The runs grouped by row (variant, or variant and attribute) and client count, rows in the
// order they first appear in the first repeat; the table's variants and clients set.
std::map<std::pair<std::string, int>, CellRuns> group_runs(const std::vector<Run>& runs,
                                                           MatrixTable& table) {
  auto row_of = [&](const Run& run) {
    if (table.split_by.empty()) return run.variant;
    const auto value = run_attribute(run, table.split_by);
    return fmt::format("{} [{} {}]", variant_label(run.variant), table.split_by,
                       value.empty() ? "?" : value);
  };
  // The orchestrator interleaves variants within each repeat, so the first repeat shows the
  // plan's variant order even when files are listed in another order.
  std::vector<size_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return runs[x].repeat < runs[y].repeat; });

  std::map<std::pair<std::string, int>, CellRuns> grouped;
  std::set<int> clients;
  for (const size_t index : order) {
    const Run& run = runs[index];
    const std::string row = row_of(run);
    if (std::find(table.variants.begin(), table.variants.end(), row) == table.variants.end()) {
      table.variants.push_back(row);
    }
    clients.insert(run.clients);
    CellRuns& cell = grouped[{row, run.clients}];
    if (run.status != RunStatus::kCompleted) {
      ++cell.failed;
      continue;
    }
    cell.profile.merge(run.profile);
    cell.runs.push_back(&run);
    if (run.checkpoint_after && run.checkpoint_after->error.empty()) {
      cell.checkpoint_s.push_back(run.checkpoint_after->duration.count());
    }
    if (!run.loadgen) continue;
    const auto figure = run_figure(run, table.metric);
    if (!figure) continue;
    cell.tps.push_back(*figure);
    if (std::isfinite(run.loadgen->latency_avg.count())) {
      cell.latency_ms.push_back(run.loadgen->latency_avg.count());
    }
    if (run.latency && std::isfinite(run.latency->p99.count()))
      cell.p99_ms.push_back(run.latency->p99.count());
  }
  table.clients.assign(clients.begin(), clients.end());
  return grouped;
}

// One cell from its runs: medians and range over the repeats, the dominant wait, the profile.
MatrixCell make_cell(const std::string& variant, int clients, Metric metric, const CellRuns& runs) {
  MatrixCell cell;
  cell.variant = variant;
  cell.clients = clients;
  cell.metric = metric;
  cell.tps = runs.tps;
  if (!runs.checkpoint_s.empty()) cell.checkpoint_median = base::Seconds(median(runs.checkpoint_s));
  if (!cell.tps.empty()) {
    const auto [min_it, max_it] = std::minmax_element(cell.tps.begin(), cell.tps.end());
    cell.tps_min = *min_it;
    cell.tps_max = *max_it;
    cell.tps_median = median(cell.tps);
  }
  cell.latency_median = base::Milliseconds(median(runs.latency_ms));
  if (!runs.p99_ms.empty()) cell.p99_median = base::Milliseconds(median(runs.p99_ms));
  set_dominant(cell, runs.profile);
  set_composition(cell, runs.runs);
  cell.failed_runs = runs.failed;
  return cell;
}

}  // namespace

const WaitShare* MatrixCell::find_class(const std::string& name) const {
  for (const auto& share : classes) {
    if (share.name == name) return &share;
  }
  return nullptr;
}

const WaitShare* MatrixCell::find_event(const std::string& name) const {
  for (const auto& share : events) {
    if (share.name == name) return &share;
  }
  return nullptr;
}

const WaitShare* MatrixCell::find_function(const std::string& name) const {
  for (const auto& share : functions) {
    if (share.name == name) return &share;
  }
  return nullptr;
}

const MatrixCell* MatrixTable::find(const std::string& variant, int clients) const {
  for (const auto& cell : cells) {
    if (cell.variant == variant && cell.clients == clients) return &cell;
  }
  return nullptr;
}

void set_builds(MatrixTable& table, const std::vector<Run>& runs,
                const std::map<std::string, std::string>& configure) {
  table.builds.clear();
  std::set<int> majors;
  for (const auto& variant : table.variants) {
    VariantBuild build{variant, "", 0, ""};
    if (const auto found = configure.find(variant); found != configure.end()) {
      build.configure = found->second;
    }
    for (const auto& run : runs) {
      if (run.variant != variant || run.environment.server_version.empty()) continue;
      build.server_version = run.environment.server_version;
      build.major = run.environment.server_version_num / 10000;
      break;
    }
    if (build.major > 0) majors.insert(build.major);
    table.builds.push_back(std::move(build));
  }
  table.mixed_majors.clear();
  if (majors.size() > 1) table.mixed_majors.assign(majors.begin(), majors.end());
}

std::string run_attribute(const Run& run, const std::string& name) {
  if (name == "kernel") return run.environment.kernel;
  if (name == "cpu_model") return run.environment.cpu_model;
  if (name == "server_version") return run.environment.server_version;
  if (name == "label") return run.label;
  return "";
}

std::string variant_label(const std::string& variant) { return variant.empty() ? "-" : variant; }

MatrixTable build_matrix_table(const std::vector<Run>& runs, std::string name, Metric metric,
                               const std::string& split_by) {
  MatrixTable table;
  table.name = std::move(name);
  table.metric = metric;
  table.split_by = split_by;
  const auto grouped = group_runs(runs, table);
  for (const auto& variant : table.variants) {
    for (const int count : table.clients) {
      const auto found = grouped.find({variant, count});
      if (found == grouped.end()) continue;
      table.cells.push_back(make_cell(variant, count, metric, found->second));
    }
  }
  // Elapsed time of fixed-work runs is not a throughput the law describes.
  if (metric == Metric::kTps) {
    for (const auto& variant : table.variants) {
      std::vector<ThroughputPoint> points;
      std::vector<ScalabilityCell> cells;
      for (const auto& cell : table.cells) {
        if (cell.variant != variant) continue;
        for (const double tps : cell.tps) points.push_back({cell.clients, tps});
        cells.push_back({.clients = cell.clients,
                         .tps_median = cell.tps.empty() ? 0.0 : cell.tps_median,
                         .has_profile = cell.profile_runs > 0,
                         .classes = cell.classes,
                         .events = cell.events});
      }
      table.scalability.push_back(analyse_scalability(variant, points, cells));
    }
  }
  return table;
}

void set_dominant(MatrixCell& cell, const Profile& profile) {
  // One wait event under several backend types or states is one line in the hackers' tables,
  // so it is ranked as one.
  std::map<std::string, std::pair<uint64_t, std::string>> by_name;  // count, wait class
  for (const auto& [key, count] : profile.counts()) {
    if (is_idle(key)) continue;
    auto& entry = by_name[display_name(key)];
    entry.first += count;
    entry.second = key.wait_event_type;
  }
  const uint64_t total = profile.total(false);
  uint64_t best = 0;
  for (const auto& [name, entry] : by_name) {  // name order breaks ties
    if (entry.first <= best) continue;
    best = entry.first;
    cell.dominant_wait = name;
    cell.dominant_class = entry.second;
  }
  if (total > 0) cell.dominant_share = static_cast<double>(best) / static_cast<double>(total);
}

WaitKeyEstimate single_run_error(const Run& run,
                                 const std::function<bool(const WaitKey&)>& selected) {
  auto estimate = estimate_keys(run, steady_window(run), false, selected);
  // An error from too few independent batches is not shown as if it meant something.
  if (!estimate.share.reliable) estimate.share.standard_error = std::nan("");
  if (!estimate.aas.reliable) estimate.aas.standard_error = std::nan("");
  return estimate;
}

namespace {

// The client backends' functions of the runs with a CPU profile: each run's share per function,
// their mean and its standard error between the runs, largest first.
std::vector<WaitShare> function_composition(const std::vector<const Run*>& runs) {
  std::map<std::string, std::vector<double>> shares;  // one value per profiled run
  std::map<std::string, std::vector<double>> aas;
  size_t profiled = 0;
  for (const auto* run : runs) {
    if (!run->cpu_profile) continue;
    const auto group = run->cpu_profile->groups.find(std::string(kCpuClientBackends));
    if (group == run->cpu_profile->groups.end() || group->second.samples == 0) continue;
    ++profiled;
    for (const auto& function : group->second.self) {
      const std::string name = function_label(function);
      shares[name].resize(profiled, 0.0);
      aas[name].resize(profiled, 0.0);
      shares[name].back() = ratio(function.samples, group->second.samples);
      aas[name].back() = cpu_aas(function.samples, *run->cpu_profile);
    }
  }
  std::vector<WaitShare> functions;
  for (auto& [name, values] : shares) {
    values.resize(profiled, 0.0);
    aas[name].resize(profiled, 0.0);
    const double error =
        profiled >= 2 ? standard_error_of_mean(values) : std::numeric_limits<double>::quiet_NaN();
    functions.push_back({name, "CPU", mean(values), error, mean(aas[name]), 0});
  }
  std::stable_sort(functions.begin(), functions.end(),
                   [](const WaitShare& a, const WaitShare& b) { return a.share > b.share; });
  return functions;
}

}  // namespace

void set_composition(MatrixCell& cell, const std::vector<const Run*>& runs) {
  std::vector<SampledRun> sampled;
  std::vector<RunTotals> totals;
  std::vector<double> aas_totals;
  for (const auto* run : runs) {
    auto profile = window_profile(*run, steady_window(*run));
    if (profile.snapshots() == 0) continue;
    totals.push_back({profile.total(false), profile.snapshots()});
    aas_totals.push_back(ratio(totals.back().total, totals.back().snapshots));
    sampled.push_back({run, std::move(profile)});
  }
  cell.profile_runs = static_cast<int>(sampled.size());
  cell.error_source = sampled.empty()       ? ShareError::kNone
                      : sampled.size() == 1 ? ShareError::kSampling
                                            : ShareError::kRepeats;
  cell.aas_total = mean(aas_totals);
  cell.classes =
      composition(sampled, totals, [](const WaitKey& key) { return key.wait_event_type; });
  std::stable_sort(
      cell.classes.begin(), cell.classes.end(),
      [](const WaitShare& a, const WaitShare& b) { return wait_class_before(a.name, b.name); });
  cell.events = composition(sampled, totals, [](const WaitKey& key) { return display_name(key); });
  std::stable_sort(cell.events.begin(), cell.events.end(),
                   [](const WaitShare& a, const WaitShare& b) { return a.share > b.share; });
  cell.functions = function_composition(runs);
  cell.durations = cell_durations(runs);
}

}  // namespace pgwaitprof::model
