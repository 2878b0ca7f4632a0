// The run's summary: the steady window and tps once, the profile tables (model/
// profile_tables.cc), the timeline rows, and the kernel's figures.
#include "model/summary.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/wait_events.h"

namespace pgwaitprof::model {

namespace {

double ratio(double part, double whole) { return whole > 0 ? part / whole : 0; }

// Whether the interval's middle lies inside the stall: half an interval of tolerance, as stall
// bounds are sums of doubles.
bool in_stall(const TimelineSlice& slice, const Stall& stall) {
  const auto middle = slice.start + slice.duration / 2;
  return middle > stall.start && middle < stall.start + stall.duration;
}

TimelineRow timeline_row(const Run& run, const TimelineSlice& slice) {
  TimelineRow row;
  row.start = slice.start;
  row.duration = slice.duration;
  row.snapshots = slice.profile.snapshots();
  row.loadgen = slice.loadgen ? &*slice.loadgen : nullptr;
  row.cpu = slice.cpu ? &*slice.cpu : nullptr;
  row.latency = slice.latency ? &*slice.latency : nullptr;
  if (const auto kernel = slice.kernel.find(kClientBackends);
      kernel != slice.kernel.end() && kernel->second.covered > base::Seconds(0)) {
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
    if (!is_idle(key)) by_name[display_name(key)] += count;
  }
  uint64_t best = 0;
  for (const auto& [name, count] : by_name) {
    if (count > best) {
      best = count;
      row.dominant_wait = name;
    }
  }
  for (const auto& stall : run.stalls) row.stalled = row.stalled || in_stall(slice, stall);
  return row;
}

std::optional<double> mean_interval_tps(const Run& run) {
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

// Whole-run figures: active sessions per wait class, the most sampled key, Lock waits.
void whole_run_figures(const Run& run, Summary& summary) {
  const auto snapshots = static_cast<double>(run.profile.snapshots());
  summary.active_sessions = ratio(static_cast<double>(run.profile.total(false)), snapshots);
  if (snapshots > 0) {
    for (const auto& [wait_class, count] : run.profile.by_wait_class()) {
      summary.class_aas[wait_class] = static_cast<double>(count) / snapshots;
    }
  }
  uint64_t most = 0;
  uint64_t lock = 0;
  for (const auto& [key, count] : run.profile.counts()) {
    if (is_idle(key)) continue;
    if (key.wait_event_type == "Lock") lock += count;
    if (count > most) {
      most = count;
      summary.top_wait = display_name(key);
    }
  }
  summary.lock_wait_aas = ratio(static_cast<double>(lock), snapshots);
  for (const auto& [key, count] : run.profile.counts()) {
    if (count == 0 || (!summary.options.include_idle && is_idle(key))) continue;
    std::vector<std::string> stack = {key.backend_type, key.wait_event_type};
    if (key.wait_event_type != kCpu) stack.push_back(key.wait_event);
    summary.wait_stacks[stack] += count;
  }
  for (const auto& [group, time] : run.kernel) {
    summary.kernel[group] = {time.on_cpu_aas(), time.runqueue_aas()};
  }
}

std::vector<CpuFunctionShare> function_shares(const std::vector<CpuFunction>& functions,
                                              uint64_t total, size_t limit,
                                              const CpuProfile& profile) {
  std::vector<CpuFunctionShare> shares;
  for (const auto& function : functions) {
    if (shares.size() >= limit) break;
    shares.push_back({function.name, function.kernel, function.samples,
                      ratio(static_cast<double>(function.samples), static_cast<double>(total)),
                      cpu_aas(function.samples, profile)});
  }
  return shares;
}

CpuGroupFigures group_figures(const std::string& name, const CpuGroup& group,
                              const CpuProfile& profile) {
  CpuGroupFigures figures;
  figures.group = name;
  figures.samples = group.samples;
  figures.aas = cpu_aas(group.samples, profile);
  uint64_t kernel = 0;
  for (const auto& function : group.self) kernel += function.kernel ? function.samples : 0;
  figures.kernel_share = ratio(static_cast<double>(kernel), static_cast<double>(group.samples));
  figures.top = function_shares(group.self, group.samples, kCpuTopFunctions, profile);
  return figures;
}

// The stalls whose sampled CPU share rose above the run's, with the functions of their
// intervals.
std::vector<StallCpu> stall_functions(const Run& run, const CpuProfile& profile) {
  const auto cpu_share = [](const Profile& counts) {
    const auto classes = counts.by_wait_class();  // non-idle
    const auto cpu = classes.find(kCpu);
    return cpu == classes.end()
               ? 0.0
               : ratio(static_cast<double>(cpu->second), static_cast<double>(counts.total(false)));
  };
  const double run_share = cpu_share(run.profile);
  std::vector<StallCpu> stalls;
  for (size_t index = 0; index < run.stalls.size(); ++index) {
    const auto& stall = run.stalls[index];
    Profile waits;
    std::map<std::string, uint64_t> self;
    StallCpu figures{index, 0, run_share, 0, {}};
    for (size_t slice = 0; slice < run.timeline.size(); ++slice) {
      const auto& interval = run.timeline[slice];
      if (!in_stall(interval, stall)) continue;
      waits.merge(interval.profile);
      const auto found = profile.intervals.find(slice);
      if (found == profile.intervals.end()) continue;
      figures.samples += found->second.client_samples;
      for (const auto& function : found->second.top) {
        self[function_frame(function)] += function.samples;
      }
    }
    figures.cpu_share = cpu_share(waits);
    if (figures.cpu_share <= run_share || figures.samples == 0) continue;
    figures.top = function_shares(top_functions(self, kStallTopFunctions), figures.samples,
                                  kStallTopFunctions, profile);
    stalls.push_back(std::move(figures));
  }
  return stalls;
}

std::optional<CpuFigures> cpu_figures(const Run& run) {
  if (!run.cpu_profile) return std::nullopt;
  const CpuProfile& profile = *run.cpu_profile;
  CpuFigures figures;
  figures.hz = profile.hz;
  figures.cpus = profile.cpus;
  figures.samples = profile.samples;
  figures.lost = profile.lost;
  for (const auto& [name, group] : profile.groups) {
    if (name == kCpuClientBackends) {
      figures.clients = group_figures(name, group, profile);
      for (const auto& [stack, count] : group.folded) {
        std::vector<std::string> frames;
        for (size_t from = 0; from <= stack.size();) {
          const size_t end = std::min(stack.find(';', from), stack.size());
          frames.push_back(stack.substr(from, end - from));
          from = end + 1;
        }
        figures.stacks[frames] += count;
      }
    } else if (cpu_aas(group.samples, profile) >= kBusyBackgroundAas &&
               (!figures.background || group.samples > figures.background->samples)) {
      figures.background = group_figures(name, group, profile);
    }
  }
  figures.clients.group = kCpuClientBackends;
  figures.stalls = stall_functions(run, profile);
  return figures;
}

}  // namespace

std::vector<TimelineRow> timeline_rows(const Run& run) {
  std::vector<TimelineRow> rows;
  rows.reserve(run.timeline.size());
  for (const auto& slice : run.timeline) rows.push_back(timeline_row(run, slice));
  return rows;
}

Summary summarize(const Run& run, const SummaryOptions& options) {
  Summary summary;
  summary.options = options;
  summary.window = steady_window(run, options.trim);
  summary.tps = tps_figures(run, summary.window);
  summary.timeline_mean_tps = mean_interval_tps(run);
  auto tables = profile_tables(run, summary.window, options);
  summary.profile = std::move(tables.profile);
  summary.waits = std::move(tables.waits);
  summary.kernel_check = kernel_check(run);
  summary.timeline = timeline_rows(run);
  whole_run_figures(run, summary);
  summary.cpu = cpu_figures(run);
  return summary;
}

}  // namespace pgwaitprof::model
