// The rows of each variant's wait-profile tables: the cells' share per wait class and per top
// wait event with its error (aggregated in model/matrix_aggregate.cc), the top CPU functions,
// and for traced runs the top wait events' p99 duration and waits a second
// (model/matrix_durations.h); and their titles.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "exporters/render/matrix_detail.h"
#include "exporters/render/matrix_table.h"
#include "exporters/render/report_traced.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters::matrix_detail {

namespace {

// A share with its error; without one when it could not be estimated (a single short run).
std::string percent_with_error(const WaitShare& share, const std::string& separator) {
  if (!std::isfinite(share.share_error)) return fmt::format("{:.1f}", 100 * share.share);
  return fmt::format("{:.1f}{}{:.1f}", 100 * share.share, separator, 100 * share.share_error);
}

// The kShownEvents events of `largest` (name -> its largest figure and its wait class) with the
// largest figures, each with its wait class.
std::vector<std::pair<std::string, std::string>> ranked_events(
    const std::map<std::string, std::pair<double, std::string>>& largest) {
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
  return ranked_events(largest);
}

// The functions shown for a variant (--cpu-profile): each cell's largest few, ranked by their
// largest share.
std::vector<std::string> shown_functions(const MatrixTable& table, const std::string& variant) {
  std::map<std::string, double> largest;
  for (const int clients : table.clients) {
    const MatrixCell* cell = table.find(variant, clients);
    if (cell == nullptr) continue;
    for (size_t index = 0; index < std::min(kTopEventsPerCell, cell->functions.size()); ++index) {
      auto& share = largest[cell->functions[index].name];
      share = std::max(share, cell->functions[index].share);
    }
  }
  std::vector<std::pair<std::string, double>> ranked(largest.begin(), largest.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> names;
  for (const auto& [name, share] : ranked) {
    if (names.size() == kShownEvents) break;
    names.push_back(name);
  }
  return names;
}

// The traced events shown for a variant: each cell's few with the most time, ranked by their
// largest time.
std::vector<std::pair<std::string, std::string>> shown_durations(const MatrixTable& table,
                                                                 const std::string& variant) {
  std::map<std::string, std::pair<double, std::string>> largest;  // AAS, wait class
  for (const int clients : table.clients) {
    const MatrixCell* cell = table.find(variant, clients);
    if (cell == nullptr) continue;
    const auto& events = cell->durations.events;
    for (size_t index = 0; index < std::min(kTopEventsPerCell, events.size()); ++index) {
      auto& entry = largest[events[index].name];
      entry.first = std::max(entry.first, events[index].aas);
      entry.second = events[index].wait_class;
    }
  }
  return ranked_events(largest);
}

// "4.10ms ±210us"; "-" where the cell's traced runs had no such wait.
std::string p99_cell(const model::WaitDurations* event, const std::string& separator) {
  if (event == nullptr) return "-";
  std::string text = report_detail::duration_text(event->p99_s);
  if (std::isfinite(event->p99_error)) {
    text +=
        separator + (event->p99_error > 0 ? report_detail::duration_text(event->p99_error) : "0");
  }
  return text;
}

std::string rate_cell(const model::WaitDurations* event, const std::string& separator) {
  if (event == nullptr) return "0";
  std::string text = text_format::format_tps(event->waits_per_s);
  if (std::isfinite(event->waits_per_s_error)) {
    text += separator + text_format::format_tps(event->waits_per_s_error);
  }
  return text;
}

// The traced rows: a heading and one row per shown event, for the p99 and for the rate.
void add_duration_rows(const MatrixTable& table, const std::string& variant,
                       const std::string& separator, std::vector<CompositionRow>& rows) {
  using Kind = CompositionRow::Kind;
  const auto events = shown_durations(table, variant);
  if (events.empty()) return;
  using Cell = std::string (*)(const model::WaitDurations*, const std::string&);
  for (const auto& [heading, format] :
       {std::pair<const char*, Cell>{"p99 of the blocking waits (traced)", &p99_cell},
        std::pair<const char*, Cell>{"blocking waits a second (traced)", &rate_cell}}) {
    rows.push_back({Kind::kHeading, heading, "", std::vector<std::string>(table.clients.size())});
    for (const auto& [name, wait_class] : events) {
      rows.push_back({Kind::kEvent, name, wait_class,
                      row_cells(table, variant, [&](const MatrixCell* cell) -> std::string {
                        if (cell == nullptr || cell->durations.traced_runs == 0) return "";
                        return format(cell->durations.find(name), separator);
                      })});
    }
  }
}

}  // namespace

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

std::string composition_note(const MatrixTable& table) {
  std::string note =
      "± is the standard error of the mean over repeats, or of one run's batch means (none "
      "when too short)";
  const bool traced = std::any_of(table.cells.begin(), table.cells.end(),
                                  [](const auto& cell) { return cell.durations.traced_runs > 0; });
  if (traced) {
    note +=
        "; traced cells: a wait is a blocking one (ended by a wake-up), counted exactly, its "
        "p99 from log-linear buckets (4 per power of two); with repeats the mean of the runs' "
        "p99 and waits a second ± the standard error between them (none for one run)";
  }
  return note;
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
  if (!events.empty()) {
    rows.push_back(
        {Kind::kHeading, "top wait events", "", std::vector<std::string>(table.clients.size())});
  }
  for (const auto& [name, wait_class] : events) {
    rows.push_back({Kind::kEvent, name, wait_class,
                    cells([&](const MatrixCell& cell) { return cell.find_event(name); })});
  }
  const auto functions = shown_functions(table, variant);
  if (!functions.empty()) {
    rows.push_back({Kind::kHeading,
                    "top CPU functions (self, % of the client backends' on-CPU "
                    "samples; --cpu-profile)",
                    "", std::vector<std::string>(table.clients.size())});
  }
  for (const auto& name : functions) {
    rows.push_back({Kind::kEvent, name, model::kCpu,
                    row_cells(table, variant, [&](const MatrixCell* cell) -> std::string {
                      if (cell == nullptr || cell->functions.empty()) return "";
                      const WaitShare* share = cell->find_function(name);
                      return share != nullptr ? percent_with_error(*share, separator) : "0";
                    })});
  }
  add_duration_rows(table, variant, separator, rows);
  return rows;
}

}  // namespace pgwaitprof::exporters::matrix_detail
