// What the report renderers share: the formatting of the summary's figures and of the run's
// header facts.
#include "exporters/render/report_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "model/kernel_check.h"
#include "model/setting_units.h"
#include "model/wait_events.h"

namespace pgwaitprof::exporters::report_detail {

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

std::string tps_headline_text(const model::TpsFigures& figures, const model::SteadyWindow& window) {
  std::string text;
  if (figures.whole_run) {
    text = fmt::format("{:.1f} ({}, {})", *figures.whole_run, figures.whole_run_from,
                       figures.whole_run_scope);
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
  if (!run.latency || !std::isfinite(run.latency->p50.count())) return "";
  const auto& latency = *run.latency;
  std::string text = fmt::format(
      "p50 {:.3f}, p95 {:.3f}, p99 {:.3f}, max {:.3f} ms ({} transactions", latency.p50.count(),
      latency.p95.count(), latency.p99.count(), latency.max.count(), latency.count);
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

namespace {

// What the traced source saw and lost: switches a second, the switch program's own time where
// the kernel keeps BPF statistics, and every failed read, full map and lost charge.
std::string trace_counts_text(const model::TraceCounts& counts, double traced_s) {
  std::string text;
  if (traced_s > 0) {
    text +=
        fmt::format(", {:.0f} switches a second", static_cast<double>(counts.switches) / traced_s);
  }
  if (counts.switch_ns > 0)
    text += fmt::format(" ({:.0f} ns each in the kernel)", counts.switch_ns);
  text += fmt::format(", {} processes tracked", counts.tracked);
  for (const auto& [count, what] :
       {std::pair{counts.failed_reads, "failed reads of a process's memory (charged to nobody)"},
        std::pair{counts.tracked_full, "forks not followed (tracked processes' map full)"},
        std::pair{counts.keys_full, "keys charged with query id 0 (keys' map full)"},
        std::pair{counts.lost, "charges lost"}}) {
    if (count > 0) text += fmt::format(", {} {}", count, what);
  }
  return text;
}

}  // namespace

std::string sampler_line(const model::SamplerInfo& sampler) {
  std::string line(to_string(sampler.source));
  if (sampler.requested == model::SamplerSource::kAuto && !sampler.source_reason.empty()) {
    line += " (auto: " + sampler.source_reason + ")";
  }
  if (sampler.source == model::SamplerSource::kTrace) {
    // Its profile's "snapshots" are microseconds of wall-clock time.
    const double traced_s = static_cast<double>(sampler.snapshots) * 1e-6;
    line += fmt::format(
        " (every switch of the server's processes, in the kernel; on-CPU time by wait event "
        "sampled at {:g} Hz per CPU), {:.1f} s traced",
        sampler.hz, traced_s);
    if (sampler.trace) line += trace_counts_text(*sampler.trace, traced_s);
    return line;
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
  if (sampler.snapshot_p99 > base::Milliseconds(0)) {
    line += fmt::format(", snapshot p99 {:.2f} ms", sampler.snapshot_p99.count());
  }
  if (sampler.hidden_backends > 0) {
    line += fmt::format(", {} hidden backends", sampler.hidden_backends);
  }
  return line;
}

namespace {

// The traced source's check: its client backends' time against the kernel's own accounting.
std::string trace_witness_line(const model::TraceWitness& witness) {
  const char* verdict = !model::trace_witness_judged(witness)  ? "too little to judge,"
                        : model::trace_witness_within(witness) ? "within"
                                                               : "OUTSIDE";
  return fmt::format(
      "client backends traced {:.3f} s on a CPU + {:.3f} s waiting for one, the kernel's "
      "{:.3f} s + {:.3f} s (schedstat of the same processes over the same reads): {} {:.0f} % "
      "({:+.2f} %)",
      witness.on_cpu_s, witness.runqueue_s, witness.kernel_on_cpu_s, witness.kernel_runqueue_s,
      verdict, 100 * model::kTraceWitnessTolerance, 100 * model::trace_witness_difference(witness));
}

}  // namespace

std::string kernel_check_line(const model::Run& run, const model::Summary& summary) {
  if (run.sampler.source == model::SamplerSource::kTrace && run.sampler.trace) {
    return trace_witness_line(run.sampler.trace->witness);
  }
  if (!model::takes_snapshots(run.sampler.source)) return "";
  const auto& check = summary.kernel_check;
  if (!check) {
    return run.sampler.source == model::SamplerSource::kActivity
               ? "none (no kernel view of a server on another host): the CPU share is a lower "
                 "bound"
               : "";
  }
  const char* verdict = !check->judged()  ? "too few intervals to judge, expected"
                        : check->within() ? "within"
                                          : "OUTSIDE";
  const std::string exited = check->exited_aas > 0
                                 ? fmt::format(" and {:.2f} of exited processes", check->exited_aas)
                                 : "";
  if (check->sampled_running_aas) {
    return fmt::format(
        "client backends sampled running (state R, waiting or not) {:.2f} AAS, as CPU {:.2f}, "
        "against the kernel's {:.2f} on a CPU + {:.2f} waiting for one{} (/proc): {} {:.2f} to "
        "{:.2f}",
        *check->sampled_running_aas, check->sampled_cpu_aas, check->on_cpu_aas, check->runqueue_aas,
        exited, verdict, check->lowest(), check->highest());
  }
  return fmt::format(
      "sampled CPU of client backends {:.2f} AAS against the kernel's {:.2f} on a CPU and {:.2f} "
      "waiting for one{} (schedstat): {} {:.2f} to {:.2f}",
      check->sampled_cpu_aas, check->on_cpu_aas, check->runqueue_aas, exited, verdict,
      check->lowest(), check->highest());
}

ThroughputColumns throughput_columns(const model::Run& run) {
  ThroughputColumns columns;
  for (const auto& slice : run.timeline) {
    if (slice.server_tps && run.throughput_source != "server") columns.server_tps = true;
    if (slice.loadgen && slice.loadgen->qps) columns.qps = true;
    if (slice.loadgen && slice.loadgen->latency_at_percentile) {
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
  if (summary.duration) lines.push_back(fmt::format("duration: {:g} s", summary.duration->count()));
  lines.push_back(
      fmt::format("number of transactions actually processed: {}", summary.transactions));
  const uint64_t attempted = summary.transactions + summary.failed;
  lines.push_back(fmt::format(
      "number of failed transactions: {} ({:.3f}%)", summary.failed,
      attempted > 0 ? 100.0 * static_cast<double>(summary.failed) / static_cast<double>(attempted)
                    : 0.0));
  if (std::isfinite(summary.latency_avg.count())) {
    lines.push_back(fmt::format("latency average = {:.3f} ms", summary.latency_avg.count()));
  }
  if (summary.latency_at_percentile) {
    lines.push_back(fmt::format("latency {:g}th percentile = {:.3f} ms", summary.latency_percentile,
                                summary.latency_at_percentile->count()));
  }
  if (summary.qps) lines.push_back(fmt::format("queries per second = {:.2f}", *summary.qps));
  if (summary.latency_stddev) {
    lines.push_back(fmt::format("latency stddev = {:.3f} ms", summary.latency_stddev->count()));
  }
  if (summary.initial_connection_time) {
    lines.push_back(fmt::format("initial connection time = {:.3f} ms",
                                summary.initial_connection_time->count()));
  }
  lines.push_back(fmt::format("tps = {:.6f} (without initial connection time)", summary.tps));
  for (const auto& aborted : summary.aborted) lines.push_back(aborted);
  return lines;
}

}  // namespace pgwaitprof::exporters::report_detail
