// The run summary's profile tables: the window's samples grouped as the options say, sorted
// and cut to top-N with an "other" row, with batch-means errors from one pass over the window's
// intervals, the traced parts and the kernel's split of the CPU row; the wait-event table beside.
#include "model/profile_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "model/wait_events.h"

namespace pgwaitprof::model {

namespace {

struct GroupSpec {
  std::string dimension;  // singular: "wait event"
  std::string plural;     // "wait events"
  std::vector<std::string> columns;
};

// At most `length` characters, "..." marking a cut.
std::string shorten(const std::string& text, size_t length) {
  return text.size() <= length ? text : text.substr(0, length - 3) + "...";
}

GroupSpec group_spec(GroupBy by, bool full_keys) {
  switch (by) {
    case GroupBy::kBackendType:
      return {"backend type", "backend types", {"backend_type"}};
    case GroupBy::kState:
      return {"state", "states", {"state"}};
    case GroupBy::kWaitEventType:
      return {"wait class", "wait classes", {"wait_event_type"}};
    case GroupBy::kQueryId:
      return {"query id", "query ids", {"query_id"}};
    case GroupBy::kWaitEvent:
      break;
  }
  if (full_keys) {
    return {
        "wait event", "wait events", {"backend_type", "state", "wait_event_type", "wait_event"}};
  }
  return {"wait event", "wait events", {"wait_event_type", "wait_event"}};
}

// The grouping columns of one wait key. CPU keeps its two columns ("CPU", "CPU") so that
// profile.csv stays rectangular; only the label collapses it.
std::vector<std::string> group_fields(const WaitKey& key, GroupBy by, bool full_keys) {
  switch (by) {
    case GroupBy::kBackendType:
      return {key.backend_type};
    case GroupBy::kState:
      return {key.state};
    case GroupBy::kWaitEventType:
      return {key.wait_event_type};
    case GroupBy::kQueryId:
    case GroupBy::kWaitEvent:
      break;
  }
  if (full_keys) return {key.backend_type, key.state, key.wait_event_type, key.wait_event};
  return {key.wait_event_type, key.wait_event};
}

std::string group_label(const WaitKey& key, GroupBy by) {
  switch (by) {
    case GroupBy::kBackendType:
      return key.backend_type;
    case GroupBy::kState:
      return key.state;
    case GroupBy::kWaitEventType:
      return key.wait_event_type;
    case GroupBy::kQueryId:
    case GroupBy::kWaitEvent:
      break;
  }
  return display_name(key);
}

struct Group {
  std::string label;
  std::string wait_class;
  uint64_t count = 0;
};
using Groups = std::map<std::vector<std::string>, Group>;

// One row per group, ascending by count (the hackers' order: the big ones at the bottom, next
// to the total).
std::vector<ProfileRow> sorted_rows(const Groups& groups, uint64_t total, uint64_t snapshots) {
  std::vector<ProfileRow> rows;
  for (const auto& [fields, group] : groups) {
    ProfileRow row;
    row.fields = fields;
    row.label = group.label;
    row.wait_class = group.wait_class;
    row.stat = make_stat({}, group.count, total, snapshots);
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ProfileRow& a, const ProfileRow& b) {
    return a.stat.count < b.stat.count;
  });
  return rows;
}

// Keeps the `top` largest of `rows` (ascending) and sums the rest into one "other" row placed
// first. True when it made one.
bool fold_other(std::vector<ProfileRow>& rows, int top, const ProfileTable& table) {
  if (top <= 0 || rows.size() <= static_cast<size_t>(top)) return false;
  const size_t dropped = rows.size() - static_cast<size_t>(top);
  uint64_t other_count = 0;
  for (size_t index = 0; index < dropped; ++index) other_count += rows[index].stat.count;
  ProfileRow other;
  other.fields.assign(table.columns.size(), "");
  other.fields.back() = "other";
  other.label = fmt::format("other ({} {})", dropped,
                            dropped == 1 ? table.dimension : table.dimension_plural);
  other.other = true;
  other.other_rows = dropped;
  other.stat = make_stat({}, other_count, table.total, table.snapshots);
  rows.erase(rows.begin(), rows.begin() + static_cast<long>(dropped));
  rows.insert(rows.begin(), std::move(other));
  return true;
}

// Standard errors of `rows` from batch means over the window's intervals: a row's series is the
// per-interval count of the keys it groups ("other": of every key no other row groups). One
// pass over the intervals fills every row's series; only the rows `wanted` picks are estimated.
void estimate_errors(const Run& run, const SteadyWindow& window, const SummaryOptions& options,
                     std::vector<ProfileRow>& rows,
                     const std::function<bool(const ProfileRow&)>& wanted) {
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  std::map<std::vector<std::string>, size_t> row_of;
  size_t other = kNone;
  for (size_t index = 0; index < rows.size(); ++index) {
    if (rows[index].other) {
      other = index;
    } else {
      row_of.emplace(rows[index].fields, index);
    }
  }
  std::map<WaitKey, size_t> target;  // each key's row, looked up once
  auto row_for = [&](const WaitKey& key) {
    auto found = target.find(key);
    if (found != target.end()) return found->second;
    const auto row = row_of.find(group_fields(key, options.by, options.full_keys));
    return target.emplace(key, row == row_of.end() ? other : row->second).first->second;
  };
  std::vector<std::vector<IntervalCounts>> series(rows.size());
  for (size_t index = window.first_interval; index < run.timeline.size(); ++index) {
    const auto& profile = run.timeline[index].profile;
    // An interval without a snapshot (the sampler was disconnected) says nothing.
    if (profile.snapshots() == 0) continue;
    std::vector<IntervalCounts> counts(rows.size(), IntervalCounts{0, profile.snapshots(), 0});
    uint64_t samples = 0;
    for (const auto& [key, count] : profile.counts()) {
      if (!options.include_idle && is_idle(key)) continue;
      samples += count;
      if (const size_t row = row_for(key); row != kNone) counts[row].count += count;
    }
    for (size_t row = 0; row < rows.size(); ++row) {
      counts[row].samples = samples;
      series[row].push_back(counts[row]);
    }
  }
  const auto batches = batch_options(run);
  for (size_t index = 0; index < rows.size(); ++index) {
    auto& row = rows[index];
    if (!wanted(row)) continue;
    const auto estimate = estimate_wait_key(series[index], batches);
    row.stat.share_stderr = estimate.share.standard_error;
    row.stat.aas_stderr = estimate.aas.standard_error;
    row.stat.errors_reliable = estimate.share.reliable && estimate.aas.reliable;
  }
}

ProfileTable empty_table(const SummaryOptions& options) {
  const GroupSpec spec = group_spec(options.by, options.full_keys);
  ProfileTable table;
  table.dimension = spec.dimension;
  table.dimension_plural = spec.plural;
  table.columns = spec.columns;
  return table;
}

// Query ids are kept for non-idle client samples only; the shares are of those samples.
ProfileTable query_id_table(const Run& run, const SummaryOptions& options) {
  ProfileTable table = empty_table(options);
  table.snapshots = run.profile.snapshots();
  std::map<int64_t, const std::string*> texts;
  for (const auto& statement : run.statements) texts[statement.query_id] = &statement.text;
  Groups groups;
  for (const auto& [query_id, count] : run.query_ids) {
    const std::string id = fmt::format("{}", query_id);
    const auto text = texts.find(query_id);
    const std::string label = text == texts.end() || text->second->empty()
                                  ? id
                                  : fmt::format("{}  {}", id, shorten(*text->second, 80));
    groups[{id}] = Group{label, "", count};
    table.total += count;
  }
  const uint64_t non_idle = run.profile.total(false);
  table.note = fmt::format("shares are of the {} samples with a query id", table.total);
  if (non_idle > table.total) {
    table.note += fmt::format(
        "; {} other non-idle samples had none: background processes, utility statements, "
        "or compute_query_id off",
        non_idle - table.total);
  }
  table.rows = sorted_rows(groups, table.total, table.snapshots);
  fold_other(table.rows, options.top, table);
  return table;
}

// The traced parts of each row (traced source only), grouped as the rows are.
void attach_traced(const Profile& profile, const SummaryOptions& options,
                   std::vector<ProfileRow>& rows) {
  if (!profile.exact()) return;
  std::map<std::vector<std::string>, TracedTime> grouped;
  for (const auto& [key, traced] : profile.traced()) {
    if (!options.include_idle && is_idle(key)) continue;
    grouped[group_fields(key, options.by, options.full_keys)].merge(traced);
  }
  for (auto& row : rows) {
    if (const auto found = grouped.find(row.fields); found != grouped.end()) {
      row.traced = found->second;
    }
  }
}

// The window's profile grouped as the options say, every row, no errors yet; idle sessions
// apart unless they are counted.
ProfileTable grouped_table(const Profile& profile, const SteadyWindow& window,
                           const SummaryOptions& options) {
  ProfileTable table = empty_table(options);
  table.window = window;
  table.snapshots = profile.snapshots();
  table.total = profile.total(options.include_idle);
  Groups groups;
  std::map<WaitKey, uint64_t> idle;
  for (const auto& [key, count] : profile.counts()) {
    if (!options.include_idle && is_idle(key)) {
      idle[key] += count;
      table.idle_total += count;
      continue;
    }
    auto& group = groups[group_fields(key, options.by, options.full_keys)];
    group.label = group_label(key, options.by);
    if (options.by == GroupBy::kWaitEvent || options.by == GroupBy::kWaitEventType) {
      group.wait_class = key.wait_event_type;
    }
    group.count += count;
  }
  table.rows = sorted_rows(groups, table.total, table.snapshots);
  attach_traced(profile, options, table.rows);
  for (const auto& [key, count] : idle) {
    ProfileRow row;
    row.fields = {key.backend_type, key.state, key.wait_event_type, key.wait_event};
    if (const auto traced = profile.traced().find(key); traced != profile.traced().end()) {
      row.traced = traced->second;
    }
    row.label = fmt::format("{} ({})", display_name(key), key.backend_type);
    row.wait_class = key.wait_event_type;
    // Shares of idle sessions would be of nothing; AAS says how many sessions sat idle.
    row.stat = make_stat(key, count, 0, table.snapshots);
    table.idle.push_back(std::move(row));
  }
  std::stable_sort(
      table.idle.begin(), table.idle.end(),
      [](const ProfileRow& a, const ProfileRow& b) { return a.stat.count < b.stat.count; });
  return table;
}

// The server processes' kernel times over the window, beside the CPU row.
std::optional<CpuSplit> cpu_split(const Run& run, const SteadyWindow& window,
                                  const ProfileRow& row) {
  if (row.other || row.label != kCpu || row.stat.aas <= 0) return std::nullopt;
  CpuSplit split;
  for (const char* group : {kClientBackends, kBackgroundProcesses}) {
    KernelTime time;
    for (size_t index = window.first_interval; index < run.timeline.size(); ++index) {
      if (const auto found = run.timeline[index].kernel.find(group);
          found != run.timeline[index].kernel.end()) {
        time.add(found->second);
      }
    }
    split.on_cpu_aas += time.on_cpu_aas();
    split.runqueue_aas += time.runqueue_aas();
  }
  if (split.on_cpu_aas + split.runqueue_aas <= 0) return std::nullopt;
  const double share_per_aas = row.stat.share / row.stat.aas;
  split.on_cpu_share = split.on_cpu_aas * share_per_aas;
  split.runqueue_share = split.runqueue_aas * share_per_aas;
  return split;
}

// The wait-event tables: every wait event, and the top-N profile made of it (only its "other"
// row is estimated anew).
void wait_event_tables(const Run& run, const Profile& profile, const SteadyWindow& window,
                       const SummaryOptions& options, ProfileTables& tables) {
  SummaryOptions every = options;
  every.by = GroupBy::kWaitEvent;
  every.full_keys = false;
  tables.waits = grouped_table(profile, window, every);
  estimate_errors(run, window, every, tables.waits.rows, [](const ProfileRow&) { return true; });
  for (auto& row : tables.waits.rows) row.cpu_split = cpu_split(run, window, row);
  if (options.by != GroupBy::kWaitEvent || options.full_keys) return;
  tables.profile = tables.waits;
  if (fold_other(tables.profile.rows, options.top, tables.profile)) {
    estimate_errors(run, window, every, tables.profile.rows,
                    [](const ProfileRow& row) { return row.other; });
  }
}

}  // namespace

double ProfileTable::total_aas() const {
  return snapshots > 0 ? static_cast<double>(total) / static_cast<double>(snapshots) : 0;
}

double ProfileTable::idle_aas() const {
  return snapshots > 0 ? static_cast<double>(idle_total) / static_cast<double>(snapshots) : 0;
}

ProfileTables profile_tables(const Run& run, const SteadyWindow& window,
                             const SummaryOptions& options) {
  ProfileTables tables;
  const Profile profile = window_profile(run, window);
  if (!options.full_keys) wait_event_tables(run, profile, window, options, tables);
  if (options.by == GroupBy::kQueryId) {
    tables.profile = query_id_table(run, options);
  } else if (options.by != GroupBy::kWaitEvent || options.full_keys) {
    tables.profile = grouped_table(profile, window, options);
    fold_other(tables.profile.rows, options.top, tables.profile);
    estimate_errors(run, window, options, tables.profile.rows,
                    [](const ProfileRow&) { return true; });
    for (auto& row : tables.profile.rows) row.cpu_split = cpu_split(run, window, row);
  }
  return tables;
}

}  // namespace pgwaitprof::model
