// The machine-readable outputs of a run: report.json (the model's codec plus the summary the
// reports state), profile.csv and timeline.csv for spreadsheets and pandas, and folded stacks
// for flame graphs. The text and Markdown reports live in report_render.cc.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "exporters/render/report_common.h"
#include "exporters/render/report_render.h"
#include "exporters/render/report_sections.h"
#include "exporters/render/report_traced.h"
#include "exporters/render/text_format.h"
#include "model/summary.h"

namespace pgwaitprof::exporters {

using namespace report_detail;
using namespace text_format;

namespace {

nlohmann::json estimate_json(const model::MeanEstimate& estimate) {
  auto number = [](double value) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json();
  };
  return {
      {"mean", estimate.mean},
      {"standard_error", estimate.reliable ? number(estimate.standard_error) : nlohmann::json()},
      {"reliable", estimate.reliable},
      {"method", estimate.method}};
}

nlohmann::json functions_json(const std::vector<model::CpuFunctionShare>& functions) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& function : functions) {
    list.push_back({{"function", function.name},
                    {"kernel", function.kernel},
                    {"samples", function.samples},
                    {"share", function.share},
                    {"aas", function.aas}});
  }
  return list;
}

nlohmann::json group_json(const model::CpuGroupFigures& group) {
  return {{"group", group.group},
          {"samples", group.samples},
          {"aas", group.aas},
          {"kernel_share", group.kernel_share},
          {"top", functions_json(group.top)}};
}

// Where the CPU went, as the reports state it.
nlohmann::json cpu_json(const model::CpuFigures& cpu) {
  nlohmann::json stalls = nlohmann::json::array();
  for (const auto& stall : cpu.stalls) {
    stalls.push_back({{"stall", stall.stall},
                      {"cpu_share", stall.cpu_share},
                      {"run_cpu_share", stall.run_share},
                      {"samples", stall.samples},
                      {"top", functions_json(stall.top)}});
  }
  return {{"hz", cpu.hz},
          {"cpus", cpu.cpus},
          {"samples", cpu.samples},
          {"lost", cpu.lost},
          {"clients", group_json(cpu.clients)},
          {"background", cpu.background ? group_json(*cpu.background) : nlohmann::json()},
          {"stalls", std::move(stalls)}};
}

// One row of the summary's wait profile, with its traced durations and kernel split.
nlohmann::json wait_row_json(const ProfileRow& row) {
  auto error = [&](double value) {
    return row.stat.errors_reliable && std::isfinite(value) ? nlohmann::json(value)
                                                            : nlohmann::json();
  };
  nlohmann::json wait = {{"wait", row.label},       {"count", row.stat.count},
                         {"share", row.stat.share}, {"share_stderr", error(row.stat.share_stderr)},
                         {"aas", row.stat.aas},     {"aas_stderr", error(row.stat.aas_stderr)}};
  if (const auto& traced = row.traced) {
    // The traced source: exact time and waits, their durations (p50/p99 from the buckets).
    wait["traced"] = {{"exact", true},
                      {"time_s", static_cast<double>(row.stat.count) * 1e-6},
                      {"waits", traced->waits},
                      {"blocked_s", traced->blocked_s},
                      {"runqueue_s", traced->runqueue_s},
                      {"on_cpu_s_sampled", traced->on_cpu_s},
                      {"mean_s", traced->mean_s()},
                      {"p50_s", traced->percentile_s(0.5)},
                      {"p99_s", traced->percentile_s(0.99)},
                      {"max_s", traced->longest_s()}};
  }
  if (const auto& split = row.cpu_split) {
    wait["kernel_split"] = {{"on_cpu_aas", split->on_cpu_aas},
                            {"runqueue_aas", split->runqueue_aas}};
  }
  return wait;
}

// The sampled figures against the kernel's (model/kernel_check.h).
nlohmann::json kernel_check_json(const model::KernelCheck& check) {
  return {
      {"sampled_cpu_aas", check.sampled_cpu_aas},
      {"sampled_stderr", std::isfinite(check.sampled_stderr) ? nlohmann::json(check.sampled_stderr)
                                                             : nlohmann::json()},
      {"intervals", check.intervals},
      {"judged", check.judged()},
      {"on_cpu_aas", check.on_cpu_aas},
      {"runqueue_aas", check.runqueue_aas},
      {"exited_aas", check.exited_aas},
      {"sampled_running_aas",
       check.sampled_running_aas ? nlohmann::json(*check.sampled_running_aas) : nlohmann::json()},
      {"lowest", check.lowest()},
      {"highest", check.highest()},
      {"within", check.within()}};
}

