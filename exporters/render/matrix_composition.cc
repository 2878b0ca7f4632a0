// The wait profile of each matrix cell: share and AAS per wait class and per wait event, as the
// mean over the cell's completed runs, with the standard error of that mean when there are
// repeats, or the single run's sampling error; and the rows of the per-variant tables.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "exporters/render/matrix_detail.h"
#include "exporters/render/text_format.h"
#include "model/statistics.h"

namespace pgwaitprof::exporters::matrix_detail {

namespace {

struct RunTotals {
  uint64_t total = 0;  // non-idle samples
  uint64_t snapshots = 0;
};

// A run's steady-state profile: the part its summary figures and errors are about.
struct SampledRun {
  const model::Run* run;
  model::Profile profile;
};

struct Part {
  std::string wait_class;
  std::vector<uint64_t> counts;  // one per run
};

double mean(const std::vector<double>& values) {
  return values.empty() ? 0 : model::sample_mean(values);
}

// The standard error of the mean: sample standard deviation / sqrt(n).
double standard_error(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  return model::sample_sd(values) / std::sqrt(static_cast<double>(values.size()));
}

double ratio(uint64_t count, uint64_t of) {
  return of > 0 ? static_cast<double>(count) / static_cast<double>(of) : 0;
}

WaitShare part_share(const std::string& name, const Part& part, const std::vector<SampledRun>& runs,
                     const std::vector<RunTotals>& totals,
                     const std::function<std::string(const model::WaitKey&)>& name_of) {
  WaitShare share{name, part.wait_class};
  if (totals.size() == 1) {
    share.share = ratio(part.counts[0], totals[0].total);
    share.aas = ratio(part.counts[0], totals[0].snapshots);
    const auto estimate = single_run_error(*runs[0].run, [&](const model::WaitKey& key) {
      return !model::is_idle(key) && name_of(key) == name;
    });
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
  share.share_error = standard_error(shares);
  share.aas = mean(aas);
  share.aas_error = standard_error(aas);
  return share;
}

// Every non-idle sample of the runs, grouped by `name_of` its wait key.
std::vector<WaitShare> composition(
    const std::vector<SampledRun>& runs, const std::vector<RunTotals>& totals,
    const std::function<std::string(const model::WaitKey&)>& name_of) {
  std::map<std::string, Part> parts;
  for (size_t run = 0; run < runs.size(); ++run) {
    for (const auto& [key, count] : runs[run].profile.counts()) {
      if (model::is_idle(key)) continue;
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

// A share with its error; without one when it could not be estimated (a single short run).
std::string percent_with_error(const WaitShare& share, const std::string& separator) {
  if (!std::isfinite(share.share_error)) return fmt::format("{:.1f}", 100 * share.share);
  return fmt::format("{:.1f}{}{:.1f}", 100 * share.share, separator, 100 * share.share_error);
}

// The events shown for a variant: each cell's largest few, ranked by their largest share.
std::vector<std::pair<std::string, std::string>> shown_events(const MatrixTable& table,
                                                              const std::string& variant) {
  std::map<std::string, std::pair<double, std::string>> largest;  // share, wait class
  for (const int clients : table.clients) {
    const MatrixCell* cell = table.find(variant, clients);
    if (cell == nullptr) continue;
    size_t taken = 0;
    for (const auto& event : cell->events) {
      if (taken == kTopEventsPerCell) break;
      if (event.name == event.wait_class) continue;  // CPU: its class row says it already
      auto& entry = largest[event.name];
      entry.first = std::max(entry.first, event.share);
      entry.second = event.wait_class;
      ++taken;
    }
  }
  std::vector<std::pair<std::string, std::pair<double, std::string>>> ranked(largest.begin(),
                                                                             largest.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::vector<std::pair<std::string, std::string>> events;
  for (const auto& [name, entry] : ranked) {
    if (events.size() == kShownEvents) break;
    events.emplace_back(name, entry.second);
  }
  return events;
}

}  // namespace

model::WaitKeyEstimate single_run_error(
    const model::Run& run, const std::function<bool(const model::WaitKey&)>& selected) {
  auto estimate = model::estimate_keys(run, model::steady_window(run), false, selected);
  // An error from too few independent batches is not shown as if it meant something.
  if (!estimate.share.reliable) estimate.share.standard_error = std::nan("");
  if (!estimate.aas.reliable) estimate.aas.standard_error = std::nan("");
  return estimate;
}

void set_composition(MatrixCell& cell, const std::vector<const model::Run*>& runs) {
  std::vector<SampledRun> sampled;
  std::vector<RunTotals> totals;
  std::vector<double> aas_totals;
  for (const auto* run : runs) {
    auto profile = model::window_profile(*run, model::steady_window(*run));
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
      composition(sampled, totals, [](const model::WaitKey& key) { return key.wait_event_type; });
  std::stable_sort(cell.classes.begin(), cell.classes.end(),
                   [](const WaitShare& a, const WaitShare& b) {
                     return text_format::wait_class_before(a.name, b.name);
                   });
  cell.events = composition(sampled, totals,
                            [](const model::WaitKey& key) { return model::display_name(key); });
  std::stable_sort(cell.events.begin(), cell.events.end(),
                   [](const WaitShare& a, const WaitShare& b) { return a.share > b.share; });
}

std::vector<std::string> table_wait_classes(const MatrixTable& table) {
  std::vector<std::string> classes;
  for (const auto& cell : table.cells) {
    for (const auto& share : cell.classes) {
      if (std::find(classes.begin(), classes.end(), share.name) == classes.end()) {
        classes.push_back(share.name);
      }
    }
  }
  std::sort(classes.begin(), classes.end(), text_format::wait_class_before);
  return classes;
}

std::string composition_title() { return "wait profile by clients (share of non-idle samples, %)"; }

std::string composition_note() {
  return "± is the standard error of the mean over repeats, or of one run's batch means (none "
         "when too short)";
}

std::vector<CompositionRow> composition_rows(const MatrixTable& table, const std::string& variant,
                                             const std::string& separator) {
  using Kind = CompositionRow::Kind;
  // A share of a part the cell never sampled is a measured 0, not a missing value.
  auto cells = [&](const std::function<const WaitShare*(const MatrixCell&)>& find) {
    return row_cells(table, variant, [&](const MatrixCell* cell) -> std::string {
      if (cell == nullptr || cell->profile_runs == 0) return "";
      const WaitShare* share = find(*cell);
      return share != nullptr ? percent_with_error(*share, separator) : "0";
    });
  };
  std::vector<CompositionRow> rows;
  rows.push_back({Kind::kTotal, "AAS (non-idle)", "",
                  row_cells(table, variant, [](const MatrixCell* cell) -> std::string {
                    if (cell == nullptr || cell->profile_runs == 0) return "";
                    return fmt::format("{:.2f}", cell->aas_total);
                  })});
  for (const auto& wait_class : table_wait_classes(table)) {
    auto row_values = cells([&](const MatrixCell& cell) { return cell.find_class(wait_class); });
    if (std::all_of(row_values.begin(), row_values.end(),
                    [](const std::string& text) { return text.empty() || text == "0"; })) {
      continue;  // a class only other variants have
    }
    rows.push_back({Kind::kClass, wait_class, wait_class, std::move(row_values)});
  }
  const auto events = shown_events(table, variant);
  if (events.empty()) return rows;
  rows.push_back(
      {Kind::kHeading, "top wait events", "", std::vector<std::string>(table.clients.size())});
  for (const auto& [name, wait_class] : events) {
    rows.push_back({Kind::kEvent, name, wait_class,
                    cells([&](const MatrixCell& cell) { return cell.find_event(name); })});
  }
  return rows;
}

}  // namespace pgwaitprof::exporters::matrix_detail
