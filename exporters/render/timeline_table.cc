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

// The columns: those of every run, then the throughput, tail and kernel columns the run has.
std::vector<TimelineTable::Column> timeline_columns(const model::Run& run) {
  std::vector<TimelineTable::Column> columns;
  auto add = [&](std::string name, size_t width) {
    columns.push_back({name, name, true, false, width});
  };
  add("t s", 6);
  add("tps", 9);
  add("lat ms", 8);
  add("stddev", 8);
  add("fail", 5);
  const auto extra = throughput_columns(run);
  if (extra.server_tps) add("srv tps", 9);
  if (extra.qps) add("qps", 9);
  if (!extra.percentile.empty()) add(extra.percentile, 8);
  // The tail per interval, when pgbench's transaction log was read.
  if (run.latency) {
    add("p99 ms", 8);
    add("max ms", 8);
  }
  // Client backends on a CPU and waiting for one, measured, when the server is on this host.
  if (!run.kernel.empty()) {
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
  table.columns = timeline_columns(run);
  const auto extra = throughput_columns(run);
  const bool tails = run.latency.has_value();  // the tail per interval, from pgbench's log
  const bool kernel = !run.kernel.empty();     // the server is on this host
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
    if (tails) {
      cells.push_back(row.latency ? number_or_dash(row.latency->p99.count(), 3) : "-");
      cells.push_back(row.latency ? number_or_dash(row.latency->max.count(), 3) : "-");
    }
    if (kernel) {
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