// What the text and HTML reports state with their errors, for readers of report.json: the
// run's summary with the default options (model/summary.h; run_from_json ignores it).
nlohmann::json summary_json(const model::Summary& summary) {
  const ProfileTable& table = summary.profile;
  nlohmann::json waits = nlohmann::json::array();
  for (const auto& row : table.rows) waits.push_back(wait_row_json(row));
  nlohmann::json json = {{"excluded_warmup_s", summary.window.excluded.count()},
                         {"error_method", model::error_method_note()},
                         {"waits", std::move(waits)},
                         {"kernel_check", nullptr}};
  if (const auto& check = summary.kernel_check) json["kernel_check"] = kernel_check_json(*check);
  if (const auto& cpu = summary.cpu) json["cpu"] = cpu_json(*cpu);
  const auto& figures = summary.tps;
  if (const auto& tps = figures.steady) {
    json["tps"] = estimate_json(*tps);
    if (tps->reliable) json["tps"]["ci95_half_width"] = tps->half_width(0.95);
    json["tps"]["from_s"] = figures.steady_from.count();
    json["tps"]["to_s"] = figures.steady_to.count();
  }
  if (figures.whole_run) {
    json["whole_run_tps"] = {{"tps", *figures.whole_run}, {"from", figures.whole_run_from}};
  }
  return json;
}

}  // namespace

std::string render_json(const model::Run& run) {
  auto json = model::to_json(run);
  json["summary"] = summary_json(model::summarize(run));
  return base::json_text(json, 2) + "\n";
}

std::span<const store::RunFile> run_directory_files() {
  static const store::RunFile files[] = {
      {"report.txt", [](const model::Run& r) { return render_text(r); }},
      {"report.md", [](const model::Run& r) { return render_markdown(r); }},
      {"profile.csv", [](const model::Run& r) { return render_profile_csv(r); }},
      {"timeline.csv", &render_timeline_csv},
      {"waits.folded", [](const model::Run& r) { return render_folded(r); }},
      {"report.html", [](const model::Run& r) { return render_html(r); }},
      {"report.json", &render_json},
  };
  return files;
}

namespace {

// flamegraph.pl and speedscope split frames on ';' and the count off at the last space; a
// line break, which would end the stack, is written out by text_escape.
std::string folded_frame(std::string_view name) {
  std::string frame = name.empty() ? "-" : text_escape(name);
  std::replace(frame.begin(), frame.end(), ';', '_');
  return frame;
}

}  // namespace

std::string render_profile_csv(const model::Run& run, const RenderOptions& options) {
  // profile.csv is data for a spreadsheet or pandas: every wait key is kept, whatever --top
  // says for the tables. Only query ids, which are unbounded, keep top-N with an "other" row.
  RenderOptions csv_options = options;
  if (options.by != GroupBy::kQueryId) csv_options.top = 0;
  csv_options.full_keys = true;
  const ProfileTable table = model::summarize(run, csv_options).profile;
  std::vector<std::string> header = table.columns;
  for (const char* column : {"count", "share", "aas", "aas_stderr"}) header.emplace_back(column);
  // A traced profile's count is microseconds: its time, waits and durations follow.
  const bool traced = run.profile.exact();
  if (traced) {
    for (auto& column : traced_csv_columns()) header.push_back(std::move(column));
  }
  std::string out = csv_row(header);
  for (const auto& row : table.rows) {
    std::vector<std::string> fields = row.fields;
    fields.push_back(fmt::format("{}", row.stat.count));
    fields.push_back(fmt::format("{:.6f}", row.stat.share));
    fields.push_back(fmt::format("{:.4f}", row.stat.aas));
    const auto error = error_text(row.stat.aas_stderr, row.stat.errors_reliable, 4);
    fields.push_back(error == "-" ? "" : error);
    if (traced) {
      for (auto& field : traced_csv_fields(row)) fields.push_back(std::move(field));
    }
    out += csv_row(fields);
  }
  return out;
}

