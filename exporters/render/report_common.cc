// The shared arithmetic of the report renderers: grouping of the profile, top-N, timeline rows,
// and the formatting of the run's header facts.
#include "exporters/render/report_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "model/kernel_check.h"
#include "model/setting_units.h"
#include "model/wait_events.h"

namespace pgwaitprof::exporters::report_detail {

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
std::vector<std::string> group_fields(const model::WaitKey& key, GroupBy by, bool full_keys) {
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

std::string group_label(const model::WaitKey& key, GroupBy by) {
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
  return model::display_name(key);
}

struct Group {
  std::string label;
  std::string wait_class;
  uint64_t count = 0;
};

// Sorts ascending (the hackers' order: the big ones at the bottom, next to the total), keeps
// the `top` largest and sums the rest into one "other" row placed first.
std::vector<ProfileRow> top_rows(const std::map<std::vector<std::string>, Group>& groups, int top,
                                 const GroupSpec& spec, uint64_t total, uint64_t snapshots) {
  const std::string& singular = spec.dimension;
  const std::string& plural = spec.plural;
  const size_t column_count = spec.columns.size();
  std::vector<ProfileRow> rows;
  for (const auto& [fields, group] : groups) {
    ProfileRow row;
    row.fields = fields;
    row.label = group.label;
    row.wait_class = group.wait_class;
    row.stat = model::make_stat({}, group.count, total, snapshots);
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ProfileRow& a, const ProfileRow& b) {
    return a.stat.count < b.stat.count;
  });
  if (top <= 0 || rows.size() <= static_cast<size_t>(top)) return rows;

  const size_t dropped = rows.size() - static_cast<size_t>(top);
  uint64_t other_count = 0;
  for (size_t index = 0; index < dropped; ++index) other_count += rows[index].stat.count;
  ProfileRow other;
  other.fields.assign(column_count, "");
  other.fields.back() = "other";
  other.label = fmt::format("other ({} {})", dropped, dropped == 1 ? singular : plural);
  other.other = true;
  other.other_rows = dropped;
  other.stat = model::make_stat({}, other_count, total, snapshots);
  std::vector<ProfileRow> kept;
  kept.push_back(std::move(other));
  kept.insert(kept.end(), std::make_move_iterator(rows.begin() + static_cast<long>(dropped)),
              std::make_move_iterator(rows.end()));
  return kept;
}

// Standard errors of every row from batch means over the window's intervals: a row's series is
// the per-interval count of the keys it groups ("other": of every group it stands for).
void estimate_errors(const model::Run& run, const model::SteadyWindow& window,
                     const RenderOptions& options, bool full_keys, std::vector<ProfileRow>& rows) {
  std::set<std::vector<std::string>> shown;
  for (const auto& row : rows) {
    if (!row.other) shown.insert(row.fields);
  }
  for (auto& row : rows) {
    const auto estimate =
        model::estimate_keys(run, window, options.include_idle, [&](const model::WaitKey& key) {
          const auto fields = group_fields(key, options.by, full_keys);
          return row.other ? !shown.contains(fields) : fields == row.fields;
        });
    row.stat.share_stderr = estimate.share.standard_error;
    row.stat.aas_stderr = estimate.aas.standard_error;
    row.stat.errors_reliable = estimate.share.reliable && estimate.aas.reliable;
  }
}

}  // namespace

ProfileTable profile_table(const model::Run& run, const RenderOptions& options, bool full_keys) {
  const GroupSpec spec = group_spec(options.by, full_keys);
  ProfileTable table;
  table.dimension = spec.dimension;
  table.dimension_plural = spec.plural;
  table.columns = spec.columns;
  table.snapshots = run.profile.snapshots();

  if (options.by == GroupBy::kQueryId) {
    // Query ids are kept for non-idle client samples only; the shares are of those samples.
    std::map<int64_t, const std::string*> texts;
    for (const auto& statement : run.statements) texts[statement.query_id] = &statement.text;
    std::map<std::vector<std::string>, Group> groups;
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
    table.rows = top_rows(groups, options.top, spec, table.total, table.snapshots);
    return table;
  }

  table.window = model::steady_window(run, options.trim);
  const model::Profile profile = model::window_profile(run, table.window);
  table.snapshots = profile.snapshots();
  std::map<std::vector<std::string>, Group> groups;
  std::map<model::WaitKey, uint64_t> idle;
  table.total = profile.total(options.include_idle);
  for (const auto& [key, count] : profile.counts()) {
    if (!options.include_idle && model::is_idle(key)) {
      idle[key] += count;
      table.idle_total += count;
      continue;
    }
    auto& group = groups[group_fields(key, options.by, full_keys)];
    group.label = group_label(key, options.by);
    if (options.by == GroupBy::kWaitEvent || options.by == GroupBy::kWaitEventType) {
      group.wait_class = key.wait_event_type;
    }
    group.count += count;
  }
  table.rows = top_rows(groups, options.top, spec, table.total, table.snapshots);
  estimate_errors(run, table.window, options, full_keys, table.rows);

  for (const auto& [key, count] : idle) {
    ProfileRow row;
    row.fields = {key.backend_type, key.state, key.wait_event_type, key.wait_event};
    row.label = fmt::format("{} ({})", model::display_name(key), key.backend_type);
    row.wait_class = key.wait_event_type;
    // Shares of idle sessions would be of nothing; AAS says how many sessions sat idle.
    row.stat = model::make_stat(key, count, 0, table.snapshots);
    table.idle.push_back(std::move(row));
  }
  std::stable_sort(
      table.idle.begin(), table.idle.end(),
      [](const ProfileRow& a, const ProfileRow& b) { return a.stat.count < b.stat.count; });
  return table;
}

