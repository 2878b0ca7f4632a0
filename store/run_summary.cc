// Run summaries from reports, and their JSON form in the index.
#include "store/run_summary.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "model/summary.h"

namespace pgwaitprof::store {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// NaN is not JSON: stored as null, read back as NaN.
nlohmann::json number(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}
double number_of(const nlohmann::json& json, const char* key) {
  const auto found = json.find(key);
  return found == json.end() || !found->is_number() ? kNaN : found->get<double>();
}

std::string command_of(const model::Run& run, const std::filesystem::path& dir) {
  const std::string own = dir.lexically_normal().string() + "/";
  std::string command;
  for (const auto& word : run.loadgen_argv) {
    if (word.starts_with("--log-prefix=")) continue;
    if (!command.empty()) command += ' ';
    command += word.starts_with(own) ? word.substr(own.size()) : word;
  }
  return command;
}

}  // namespace

std::string short_server_version(const std::string& version) {
  const auto first = version.find(' ');
  if (first == std::string::npos) return version;
  return version.substr(0, version.find(' ', first + 1));
}

bool newer_first(const RunSummary& a, const RunSummary& b) {
  if (a.started_at != b.started_at) return a.started_at > b.started_at;
  return a.id > b.id;
}

std::string matrix_of_dir(const std::filesystem::path& run_dir) {
  const auto parent = run_dir.lexically_normal().parent_path();
  if (parent.filename() == "runs" && parent.parent_path().parent_path().filename() == "matrix") {
    return parent.parent_path().filename().string();
  }
  return "";
}

std::optional<std::filesystem::path> data_dir_of(const std::filesystem::path& run_dir) {
  const auto runs = run_dir.lexically_normal().parent_path();
  if (runs.filename() != "runs") return std::nullopt;
  if (!matrix_of_dir(run_dir).empty()) return runs.parent_path().parent_path().parent_path();
  return runs.parent_path();
}

RunSummary summarize(const model::Run& run, const std::filesystem::path& dir) {
  RunSummary summary;
  summary.id = run.id;
  summary.dir = dir.lexically_normal().string();
  summary.matrix = matrix_of_dir(dir);
  summary.label = run.label;
  summary.tags = run.tags;
  summary.started_at = run.started_at;
  summary.status = std::string(to_string(run.status));
  summary.error = run.error;
  summary.workload = run.workload;
  summary.variant = run.variant;
  summary.clients = run.clients;
  summary.duration_s = run.duration.count();
  // The figures as the run's report states them.
  const model::Summary figures = model::summarize(run);
  summary.tps_half_width = kNaN;
  if (const auto& tps = figures.tps.steady) {
    summary.tps = tps->mean;
    // As the report states it: no interval from too few independent batches.
    if (tps->reliable && std::isfinite(tps->standard_error)) {
      summary.tps_half_width = tps->half_width();
    }
  } else if (run.loadgen) {
    summary.tps = run.loadgen->tps;
  }
  if (run.loadgen && run.loadgen->tps > 0) summary.whole_run_tps = run.loadgen->tps;
  summary.latency_ms = run.loadgen ? run.loadgen->latency_avg.count() : kNaN;
  summary.p99_ms = run.latency ? run.latency->p99.count() : kNaN;
  summary.aas = figures.active_sessions;
  summary.class_aas = figures.class_aas;
  summary.top_wait = figures.top_wait;
  // Shares of the steady state's non-idle samples, as the report's share column states them.
  for (const auto& row : figures.waits.rows) summary.wait_shares[row.label] = row.stat.share;
  summary.command = command_of(run, dir);
  summary.host = run.environment.hostname;
  summary.server_version = short_server_version(run.environment.server_version);
  summary.server_version_num = run.environment.server_version_num;
  summary.kernel = run.environment.kernel;
  for (const auto& setting : run.environment.settings) {
    summary.settings[setting.name] = setting.value;
  }
  summary.pgwaitprof_version = run.environment.pgwaitprof_version;
  return summary;
}

nlohmann::json to_json(const RunSummary& s) {
  return {{"id", s.id},
          {"dir", s.dir},
          {"matrix", s.matrix},
          {"label", s.label},
          {"tags", s.tags},
          {"started_at", s.started_at},
          {"status", s.status},
          {"error", s.error},
          {"workload", s.workload},
          {"variant", s.variant},
          {"clients", s.clients},
          {"duration_s", s.duration_s},
          {"tps", number(s.tps)},
          {"tps_half_width", number(s.tps_half_width)},
          {"whole_run_tps", number(s.whole_run_tps)},
          {"latency_ms", number(s.latency_ms)},
          {"p99_ms", number(s.p99_ms)},
          {"aas", s.aas},
          {"top_wait", s.top_wait},
          {"wait_shares", s.wait_shares},
          {"command", s.command},
          {"class_aas", s.class_aas},
          {"host", s.host},
          {"server_version", s.server_version},
          {"server_version_num", s.server_version_num},
          {"kernel", s.kernel},
          {"settings", s.settings},
          {"pgwaitprof_version", s.pgwaitprof_version},
          {"report_mtime_ns", s.report_mtime_ns}};
}

RunSummary summary_from_json(const nlohmann::json& json) {
  RunSummary s;
  s.id = json.value("id", "");
  s.dir = json.value("dir", "");
  s.matrix = json.value("matrix", "");
  s.label = json.value("label", "");
  s.tags = json.value("tags", std::map<std::string, std::string>{});
  s.started_at = json.value("started_at", "");
  s.status = json.value("status", "");
  s.error = json.value("error", "");
  s.workload = json.value("workload", "");
  s.variant = json.value("variant", "");
  s.clients = json.value("clients", 0);
  s.duration_s = json.value("duration_s", 0.0);
  s.tps = number_of(json, "tps");
  s.tps_half_width = number_of(json, "tps_half_width");
  s.whole_run_tps = number_of(json, "whole_run_tps");
  s.latency_ms = number_of(json, "latency_ms");
  s.p99_ms = number_of(json, "p99_ms");
  s.aas = json.value("aas", 0.0);
  s.top_wait = json.value("top_wait", "");
  s.wait_shares = json.value("wait_shares", std::map<std::string, double>{});
  s.command = json.value("command", "");
  s.class_aas = json.value("class_aas", std::map<std::string, double>{});
  s.host = json.value("host", "");
  s.server_version = json.value("server_version", "");
  s.server_version_num = json.value("server_version_num", 0);
  s.kernel = json.value("kernel", "");
  s.settings = json.value("settings", std::map<std::string, std::string>{});
  s.pgwaitprof_version = json.value("pgwaitprof_version", "");  // none before version 6
  s.report_mtime_ns = json.value("report_mtime_ns", 0LL);
  return s;
}

}  // namespace pgwaitprof::store