namespace {

// One interval's line of timeline.csv: "" where there is no figure.
std::vector<std::string> timeline_csv_fields(const TimelineRow& row,
                                             const ThroughputColumns& extra) {
  std::vector<std::string> fields = {format_seconds(row.start.count()),
                                     format_seconds(row.duration.count())};
  if (row.loadgen) {
    fields.push_back(format_optional(row.loadgen->tps, 1));
    fields.push_back(format_optional(row.loadgen->latency_avg.count(), 3));
    fields.push_back(format_optional(row.loadgen->latency_stddev.count(), 3));
    fields.push_back(fmt::format("{}", row.loadgen->failed));
  } else {
    fields.insert(fields.end(), 4, "");
  }
  fields.push_back(fmt::format("{}", row.snapshots));
  for (double aas : row.aas) fields.push_back(fmt::format("{:.3f}", aas));
  fields.push_back(row.dominant_wait);
  if (row.cpu) {
    fields.push_back(fmt::format("{:.1f}", row.cpu->user_pct));
    fields.push_back(fmt::format("{:.1f}", row.cpu->system_pct));
    fields.push_back(fmt::format("{:.1f}", row.cpu->iowait_pct));
    fields.push_back(fmt::format("{:.1f}", row.cpu->idle_pct));
    fields.push_back(fmt::format("{:.2f}", row.cpu->loadgen_cores));
  } else {
    fields.insert(fields.end(), 5, "");
  }
  fields.push_back(row.background);
  fields.push_back(row.sampler_outage ? "1" : "0");
  fields.push_back(row.latency ? format_optional(row.latency->p99.count(), 3) : "");
  fields.push_back(row.latency ? format_optional(row.latency->max.count(), 3) : "");
  fields.push_back(row.oncpu_aas ? fmt::format("{:.3f}", *row.oncpu_aas) : "");
  fields.push_back(row.runq_aas ? fmt::format("{:.3f}", *row.runq_aas) : "");
  if (extra.server_tps || extra.qps || !extra.percentile.empty()) {
    fields.push_back(row.server_tps ? format_optional(*row.server_tps, 1) : "");
    fields.push_back(row.loadgen && row.loadgen->qps ? format_optional(*row.loadgen->qps, 1) : "");
    fields.push_back(row.loadgen && row.loadgen->latency_at_percentile
                         ? format_optional(row.loadgen->latency_at_percentile->count(), 3)
                         : "");
  }
  return fields;
}

}  // namespace

std::string render_timeline_csv(const model::Run& run) {
  std::string out = csv_row({"start_s",
                             "duration_s",
                             "tps",
                             "latency_avg_ms",
                             "latency_stddev_ms",
                             "failed",
                             "snapshots",
                             "aas_cpu",
                             "aas_lwlock",
                             "aas_lock",
                             "aas_io",
                             "aas_ipc",
                             "aas_client",
                             "aas_other",
                             "dominant_wait",
                             "cpu_user_pct",
                             "cpu_system_pct",
                             "cpu_iowait_pct",
                             "cpu_idle_pct",
                             "loadgen_cores",
                             "background",
                             "sampler_outage",
                             "latency_p99_ms",
                             "latency_max_ms",
                             "oncpu_aas",
                             "runq_aas"});
  // Columns only some runs have come last, so that older readers keep their columns.
  const auto extra = throughput_columns(run);
  if (extra.server_tps || extra.qps || !extra.percentile.empty()) {
    out.pop_back();  // the header's line end
    out += ",server_tps,qps,latency_percentile_ms\n";
  }
  for (const auto& row : model::timeline_rows(run)) out += csv_row(timeline_csv_fields(row, extra));
  return out;
}

std::string render_folded(const model::Run& run, const RenderOptions& options) {
  // Keyed by the frames as written: escaping may merge two stacks.
  std::map<std::string, uint64_t> stacks;
  for (const auto& [frames, count] : model::summarize(run, options).wait_stacks) {
    std::string stack;
    for (const auto& frame : frames) stack += (stack.empty() ? "" : ";") + folded_frame(frame);
    stacks[stack] += count;
  }
  std::string out;
  for (const auto& [stack, count] : stacks) out += fmt::format("{} {}\n", stack, count);
  return out;
}

}  // namespace pgwaitprof::exporters
