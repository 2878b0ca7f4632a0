#include "exporters/render/timeline_table.h"

#include <fmt/format.h>

#include "exporters/render/report_common.h"
#include "exporters/render/report_facts.h"

namespace pgwaitprof::exporters::report_detail {
namespace {

// The load generator's figures of an interval, "-" where it said nothing.
void add_loadgen_cells(std::vector<std::string>& cells, const TimelineRow& row) {
  if (!row.loadgen) {
    cells.insert(cells.end(), 4, "-");
    return;
  }
  cells.push_back(number_or_dash(row.loadgen->tps, 1));
  cells.push_back(number_or_dash(row.loadgen->latency_avg.count(), 3));
  cells.push_back(number_or_dash(row.loadgen->latency_stddev.count(), 3));
  cells.push_back(fmt::format("{}", row.loadgen->failed));
}

// The host's CPU of an interval and the load generator's cores, "-" where it was not read.
void add_cpu_cells(std::vector<std::string>& cells, const TimelineRow& row) {
  if (!row.cpu) {
    cells.insert(cells.end(), 5, "-");
    return;
  }
  for (double pct :
       {row.cpu->user_pct, row.cpu->system_pct, row.cpu->iowait_pct, row.cpu->idle_pct}) {
    cells.push_back(fmt::format("{:.1f}", pct));
  }
  cells.push_back(fmt::format("{:.2f}", row.cpu->loadgen_cores));
}

// The columns only some runs have: the extra throughput columns, the tail per interval (when
// pgbench's transaction log was read), and the client backends on a CPU and waiting for one
// (measured, when the server is on this host).
struct OptionalColumns {
  ThroughputColumns extra;
  bool tails = false;
  bool kernel = false;
};

OptionalColumns optional_columns(const model::Run& run) {
  return {throughput_columns(run), run.latency.has_value(), !run.kernel.empty()};
}

// The columns: those of every run, with the optional ones after the load generator's.
std::vector<TimelineTable::Column> timeline_columns(const OptionalColumns& optional) {
  std::vector<TimelineTable::Column> columns;
  auto add = [&](std::string name, size_t width) {
    columns.push_back({name, name, true, false, width});
  };
  add("t s", 6);
  add("tps", 9);
  add("lat ms", 8);
  add("stddev", 8);
  add("fail", 5);
  const auto& extra = optional.extra;
  if (extra.server_tps) add("srv tps", 9);
  if (extra.qps) add("qps", 9);
  if (!extra.percentile.empty()) add(extra.percentile, 8);
  if (optional.tails) {
    add("p99 ms", 8);
    add("max ms", 8);
  }
  if (optional.kernel) {
    add("oncpu", 6);
    add("runq", 6);
  }
  for (const auto& wait_class : model::kTimelineClasses) {
    columns.push_back({std::string(wait_class), std::string(wait_class), true, true, 6});
  }
  columns.push_back({"dominant wait", "dominant wait", false, false, 0});
  for (const char* name : {"usr%", "sys%", "iow%", "idle%"}) add(name, 5);
  columns.push_back({"lg", "lg cores", true, false, 5});
  columns.push_back({"bg", "bg", false, false, 0});
  return columns;
}

}  // namespace

TimelineTable timeline_table(const model::Run& run, const std::vector<TimelineRow>& rows) {
  TimelineTable table;
  const auto optional = optional_columns(run);
  table.columns = timeline_columns(optional);
  const auto& extra = optional.extra;
  for (const auto& row : rows) {
    std::vector<std::string> cells = {format_seconds(row.start.count())};
    add_loadgen_cells(cells, row);
    if (extra.server_tps) cells.push_back(server_tps_cell(row));
    if (extra.qps) {
      cells.push_back(row.loadgen && row.loadgen->qps ? number_or_dash(*row.loadgen->qps, 1) : "-");
    }
    if (!extra.percentile.empty()) {
      cells.push_back(row.loadgen && row.loadgen->latency_at_percentile
                          ? number_or_dash(row.loadgen->latency_at_percentile->count(), 3)
                          : "-");
    }
    if (optional.tails) {
      cells.push_back(row.latency ? number_or_dash(row.latency->p99.count(), 3) : "-");
      cells.push_back(row.latency ? number_or_dash(row.latency->max.count(), 3) : "-");
    }
    if (optional.kernel) {
      cells.push_back(row.oncpu_aas ? fmt::format("{:.2f}", *row.oncpu_aas) : "-");
      cells.push_back(row.runq_aas ? fmt::format("{:.2f}", *row.runq_aas) : "-");
    }
    for (double aas : row.aas) cells.push_back(fmt::format("{:.2f}", aas));
    cells.push_back(row.dominant_wait.empty() ? "-" : row.dominant_wait);
    add_cpu_cells(cells, row);
    cells.push_back(row.background);
    table.rows.push_back({std::move(cells), row.stalled, row.sampler_outage});
  }
  return table;
}

}  // namespace pgwaitprof::exporters::report_detail