std::vector<TimelineRow> timeline_rows(const model::Run& run) {
  std::vector<TimelineRow> rows;
  for (const auto& slice : run.timeline) {
    TimelineRow row;
    row.start_s = slice.start.count();
    row.duration_s = slice.duration.count();
    row.snapshots = slice.profile.snapshots();
    row.loadgen = slice.loadgen ? &*slice.loadgen : nullptr;
    row.cpu = slice.cpu ? &*slice.cpu : nullptr;
    row.latency = slice.latency ? &*slice.latency : nullptr;
    if (const auto kernel = slice.kernel.find(model::kClientBackends);
        kernel != slice.kernel.end() && kernel->second.covered_s > 0) {
      row.oncpu_aas = kernel->second.on_cpu_aas();
      row.runq_aas = kernel->second.runqueue_aas();
    }
    row.background = slice.background.flags();
    if (slice.checkpoint_after) row.background += row.background.empty() ? "CKPT" : " CKPT";
    row.sampler_outage = slice.sampler_outage;
    // Beside the load generator's own tps only: otherwise the tps is the server's already.
    if (run.throughput_source != "server") {
      row.server_tps = slice.server_tps;
      row.server_tps_spread = slice.server_tps_spread;
    }
    const auto snapshots = static_cast<double>(row.snapshots);
    for (const auto& [wait_class, count] : slice.profile.by_wait_class()) {
      const double aas = snapshots > 0 ? static_cast<double>(count) / snapshots : 0;
      const auto* column =
          std::find(kTimelineClasses.begin(), kTimelineClasses.end() - 1, wait_class);
      row.aas[static_cast<size_t>(column - kTimelineClasses.begin())] += aas;
      row.aas_by_type.emplace_back(wait_class, aas);
      row.aas_total += aas;
    }
    // The dominant wait merges states, as the hackers' table does.
    std::map<std::string, uint64_t> by_name;
    for (const auto& [key, count] : slice.profile.counts()) {
      if (!model::is_idle(key)) by_name[model::display_name(key)] += count;
    }
    uint64_t best = 0;
    for (const auto& [name, count] : by_name) {
      if (count > best) {
        best = count;
        row.dominant_wait = name;
      }
    }
    for (const auto& stall : run.stalls) {
      // Half an interval of tolerance: stall bounds are sums of doubles.
      if (slice.start + slice.duration / 2 > stall.start &&
          slice.start + slice.duration / 2 < stall.start + stall.duration) {
        row.stalled = true;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
    });
    if (plain) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg) {
      if (c == '\'') {
        line += "'\\''";
      } else {
        line += c;
      }
    }
    line += '\'';
  }
  return line;
}

std::string setting_show_value(const model::Setting& setting) {
  return model::show_setting_value(setting.value, setting.unit);
}

std::string setting_line(const model::Setting& setting) {
  std::string line = setting.name + " = " + (setting.value.empty() ? "''" : setting.value);
  if (!setting.unit.empty()) line += " " + setting.unit;
  if (const auto shown = setting_show_value(setting); !shown.empty()) line += " = " + shown;
  if (!setting.source.empty()) line += " (" + setting.source + ")";
  return line;
}

std::string format_bytes(uint64_t bytes) {
  static constexpr std::array<const char*, 5> units = {"B", "KiB", "MiB", "GiB", "TiB"};
  auto value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < units.size()) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

std::string format_seconds(double seconds) {
  if (std::fabs(seconds - std::round(seconds)) < 1e-9) return fmt::format("{:.0f}", seconds);
  return fmt::format("{}", seconds);
}

std::string format_optional(double value, int decimals) {
  if (!std::isfinite(value)) return "";
  return fmt::format("{:.{}f}", value, decimals);
}

std::string error_text(double standard_error, bool reliable, int decimals) {
  if (!reliable || !std::isfinite(standard_error)) return "-";
  return fmt::format("{:.{}f}", standard_error, decimals);
}

double drawn_error(double standard_error, bool reliable) {
  return reliable && std::isfinite(standard_error) ? standard_error : 0;
}

std::string server_tps_cell(const TimelineRow& row) {
  if (!row.server_tps || !std::isfinite(*row.server_tps)) return "-";
  return fmt::format("{}{:.1f}", row.server_tps_spread ? "~" : "", *row.server_tps);
}

std::string tps_headline_text(const model::Run& run, const model::SteadyWindow& window) {
  const auto figures = model::tps_figures(run, window);
  std::string text;
  if (figures.whole_run) {
    text = fmt::format("{:.1f} ({}, whole run)", *figures.whole_run, figures.whole_run_from);
  }
  const bool trimmed = window.excluded > base::Seconds(0);
  if (const auto& steady = figures.steady) {
    const bool interval = steady->reliable && std::isfinite(steady->standard_error);
    // Untrimmed and without an interval, the intervals' mean would only repeat the whole run.
    if (trimmed || interval || !figures.whole_run) {
      if (!text.empty()) text += "; ";
      text += fmt::format("{} {:.1f}", trimmed ? "steady state" : "interval mean", steady->mean);
      if (interval) text += fmt::format(" ± {:.1f}", steady->half_width(0.95));
      if (trimmed) {
        text += fmt::format(" over {:.0f}-{:.0f} s", figures.steady_from.count(),
                            figures.steady_to.count());
      }
      text += interval ? fmt::format(" (95 % CI, {})", steady->method)
                       : std::string(" (no CI: too few independent batches)");
    }
  }
  if (text.empty()) return "";
  if (const auto excluded = window.description(); !excluded.empty()) text += "; " + excluded;
  return text;
}

std::string row_meaning(const model::Run& run, const ProfileRow& row) {
  if (row.other || row.fields.size() < 2) return "";
  const auto& type = row.fields[row.fields.size() - 2];
  const auto& name = row.fields.back();
  return model::wait_event_meaning(type, name, run.environment.server_version_num,
                                   run.environment.wait_event_descriptions);
}

std::vector<std::pair<std::string, std::string>> row_meanings(const model::Run& run,
                                                              const ProfileTable& table) {
  std::vector<std::pair<std::string, std::string>> meanings;
  for (auto row = table.rows.rbegin(); row != table.rows.rend(); ++row) {
    if (auto meaning = row_meaning(run, *row); !meaning.empty()) {
      meanings.emplace_back(row->label, std::move(meaning));
    }
  }
  return meanings;
}

std::string latency_percentiles_text(const model::Run& run) {
  if (!run.latency || !std::isfinite(run.latency->p50_ms)) return "";
  const auto& latency = *run.latency;
  std::string text =
      fmt::format("p50 {:.3f}, p95 {:.3f}, p99 {:.3f}, max {:.3f} ms ({} transactions",
                  latency.p50_ms, latency.p95_ms, latency.p99_ms, latency.max_ms, latency.count);
  if (run.latency_sampling_rate < 1) {
    text += fmt::format(", pgbench --sampling-rate {:g}", run.latency_sampling_rate);
  }
  return text + " from pgbench's transaction log)";
}

std::string status_banner(const model::Run& run) {
  if (run.status == model::RunStatus::kCompleted) return "";
  std::string banner(to_string(run.status));
  for (auto& c : banner) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!run.error.empty()) banner += ": " + run.error;
  return banner;
}

std::string sampler_line(const model::SamplerInfo& sampler) {
  std::string line(to_string(sampler.source));
  if (sampler.requested == model::SamplerSource::kAuto && !sampler.source_reason.empty()) {
    line += " (auto: " + sampler.source_reason + ")";
  }
  if (sampler.source == model::SamplerSource::kPgWaitSampling) {
    // pgwaitprof's rate does not apply: the extension samples at its own period.
    if (sampler.period > base::Seconds(0)) {
      const double period_s = sampler.period.count();
      line += fmt::format(" (its own period {:g} ms = {:g} Hz)", period_s * 1000, 1 / period_s);
    }
    line += fmt::format(", {:.1f} periods read per second", sampler.achieved_hz);
  } else {
    line +=
        fmt::format(", {:g} Hz configured, {:.1f} Hz achieved", sampler.hz, sampler.achieved_hz);
    if (sampler.hz > 0) line += fmt::format(" ({:.1f}%)", 100 * sampler.achieved_hz / sampler.hz);
  }
  line += fmt::format(", {} snapshots, {} missed ticks", sampler.snapshots, sampler.missed_ticks);
  if (sampler.snapshot_p99_ms > 0) {
    line += fmt::format(", snapshot p99 {:.2f} ms", sampler.snapshot_p99_ms);
  }
  if (sampler.hidden_backends > 0) {
    line += fmt::format(", {} hidden backends", sampler.hidden_backends);
  }
  return line;
}

std::string kernel_check_line(const model::Run& run) {
  if (!model::takes_snapshots(run.sampler.source)) return "";
  const auto check = model::kernel_check(run);
  if (!check) {
    return run.sampler.source == model::SamplerSource::kActivity
               ? "none (no kernel view of a server on another host): the CPU share is a lower "
                 "bound"
               : "";
  }
  return fmt::format(
      "sampled CPU of client backends {:.2f} AAS against the kernel's {:.2f} on a CPU and {:.2f} "
      "waiting for one (schedstat): {} {:.2f} to {:.2f}",
      check->sampled_cpu_aas, check->on_cpu_aas, check->runqueue_aas,
      !check->judged()  ? "too few intervals to judge, expected"
      : check->within() ? "within"
                        : "OUTSIDE",
      check->lowest(), check->highest());
}

ThroughputColumns throughput_columns(const model::Run& run) {
  ThroughputColumns columns;
  for (const auto& slice : run.timeline) {
    if (slice.server_tps && run.throughput_source != "server") columns.server_tps = true;
    if (slice.loadgen && slice.loadgen->qps) columns.qps = true;
    if (slice.loadgen && slice.loadgen->latency_percentile_ms) {
      columns.percentile = fmt::format("p{:g} ms", slice.loadgen->latency_percentile);
    }
  }
  return columns;
}

std::vector<std::string> loadgen_summary_lines(const model::LoadgenSummary& summary) {
  std::vector<std::string> lines;
  if (!summary.transaction_type.empty()) {
    lines.push_back("transaction type: " + summary.transaction_type);
  }
  if (summary.scale > 0) lines.push_back(fmt::format("scaling factor: {:g}", summary.scale));
  if (!summary.query_mode.empty()) lines.push_back("query mode: " + summary.query_mode);
  // A summary made of the server's counters knows no clients.
  if (summary.clients > 0 || summary.threads > 0) {
    lines.push_back(fmt::format("number of clients: {}", summary.clients));
    lines.push_back(fmt::format("number of threads: {}", summary.threads));
  }
  if (summary.duration_s) lines.push_back(fmt::format("duration: {:g} s", *summary.duration_s));
  lines.push_back(
      fmt::format("number of transactions actually processed: {}", summary.transactions));
  const uint64_t attempted = summary.transactions + summary.failed;
  lines.push_back(fmt::format(
      "number of failed transactions: {} ({:.3f}%)", summary.failed,
      attempted > 0 ? 100.0 * static_cast<double>(summary.failed) / static_cast<double>(attempted)
                    : 0.0));
  if (std::isfinite(summary.latency_avg_ms)) {
    lines.push_back(fmt::format("latency average = {:.3f} ms", summary.latency_avg_ms));
  }
  if (summary.latency_percentile_ms) {
    lines.push_back(fmt::format("latency {:g}th percentile = {:.3f} ms", summary.latency_percentile,
                                *summary.latency_percentile_ms));
  }
  if (summary.qps) lines.push_back(fmt::format("queries per second = {:.2f}", *summary.qps));
  if (summary.latency_stddev_ms) {
    lines.push_back(fmt::format("latency stddev = {:.3f} ms", *summary.latency_stddev_ms));
  }
  if (summary.initial_connection_time_ms) {
    lines.push_back(
        fmt::format("initial connection time = {:.3f} ms", *summary.initial_connection_time_ms));
  }
  lines.push_back(fmt::format("tps = {:.6f} (without initial connection time)", summary.tps));
  for (const auto& aborted : summary.aborted) lines.push_back(aborted);
  return lines;
}

std::optional<double> timeline_mean_tps(const model::Run& run) {
  double sum = 0;
  int intervals = 0;
  for (const auto& slice : run.timeline) {
    if (slice.loadgen && std::isfinite(slice.loadgen->tps)) {
      sum += slice.loadgen->tps;
      ++intervals;
    }
  }
  if (intervals == 0) return std::nullopt;
  return sum / intervals;
}

}  // namespace pgwaitprof::exporters::report_detail
